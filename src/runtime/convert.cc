#include "tpusim/runtime/convert.h"

#include "tpusim/frontend/hlo_printer.h"
#include "tpusim/ir/printer.h"
#include "tpusim/runtime/load.h"

namespace tpusim::runtime {

StatusOr<std::string> ConvertProgram(const std::string& path, TextFormat format) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, LoadModule(path));
  if (format == TextFormat::kHlo) return frontend::PrintHlo(*module);
  return ir::PrintModule(*module);
}

}  // namespace tpusim::runtime
