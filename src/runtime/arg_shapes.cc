#include "runtime/arg_shapes.h"

#include <charconv>

#include "runtime/run_io.h"
#include "tpusim/compiler/refine_shapes.h"
#include "tpusim/io/npy.h"
#include "tpusim/ir/dynamic.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::runtime {
namespace {

std::string ParamName(const ir::Function& f, int i) {
  const std::string& name = f.entry().argument(i).name();
  return name.empty() ? "arg" + std::to_string(i) : name;
}

// "8x4" -> {8, 4}; "" -> {} (a scalar).
StatusOr<ir::Shape> ParseDims(const std::string& spec, const std::string& dims) {
  ir::Shape shape;
  size_t at = 0;
  while (at < dims.size()) {
    size_t x = dims.find('x', at);
    if (x == std::string::npos) x = dims.size();
    int64_t d = -1;
    auto [ptr, ec] = std::from_chars(dims.data() + at, dims.data() + x, d);
    if (ec != std::errc() || ptr != dims.data() + x || d < 0 || d > (int64_t{1} << 40)) {
      return InvalidArgument("--arg-shape " + spec +
                             ": dimensions must be non-negative integers joined by 'x' (8x4)");
    }
    shape.push_back(d);
    at = x + 1;
    if (x + 1 == dims.size()) return InvalidArgument("--arg-shape " + spec + ": ends in 'x'");
  }
  return shape;
}

}  // namespace

StatusOr<std::vector<ir::Type>> ArgumentTypes(const ir::Function& f,
                                              const std::vector<std::string>& arg_shapes,
                                              const std::vector<std::string>& files) {
  const int n = f.entry().num_arguments();
  std::vector<ir::Type> types = f.type().inputs;
  std::vector<bool> given(n);
  for (const std::string& spec : arg_shapes) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      return InvalidArgument("--arg-shape " + spec + ": expected NAME=DIMS, like arg0=8x4");
    }
    const std::string name = spec.substr(0, eq);
    int i = 0;
    while (i < n && ParamName(f, i) != name) ++i;
    if (i == n) {
      return NotFound("--arg-shape " + spec + ": @" + f.name() + " has no parameter %" + name);
    }
    if (given[i]) return InvalidArgument("--arg-shape: %" + name + " is given twice");
    if (!types[i].is_tensor()) {
      return InvalidArgument("--arg-shape " + spec + ": %" + name + " is not a tensor");
    }
    TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape, ParseDims(spec, spec.substr(eq + 1)));
    types[i] = ir::Type::Tensor(types[i].element(), std::move(shape));
    given[i] = true;
  }
  for (int i = 0; i < n; ++i) {
    if (given[i] || ir::IsStatic(types[i])) continue;
    if (i < static_cast<int>(files.size()) && !files[i].empty()) {
      TPUSIM_ASSIGN_OR_RETURN(Tensor t, io::ReadNpy(DeviceFile(files[i], 0)));
      types[i] = ir::Type::Tensor(types[i].element(), t.shape());
      continue;
    }
    return InvalidArgument("input %" + ParamName(f, i) + " has the dynamic type " +
                           types[i].ToString() + ": give its shape with --arg-shape " +
                           ParamName(f, i) + "=DIMS (like 8x4) or an --input file");
  }
  return types;
}

Status RefineForArguments(ir::Module& module, const std::string& entry,
                          const std::vector<std::string>& arg_shapes,
                          const std::vector<std::string>& files) {
  const ir::Function* f = module.Lookup(entry);
  if (f == nullptr) return NotFound("no function @" + entry);
  if (!compiler::HasDynamicShapes(module)) {
    if (arg_shapes.empty()) return Status::Ok();
    return InvalidArgument("--arg-shape is for programs with dynamic (?) dimensions; @" + entry +
                           "'s are all static");
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<ir::Type> types, ArgumentTypes(*f, arg_shapes, files));
  TPUSIM_RETURN_IF_ERROR(compiler::RefineShapes(module, entry, types));
  return verify::VerifyModule(module).WithContext("the refined program is invalid");
}

Status RefineForValues(ir::Module& module, const std::string& entry, std::span<const Tensor> args) {
  const ir::Function* f = module.Lookup(entry);
  if (f == nullptr) return NotFound("no function @" + entry);
  if (!compiler::HasDynamicShapes(module)) return Status::Ok();
  std::vector<ir::Type> types = f->type().inputs;
  if (args.size() != types.size()) {
    return InvalidArgument("@" + entry + " takes " + std::to_string(types.size()) +
                           " arguments, given " + std::to_string(args.size()));
  }
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i].is_tensor() && args[i].valid()) {
      types[i] = ir::Type::Tensor(types[i].element(), args[i].shape());
    }
  }
  TPUSIM_RETURN_IF_ERROR(compiler::RefineShapes(module, entry, types));
  return verify::VerifyModule(module).WithContext("the refined program is invalid");
}

}  // namespace tpusim::runtime
