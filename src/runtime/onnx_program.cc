#include "runtime/onnx_program.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

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

// @main's parameters for a run (OnnxFiles in onnx_program.h): `params` as
// tensor inputs (a sequence's elements named by their SSA names, of any
// rank a dynamic vector whose file sizes it), each with its file and the
// graph input it stands for.
struct Params {
  std::vector<frontend::OnnxInput> params;
  std::vector<std::string> files;
  std::vector<size_t> owner;
};

// The elements of a sequence input: a folder's .npy files in name order,
// or a comma-separated list.
StatusOr<std::vector<std::string>> ElementFiles(const std::string& spec, const std::string& name) {
  if (spec.empty()) {
    return InvalidArgument("input '" + name + "' is a sequence: give its elements with --input " +
                           name + "=a.npy,b.npy or a folder of .npy files");
  }
  std::vector<std::string> out;
  std::error_code ec;
  if (std::filesystem::is_directory(spec, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(spec, ec)) {
      if (e.path().extension() == ".npy") out.push_back(e.path().string());
    }
    if (ec) {
      return InvalidArgument("input '" + name + "': cannot list " + spec + ": " + ec.message());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  for (size_t at = 0;;) {
    const size_t comma = std::min(spec.find(',', at), spec.size());
    out.push_back(spec.substr(at, comma - at));
    if (out.back().empty()) {
      return InvalidArgument("input '" + name + "': an empty file name in " + spec);
    }
    if (comma == spec.size()) return out;
    at = comma + 1;
  }
}

StatusOr<Params> ExpandInputs(const std::vector<frontend::OnnxInput>& inputs,
                              const std::vector<std::string>& files,
                              frontend::OnnxImportOptions* import) {
  Params p;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const frontend::OnnxInput& in = inputs[i];
    if (in.optional && files[i] == kAbsentInput) {
      import->absent_inputs.insert(in.name);
      continue;
    }
    if (!in.sequence) {
      p.params.push_back(in);
      p.files.push_back(files[i]);
      p.owner.push_back(i);
      continue;
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<std::string> elements, ElementFiles(files[i], in.name));
    import->sequence_shapes[in.name];  // an empty sequence too
    for (size_t k = 0; k < elements.size(); ++k) {
      frontend::OnnxInput e = in;
      e.name = frontend::OnnxElementName(in.name, static_cast<int64_t>(k));
      if (!in.ranked) e.dims = {-1};
      p.params.push_back(std::move(e));
      p.files.push_back(elements[k]);
      p.owner.push_back(i);
    }
  }
  return p;
}

// Reads the parameter named `name` from its --input file: the values a
// shape of the model depends on.
std::function<StatusOr<Tensor>(const std::string&)> InputReader(
    const std::string& path, const ir::Function& stub, const Params& p,
    const std::vector<ir::Type>& types) {
  return [&path, &stub, &p, &types](const std::string& name) -> StatusOr<Tensor> {
    for (size_t k = 0; k < p.params.size(); ++k) {
      if (p.params[k].name != name) continue;
      if (p.files[k].empty()) {
        return InvalidArgument(path + ": the shapes of the model depend on the value of input '" +
                               name + "': give it with --input");
      }
      return ReadInput(stub, static_cast<int>(k), DeviceFile(p.files[k], 0), types[k]);
    }
    return NotFound(path + ": no input '" + name + "'");
  };
}

// The array given for the input named `name`, in its parameter's type.
std::function<StatusOr<Tensor>(const std::string&)> ArrayReader(
    const std::string& path, const std::vector<frontend::OnnxInput>& inputs,
    std::span<const Tensor> args, const std::vector<ir::Type>& types) {
  return [&path, &inputs, args, &types](const std::string& name) -> StatusOr<Tensor> {
    for (size_t i = 0; i < args.size(); ++i) {
      if (inputs[i].name == name) return ConvertInput(args[i], types[i], "input '" + name + "'");
    }
    return InvalidArgument(path + ": the shapes of the model depend on the value of input '" +
                           name + "', which is not given");
  };
}

}  // namespace

bool IsOnnxFile(const std::string& path) {
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0) return true;
  std::ifstream in(path, std::ios::binary);
  char head[64] = {};
  in.read(head, sizeof(head));
  return frontend::LooksLikeOnnx(std::string_view(head, static_cast<size_t>(in.gcount())));
}

StatusOr<std::unique_ptr<ir::Module>> LoadOnnx(const std::string& path, const RunOptions& options,
                                               OnnxFiles* run_files) {
  TPUSIM_ASSIGN_OR_RETURN(std::string bytes, ReadTextFile(path));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<frontend::OnnxInput> inputs,
                          frontend::ReadOnnxInputs(bytes, path));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<std::string> given, InputFiles(*Stub(inputs), options));
  frontend::OnnxImportOptions import;
  TPUSIM_ASSIGN_OR_RETURN(Params p, ExpandInputs(inputs, given, &import));
  std::unique_ptr<ir::Function> stub = Stub(p.params);
  std::vector<std::string> no_files = options.timing_only ? std::vector<std::string>() : p.files;
  TPUSIM_ASSIGN_OR_RETURN(
      std::vector<ir::Type> types,
      ArgumentTypes(*stub, SsaArgShapes(p.params, options.arg_shapes), no_files));
  for (size_t k = 0; k < p.params.size(); ++k) {
    const frontend::OnnxInput& in = inputs[p.owner[k]];
    if (in.sequence) {
      import.sequence_shapes[in.name].push_back(types[k].shape());
    } else {
      import.input_shapes[in.name] = types[k].shape();
    }
  }
  if (!options.timing_only) import.input_value = InputReader(path, *stub, p, types);
  std::vector<frontend::OnnxResult> results;
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                          frontend::ImportOnnx(bytes, path, import, &results));
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*module));
  if (run_files != nullptr) {
    run_files->inputs.clear();
    for (size_t k = 0; k < p.params.size(); ++k) {
      if (p.files[k].empty()) continue;
      run_files->inputs.push_back(stub->entry().argument(static_cast<int>(k)).name() + "=" +
                                  p.files[k]);
    }
    run_files->result_names.clear();
    for (const frontend::OnnxResult& r : results) {
      run_files->result_names.push_back("result" + std::to_string(r.output) +
                                        (r.element < 0 ? "" : "_" + std::to_string(r.element)));
    }
  }
  return module;
}

StatusOr<std::unique_ptr<ir::Module>> LoadOnnxFor(const std::string& path,
                                                  std::span<const Tensor> args,
                                                  const std::vector<std::string>& arg_shapes) {
  TPUSIM_ASSIGN_OR_RETURN(std::string bytes, ReadTextFile(path));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<frontend::OnnxInput> inputs,
                          frontend::ReadOnnxInputs(bytes, path));
  if (args.size() > inputs.size()) {
    return InvalidArgument(path + ": " + std::to_string(args.size()) +
                           " inputs given, the model takes " + std::to_string(inputs.size()));
  }
  std::unique_ptr<ir::Function> stub = Stub(inputs, args);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<ir::Type> types,
                          ArgumentTypes(*stub, SsaArgShapes(inputs, arg_shapes), {}));
  frontend::OnnxImportOptions import;
  for (size_t i = 0; i < inputs.size(); ++i) import.input_shapes[inputs[i].name] = types[i].shape();
  if (!args.empty()) import.input_value = ArrayReader(path, inputs, args, types);
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                          frontend::ImportOnnx(bytes, path, import));
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*module));
  return module;
}

}  // namespace tpusim::runtime
