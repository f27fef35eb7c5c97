#include "tpusim/compiler/pass.h"

namespace tpusim::compiler {

// Placeholder until the pass lands: leaves the module unchanged.
Status RunInlining(ir::Module&, PassContext&) { return Status::Ok(); }

}  // namespace tpusim::compiler
