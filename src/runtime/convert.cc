#include "tpusim/runtime/convert.h"

#include "runtime/arg_shapes.h"
#include "runtime/onnx_program.h"
#include "tpusim/compiler/refine_shapes.h"
#include "tpusim/frontend/hlo/printer.h"
#include "tpusim/ir/printer.h"
#include "tpusim/runtime/load.h"

namespace tpusim::runtime {

StatusOr<std::string> ConvertProgram(const std::string& path, TextFormat format,
                                     const std::vector<std::string>& arg_shapes) {
  if (IsOnnxFile(path)) {
    // Lowered for its input shapes; the shapes that depend on input values
    // must be known without them.
    RunOptions options;
    options.program = path;
    options.arg_shapes = arg_shapes;
    options.timing_only = true;
    TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, LoadOnnx(path, options));
    if (format == TextFormat::kHlo) return frontend::PrintHlo(*module);
    return ir::PrintModule(*module);
  }
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, LoadModule(path));
  if (!arg_shapes.empty() || (format == TextFormat::kHlo && compiler::HasDynamicShapes(*module))) {
    std::string entry = module->Lookup("main") != nullptr ? "main" : "";
    for (const auto& f : module->functions()) {
      if (entry.empty() && f->is_public()) entry = f->name();
    }
    TPUSIM_RETURN_IF_ERROR(RefineForArguments(*module, entry, arg_shapes, {}));
  }
  if (format == TextFormat::kHlo) return frontend::PrintHlo(*module);
  return ir::PrintModule(*module);
}

}  // namespace tpusim::runtime
