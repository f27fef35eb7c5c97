#include "tpusim/spmd/partitioner.h"

#include <algorithm>

#include "spmd/annotations.h"
#include "spmd/function_partitioner.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ir/sharding.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::spmd {
namespace {

int64_t IntAttr(const ir::Attribute& a, int64_t otherwise) {
  return a.kind() == ir::Attribute::Kind::kInt ? a.int_value() : otherwise;
}

}  // namespace

namespace {

// Whether `region` holds ops that only a per-device program has, outside
// manual regions; sets `manual` if it has manual regions.
// A region each device runs on its own part: a shard_map, under Shardy or
// GSPMD.
bool OpensManualRegion(const ir::Operation& op) {
  return op.name_str() == "sdy.manual_computation" || IsCustomCall(op, "SPMDFullToShardShape");
}

bool WorksPerDeviceOutsideManual(const ir::Region& region, bool& manual) {
  for (int b = 0; b < region.num_blocks(); ++b) {
    for (const auto& op : region.block(b).ops()) {
      if (OpensManualRegion(*op)) {
        manual = true;
        continue;
      }
      if (WorksPerDevice(*op) && !IsCustomCall(*op, "SPMDShardToFullShape")) return true;
      for (int r = 0; r < op->num_regions(); ++r) {
        if (WorksPerDeviceOutsideManual(op->region(r), manual)) return true;
      }
    }
  }
  return false;
}

// The program's devices as its Shardy mesh orders them (which axis is major
// matters once they are not all powers of one prime), else in prime axes.
Mesh MeshOf(const ir::Module& module) {
  const int64_t devices =
      std::max<int64_t>(1, IntAttr(module.attrs().Get("mhlo.num_partitions"), 1));
  ir::Attribute meshes = module.attrs().Get("sdy.meshes");
  if (meshes.kind() == ir::Attribute::Kind::kDict) {
    for (const auto& [name, mesh] : meshes.fields()) {
      std::vector<int64_t> sizes = mesh.Get("axis_sizes").AsInts();
      int64_t product = 1;
      for (int64_t size : sizes) {
        if (size < 1 || product > devices / size) {
          product = 0;
          break;
        }
        product *= size;
      }
      if (product == devices && mesh.Get("device_ids").AsInts().empty()) return Mesh(sizes);
    }
  }
  return Mesh(devices);
}

}  // namespace

bool IsGlobalProgram(const ir::Module& module) {
  if (module.attrs().Has(ir::kSpmdPartitioned) ||
      IntAttr(module.attrs().Get("mhlo.num_partitions"), 1) <= 1 ||
      IntAttr(module.attrs().Get("mhlo.num_replicas"), 1) != 1) {
    return false;
  }
  bool sharded = false, manual = false, per_device = false;
  for (const auto& f : module.functions()) {
    for (const auto& attrs : f->arg_attrs()) sharded |= HasSharding(attrs);
    for (const auto& attrs : f->result_attrs()) sharded |= HasSharding(attrs);
    ir::Walk(f->body(), [&](ir::Operation& op) {
      sharded |= IsShardingConstraint(op) || HasSharding(op.attrs());
    });
    per_device |= WorksPerDeviceOutsideManual(f->body(), manual);
  }
  // Under GSPMD a manual region is no region: its collectives are found
  // per device by the partitioner, which refuses any outside it.
  return sharded && (manual || !per_device);
}

bool HasManualRegions(const ir::Module& module) {
  bool manual = false;
  for (const auto& f : module.functions()) {
    ir::Walk(f->body(), [&](ir::Operation& op) { manual |= OpensManualRegion(op); });
  }
  return manual;
}

StatusOr<std::unique_ptr<ir::Module>> Partition(const ir::Module& module, const std::string& entry,
                                                PartitionStats* stats) {
  PartitionStats local;
  if (stats == nullptr) stats = &local;
  const Mesh mesh = MeshOf(module);
  stats->devices = mesh.devices();
  std::unique_ptr<ir::Module> out = ir::CloneModule(module);
  compiler::PassContext ctx{.entry = entry};
  TPUSIM_RETURN_IF_ERROR(compiler::RunInlining(*out, ctx));
  const ir::Function* f = out->Lookup(entry);
  if (f == nullptr) return NotFound("no function @" + entry);
  FunctionPartitioner partitioner(*out, mesh, stats);
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Function> partitioned, partitioner.Run(*f));
  out->RemoveFunction(entry);
  out->AddFunction(std::move(partitioned))->Renumber();
  out->attrs().Set(std::string(ir::kSpmdPartitioned), ir::Attribute::Unit());
  Status valid = verify::VerifyModule(*out);
  if (!valid.ok()) return Internal("the partitioned program is invalid: " + valid.ToString());
  return out;
}

}  // namespace tpusim::spmd
