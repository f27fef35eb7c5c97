// The verifier: checks a module against the op table's shape rules, plus the
// rules that span ops (function signatures, calls, returns). Run after
// parsing and after every compiler pass.
#ifndef TPUSIM_VERIFY_VERIFIER_H_
#define TPUSIM_VERIFY_VERIFIER_H_

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::verify {

// OK, or the first problem found with its source location. An op that
// tpusim does not know is kUnimplemented; a broken rule is kInvalidArgument.
// Ops with dynamic dimensions (ir::kDynamicDim) in their types skip their
// shape rule: refine-shapes sizes them and the pipeline verifies again.
Status VerifyModule(const ir::Module& module);

}  // namespace tpusim::verify

#endif  // TPUSIM_VERIFY_VERIFIER_H_
