// Host offloading, as JAX lowers jax.device_put(x, memory_kind=...) and
// offloaded remat inside jit:
//   %y = stablehlo.custom_call @annotate_device_placement(%x) {has_side_effect = true,
//            mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}}
// The value is unchanged; it moves to the named memory ("pinned_host",
// "unpinned_host", or "device" to bring it back). A move is priced as one
// transfer over the chip's host link, which a chip model may lack (the
// report then notes it as free). XLA's older MoveToHost / MoveToDevice
// markers mean the same. Each device moves its own shard: the call splits
// as an elementwise op does.
#include "ops/util/op_util.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops {
namespace {

bool IsPlacementCall(const std::string& target) {
  return target == "annotate_device_placement" || target == "MoveToHost" ||
         target == "MoveToDevice";
}

std::string Placement(const ir::Operation& op) {
  const std::string target = CallTarget(op);
  if (!IsPlacementCall(target)) return "";
  ir::Attribute p = op.attr("mhlo.frontend_attributes").Get("_xla_buffer_placement");
  if (p.kind() == ir::Attribute::Kind::kString) return p.str();
  if (target == "MoveToHost") return "pinned_host";
  if (target == "MoveToDevice") return "device";
  return "";
}

Status VerifyPlacement(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, 0, op.operand(0).type()));
  const std::string placement = Placement(op);
  if (placement != "pinned_host" && placement != "unpinned_host" && placement != "device") {
    return InvalidArgument(
        "needs mhlo.frontend_attributes = {_xla_buffer_placement = \"pinned_host\"} "
        "(or \"unpinned_host\", \"device\"), got \"" +
        placement + "\"");
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalPlacement(EvalContext&, const ir::Operation&,
                                            std::span<const Tensor> operands) {
  return std::vector<Tensor>{operands[0]};
}

Work PlacementWork(const ir::Operation& op) {
  Work w;
  w.host_bytes = LogicalBytes(op.operand(0).type());
  w.host_transfers = 1;
  const bool to_host = Placement(op) != "device";
  w.priced_as = std::string("a move ") +
                (to_host ? "to " + Placement(op) + " memory" : "to the device") + " (" +
                std::to_string(w.host_bytes) + " bytes over the host link)";
  return w;
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* target : {"annotate_device_placement", "MoveToHost", "MoveToDevice"}) {
    CustomCallRegistry::Register({.target = target,
                                  .verify = VerifyPlacement,
                                  .eval = EvalPlacement,
                                  .work = PlacementWork,
                                  .sharding_rule = ElementwiseShardingRule});
  }
  return true;
}();

}  // namespace

std::string MemoryPlacement(const ir::Operation& op) {
  return op.name_str() == "stablehlo.custom_call" ? Placement(op) : "";
}

}  // namespace tpusim::ops
