#include "runtime/sharding_flags.h"

#include <charconv>

#include "runtime/slice_setup.h"
#include "tpusim/ir/sharding.h"

namespace tpusim::runtime {
namespace {

using ir::Attribute;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

Status AddMesh(const std::string& spec, ir::Module& module) {
  auto bad = [&](const std::string& why) { return InvalidArgument("--mesh " + spec + ": " + why); };
  if (module.attrs().Has("sdy.meshes")) {
    return bad("the program defines its own mesh; --mesh is for programs without one");
  }
  TPUSIM_ASSIGN_OR_RETURN(auto axes, ParseMeshFlag(spec));
  std::vector<Attribute> names, sizes;
  int64_t devices = 1;
  for (const auto& [name, size] : axes) {
    names.push_back(Attribute::String(name));
    sizes.push_back(Attribute::Int(size));
    devices *= size;
  }
  const int64_t partitions = GridOf(module).partitions;
  if (partitions > 1 && partitions != devices) {
    return bad("a mesh of " + std::to_string(devices) + " devices for a program of " +
               std::to_string(partitions) + " partitions");
  }
  module.attrs().Set(
      "sdy.meshes",
      Attribute::Dict(
          {{"mesh", Attribute::Struct("sdy.mesh", {{"axis_names", Attribute::Array(names)},
                                                   {"axis_sizes", Attribute::Array(sizes)}})}}));
  module.attrs().Set("mhlo.num_partitions", Attribute::Int(devices, ir::ElementType::kSI32));
  return Status::Ok();
}

// The attributes of the argument or result `name` names.
StatusOr<ir::AttributeMap*> Target(ir::Function& f, const std::string& name,
                                   const ir::Type** type) {
  for (int i = 0; i < f.entry().num_arguments(); ++i) {
    if (name == "arg" + std::to_string(i) || name == f.entry().argument(i).name()) {
      *type = &f.type().inputs[i];
      return &f.arg_attrs()[i];
    }
  }
  for (size_t i = 0; i < f.type().results.size(); ++i) {
    if (name == "result" + std::to_string(i)) {
      *type = &f.type().results[i];
      return &f.result_attrs()[i];
    }
  }
  return InvalidArgument("@" + f.name() + " has no argument or result '" + name + "'");
}

Status ApplyShard(const std::string& spec, const std::string& mesh, ir::Module& module,
                  ir::Function& f) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("--shard " + spec + ": expected NAME=DIMS, as arg0=data,_");
  }
  const ir::Type* type = nullptr;
  auto target = Target(f, spec.substr(0, eq), &type);
  if (!target.ok()) return target.status().WithContext("--shard " + spec);
  std::vector<Attribute> dims;
  for (const std::string& dim : Split(spec.substr(eq + 1), ',')) {
    std::vector<Attribute> axes;
    if (dim != "_") {
      for (const std::string& axis : Split(dim, '+')) axes.push_back(Attribute::String(axis));
    }
    dims.push_back(Attribute::Array(std::move(axes)));
  }
  Attribute sharding = Attribute::Struct(
      "sdy.sharding", {{"mesh", Attribute::SymbolRef(mesh)}, {"dims", Attribute::Array(dims)}});
  const int64_t rank = type->is_tensor() ? type->rank() : 0;
  Status valid = ir::SdyShardingToHlo(module, sharding, rank).status();
  if (!valid.ok()) return InvalidArgument("--shard " + spec + ": " + valid.message());
  (*target)->Erase("mhlo.sharding");
  (*target)->Set("sdy.sharding", std::move(sharding));
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<std::pair<std::string, int64_t>>> ParseMeshFlag(const std::string& spec) {
  auto bad = [&](const std::string& why) { return InvalidArgument("--mesh " + spec + ": " + why); };
  std::vector<std::pair<std::string, int64_t>> axes;
  int64_t devices = 1;
  for (const std::string& axis : Split(spec, ',')) {
    const size_t eq = axis.find('=');
    int64_t size = 0;
    const char* end = axis.data() + axis.size();
    if (eq == std::string::npos || eq == 0 ||
        std::from_chars(axis.data() + eq + 1, end, size).ptr != end || size < 1 || size > 4096) {
      return bad("expected name=size,... with sizes from 1 to 4096");
    }
    const std::string name = axis.substr(0, eq);
    for (const auto& [other, _] : axes) {
      if (other == name) return bad("axis '" + name + "' named twice");
    }
    axes.emplace_back(name, size);
    devices *= size;
    if (devices > 65536) return bad("more than 65536 devices");
  }
  return axes;
}

Status ApplyShardingFlags(const std::string& mesh, const std::vector<std::string>& shards,
                          ir::Module& module, ir::Function& f) {
  if (!mesh.empty()) TPUSIM_RETURN_IF_ERROR(AddMesh(mesh, module));
  if (shards.empty()) return Status::Ok();
  const Attribute meshes = module.attrs().Get("sdy.meshes");
  if (!meshes || meshes.fields().size() != 1) {
    return InvalidArgument("--shard names mesh axes: give the mesh with --mesh" +
                           std::string(meshes ? " (the program defines several)" : ""));
  }
  for (const std::string& spec : shards) {
    TPUSIM_RETURN_IF_ERROR(ApplyShard(spec, meshes.fields()[0].first, module, f));
  }
  return Status::Ok();
}

}  // namespace tpusim::runtime
