#include "tpusim/compiler/buffer_assignment.h"

#include <algorithm>

#include "compiler/buffer_planner.h"
#include "tpusim/base/bytes.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/ir/rewrite.h"

namespace tpusim::compiler {
namespace {

// The dump's view of the plan: each value's (offset, bytes) per tensor.
constexpr const char* kBuffersAttr = "tpusim.buffers";
// The peak, on the entry function.
constexpr const char* kPeakAttr = "tpusim.hbm_peak_bytes";

// The entry the pipeline compiles: ctx.entry, else @main, else the only
// public function; null when there is none to choose.
StatusOr<ir::Function*> FindEntry(ir::Module& module, const std::string& name) {
  if (!name.empty()) {
    ir::Function* f = module.Lookup(name);
    if (f == nullptr) return NotFound("buffer assignment: no function @" + name);
    return f;
  }
  if (ir::Function* main = module.Lookup("main")) return main;
  ir::Function* only = nullptr;
  for (const auto& f : module.functions()) {
    if (!f->is_public()) continue;
    if (only != nullptr) return nullptr;
    only = f.get();
  }
  return only;
}

ir::Attribute PlacementAttr(const std::vector<std::pair<int64_t, int64_t>>& placement) {
  std::vector<int64_t> flat;
  for (auto [offset, bytes] : placement) {
    flat.push_back(offset);
    flat.push_back(bytes);
  }
  return ir::Attribute::DenseArray(ir::ElementType::kSI64, std::move(flat));
}

// Writes where every buffer of `f` sits, replacing an earlier plan's marks:
// `tpusim.buffers = array<i64: offset, bytes, ...>` per tensor of each
// result (offset -1 for tokens) on ops and arguments.
void Annotate(ir::Function& f, const FunctionPlanner& planner, int64_t peak) {
  f.attrs().Set(kPeakAttr, ir::Attribute::Int(peak));
  for (int i = 0; i < f.entry().num_arguments() && i < static_cast<int>(f.arg_attrs().size());
       ++i) {
    auto placement = planner.Placement(f.entry().argument(i));
    if (!placement.empty()) f.arg_attrs()[i].Set(kBuffersAttr, PlacementAttr(placement));
  }
  ir::Walk(f.body(), [&](ir::Operation& op) {
    op.attrs().Erase(kBuffersAttr);
    std::vector<std::pair<int64_t, int64_t>> all;
    for (int i = 0; i < op.num_results(); ++i) {
      auto placement = planner.Placement(op.result(i));
      if (placement.empty()) return;  // on chip: a fusion or reduction body
      all.insert(all.end(), placement.begin(), placement.end());
    }
    if (!all.empty()) op.attrs().Set(kBuffersAttr, PlacementAttr(all));
  });
}

// The plan against one device's share of the chip's HBM.
MemoryPlan DevicePlan(const FunctionPlanner& planner, const hw::ChipSpec& chip) {
  MemoryPlan plan = planner.Plan(chip.HbmBytesPerDevice());
  plan.devices_per_chip = chip.DevicesPerChip();
  return plan;
}

}  // namespace

StatusOr<MemoryPlan> PlanMemory(const ir::Module& module, const ir::Function& entry,
                                const hw::ChipSpec& chip) {
  ModulePlanner modules(module);
  FunctionPlanner planner(modules, entry, /*is_entry=*/true);
  TPUSIM_RETURN_IF_ERROR(planner.Run());
  return DevicePlan(planner, chip);
}

std::string PeakBreakdown(const MemoryPlan& plan) {
  std::string s;
  auto add = [&](const char* what, int64_t bytes) {
    if (bytes != 0) s += (s.empty() ? "" : ", ") + std::string(what) + " " + FormatBinaryBytes(bytes);
  };
  add("arguments", plan.argument_bytes);
  add("results", plan.result_bytes);
  add("constants", plan.constant_bytes);
  add("temporaries", plan.temp_bytes);
  add("fragmentation", plan.fragmentation_bytes);
  return s;
}

std::string CapacityUnit(const MemoryPlan& plan) {
  if (plan.devices_per_chip == 1) return "";
  return " per device (" + std::to_string(plan.devices_per_chip) +
         " TensorCores per chip, each a device with its share)";
}

std::string OutOfMemoryMessage(const MemoryPlan& plan, const std::string& chip_name) {
  std::string s = "RESOURCE_EXHAUSTED: @" + plan.function + " needs " +
                  FormatBinaryBytes(plan.peak_bytes) + " of HBM but " + chip_name + " has " +
                  FormatBinaryBytes(plan.capacity_bytes) + CapacityUnit(plan) + " (" +
                  PeakBreakdown(plan) + ")";
  if (plan.live_at_peak.empty()) return s;
  s += "; largest buffers live at the peak (at " + plan.peak_at + "):";
  constexpr size_t kListed = 5;
  for (size_t i = 0; i < plan.live_at_peak.size() && i < kListed; ++i) {
    const LiveBuffer& b = plan.live_at_peak[i];
    s += (i ? "; " : " ") + b.value + " " + b.type + " " + FormatBinaryBytes(b.bytes) + " " +
         BufferKindName(b.kind) + " from " + b.op;
  }
  return s;
}

Status RunBufferAssignment(ir::Module& module, PassContext& ctx) {
  if (ctx.chip == nullptr) return Internal("buffer assignment needs a target chip");
  TPUSIM_ASSIGN_OR_RETURN(ir::Function * entry, FindEntry(module, ctx.entry));
  if (entry == nullptr) return Status::Ok();
  for (const auto& f : module.functions()) f->Renumber();
  ModulePlanner modules(module);
  FunctionPlanner planner(modules, *entry, /*is_entry=*/true);
  TPUSIM_RETURN_IF_ERROR(planner.Run());
  MemoryPlan plan = DevicePlan(planner, *ctx.chip);
  Annotate(*entry, planner, plan.peak_bytes);
  ctx.notes.push_back(
      "buffer assignment: @" + plan.function + " needs " + FormatBinaryBytes(plan.peak_bytes) +
      " of HBM (" + FormatBinaryBytes(plan.sum_of_buffers) + " without reuse, " +
      std::to_string(plan.num_buffers) + " buffers)" +
      (plan.host_bytes > 0 ? "; " + FormatBinaryBytes(plan.host_bytes) + " in host memory" : ""));
  const bool fits = plan.peak_bytes <= plan.capacity_bytes;
  std::string message = fits ? "" : OutOfMemoryMessage(plan, ctx.chip->name);
  ctx.memory = std::move(plan);
  if (!fits) return ResourceExhausted(message);
  return Status::Ok();
}

}  // namespace tpusim::compiler
