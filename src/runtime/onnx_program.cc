#include "runtime/onnx_program.h"

#include <fstream>

#include "runtime/arg_shapes.h"
#include "runtime/run_io.h"
#include "tpusim/frontend/onnx/importer.h"
#include "tpusim/io/npy.h"
#include "tpusim/ir/dynamic.h"
#include "tpusim/runtime/load.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::runtime {
namespace {

// A stand-in for @main with the model's inputs, dynamic where the model's
// are, so that --arg-shape and --input resolve as they do for any program.
// Input i < args.size() takes args[i]'s shape.
std::unique_ptr<ir::Function> Stub(const std::vector<frontend::OnnxInput>& inputs,
                                   std::span<const Tensor> args = {}) {
  ir::FunctionType type;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const frontend::OnnxInput& in = inputs[i];
    ir::Shape shape = i < args.size() ? args[i].shape() : in.dims;
    for (int64_t& d : shape) {
      if (d < 0) d = ir::kDynamicDim;
    }
    type.inputs.push_back(ir::Type::Tensor(in.element, shape));
  }
  auto f = std::make_unique<ir::Function>("main", type, ir::Location{});
  ir::Block& entry = f->body().AddBlock();
  for (size_t i = 0; i < inputs.size(); ++i) {
    entry.AddArgument(type.inputs[i], frontend::OnnxValueName(inputs[i].name));
  }
  return f;
}

// --arg-shape flags naming an input by its ONNX name, renamed to its SSA name.
std::vector<std::string> SsaArgShapes(const std::vector<frontend::OnnxInput>& inputs,
                                      std::vector<std::string> specs) {
  for (std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) continue;
    for (const frontend::OnnxInput& in : inputs) {
      if (spec.compare(0, eq, in.name) == 0 && eq == in.name.size()) {
        spec = frontend::OnnxValueName(in.name) + spec.substr(eq);
      }
    }
  }
  return specs;
}

}  // namespace

bool IsOnnxFile(const std::string& path) {
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0) return true;
  std::ifstream in(path, std::ios::binary);
  char head[64] = {};
  in.read(head, sizeof(head));
  return frontend::LooksLikeOnnx(std::string_view(head, static_cast<size_t>(in.gcount())));
}

StatusOr<std::unique_ptr<ir::Module>> LoadOnnx(const std::string& path, const RunOptions& options) {
  TPUSIM_ASSIGN_OR_RETURN(std::string bytes, ReadTextFile(path));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<frontend::OnnxInput> inputs,
                          frontend::ReadOnnxInputs(bytes, path));
  std::unique_ptr<ir::Function> stub = Stub(inputs);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<std::string> files, InputFiles(*stub, options));
  std::vector<std::string> no_files = options.timing_only ? std::vector<std::string>() : files;
  TPUSIM_ASSIGN_OR_RETURN(
      std::vector<ir::Type> types,
      ArgumentTypes(*stub, SsaArgShapes(inputs, options.arg_shapes), no_files));
  frontend::OnnxImportOptions import;
  for (size_t i = 0; i < inputs.size(); ++i) import.input_shapes[inputs[i].name] = types[i].shape();
  if (!options.timing_only) {
    import.input_value = [&](const std::string& name) -> StatusOr<Tensor> {
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].name != name) continue;
        if (files[i].empty()) {
          return InvalidArgument(path + ": the shapes of the model depend on the value of input '" +
                                 name + "': give it with --input");
        }
        return ReadInput(*stub, static_cast<int>(i), DeviceFile(files[i], 0), types[i]);
      }
      return NotFound(path + ": no input '" + name + "'");
    };
  }
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                          frontend::ImportOnnx(bytes, path, import));
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*module));
  return module;
}

StatusOr<std::unique_ptr<ir::Module>> LoadOnnxFor(const std::string& path,
                                                  std::span<const Tensor> args,
                                                  const std::vector<std::string>& arg_shapes) {
  TPUSIM_ASSIGN_OR_RETURN(std::string bytes, ReadTextFile(path));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<frontend::OnnxInput> inputs,
                          frontend::ReadOnnxInputs(bytes, path));
  if (args.size() > inputs.size()) {
    return InvalidArgument(path + ": " + std::to_string(args.size()) + " inputs given, the model takes " +
                           std::to_string(inputs.size()));
  }
  std::unique_ptr<ir::Function> stub = Stub(inputs, args);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<ir::Type> types,
                          ArgumentTypes(*stub, SsaArgShapes(inputs, arg_shapes), {}));
  frontend::OnnxImportOptions import;
  for (size_t i = 0; i < inputs.size(); ++i) import.input_shapes[inputs[i].name] = types[i].shape();
  if (!args.empty()) {
    import.input_value = [&](const std::string& name) -> StatusOr<Tensor> {
      for (size_t i = 0; i < args.size(); ++i) {
        if (inputs[i].name == name) return ConvertInput(args[i], types[i], "input '" + name + "'");
      }
      return InvalidArgument(path + ": the shapes of the model depend on the value of input '" +
                             name + "', which is not given");
    };
  }
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                          frontend::ImportOnnx(bytes, path, import));
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*module));
  return module;
}

}  // namespace tpusim::runtime
