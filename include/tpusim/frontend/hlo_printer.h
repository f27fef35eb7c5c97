// Writes a tpusim IR module as XLA HLO text, the format ParseHlo reads.
#ifndef TPUSIM_FRONTEND_HLO_PRINTER_H_
#define TPUSIM_FRONTEND_HLO_PRINTER_H_

#include <string>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::frontend {

// The module as `HloModule name` followed by one computation per function
// (the entry function, @main or the only public one, as ENTRY) and per
// region that HLO spells as a computation (reduce bodies, while condition
// and body, fusion bodies). kUnimplemented names the first op that has no
// HLO form, with its location.
StatusOr<std::string> PrintHlo(const ir::Module& module);

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_HLO_PRINTER_H_
