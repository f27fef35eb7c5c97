// Writes a tpusim IR module as XLA HLO text, the format ParseHlo reads.
#ifndef TPUSIM_FRONTEND_HLO_PRINTER_H_
#define TPUSIM_FRONTEND_HLO_PRINTER_H_

#include <string>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::frontend {

// The module as XLA dumps it: one computation per function (callees first,
// the entry last as ENTRY %main) and per region HLO spells as a computation,
// tuples where StableHLO has variadic operands and results. Names follow the
// IR's structure, so printing, ParseHlo and printing again gives the same
// text. kUnimplemented names the first op without an HLO form and its location.
StatusOr<std::string> PrintHlo(const ir::Module& module);

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_HLO_PRINTER_H_
