// Prints the IR as MLIR text in the generic op form, for debugging and for
// handing programs to other tools.
#ifndef TPUSIM_IR_PRINTER_H_
#define TPUSIM_IR_PRINTER_H_

#include <string>

#include "tpusim/ir/ir.h"

namespace tpusim::ir {

// The module as `module @name attributes {...} { func.func ... }` with every
// op in the generic form (`%3 = "stablehlo.add"(%1, %2) : (...) -> ...`).
// Values are renamed by position (%argN, %N), so printing, parsing and
// printing again gives the same text. sdy meshes kept in the module's
// "sdy.meshes" attribute print as `sdy.mesh` ops.
std::string PrintModule(const Module& module);

// One function in the same form (without the enclosing module).
std::string PrintFunction(const Function& function);

}  // namespace tpusim::ir

#endif  // TPUSIM_IR_PRINTER_H_
