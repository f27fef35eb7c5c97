// Calls that leave values as they are, or make new ones without computing:
// what JAX wraps values in for the compiler's sake.
//   @LayoutConstraint(%x)              jax.experimental.layout: a layout hint
//   @InspectSharding(%x)               jax.debug.inspect_array_sharding (its
//                                      callback runs when XLA compiles)
//   @dce_sink(%x) -> ()                keeps %x from dead-code elimination
//   @AllocateBuffer() -> tensor<...>   lax.empty: contents undefined (zeros here)
//   @xla.sdy.FuncResultSharding(%x), @xla.sdy.PropagationBarrier(%x),
//   @xla.sdy.ShardingGroup(%x) -> ()   Shardy's round-trip markers; the front
//                                      end reads them back into shardings when
//                                      the module names its meshes
//                                      (frontend/stablehlo/sdy_round_trip.cc)
// None does work on the chip.
#include "ops/util/op_util.h"
#include "tpusim/ops/custom_call.h"
#include "tpusim/ops/sharding_rule.h"

namespace tpusim::ops {
namespace {

Status VerifyIdentity(const ir::Operation& op) {
  if (op.num_operands() != 1 || op.num_results() != 1 ||
      op.operand(0).type() != op.result(0).type()) {
    return InvalidArgument("takes one value to one of the same type");
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalIdentity(EvalContext&, const ir::Operation&,
                                           std::span<const Tensor> operands) {
  return std::vector<Tensor>(operands.begin(), operands.end());
}

Status VerifySink(const ir::Operation& op) {
  if (op.num_results() != 0) return InvalidArgument("takes values and gives none");
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalSink(EvalContext&, const ir::Operation&,
                                       std::span<const Tensor>) {
  return std::vector<Tensor>{};
}

Status VerifyAllocate(const ir::Operation& op) {
  if (op.num_operands() != 0 || op.num_results() != 1 || !op.result(0).type().is_tensor()) {
    return InvalidArgument("takes nothing and gives one array");
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalAllocate(EvalContext&, const ir::Operation& op,
                                           std::span<const Tensor>) {
  return AllocateResults(op);
}

Work Free(const ir::Operation&) { return {.free = true}; }

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* target : {"LayoutConstraint", "InspectSharding", "xla.sdy.FuncResultSharding",
                             "xla.sdy.PropagationBarrier"}) {
    CustomCallRegistry::Register({.target = target,
                                  .verify = VerifyIdentity,
                                  .eval = EvalIdentity,
                                  .work = Free,
                                  .sharding_rule = ElementwiseShardingRule});
  }
  for (const char* target : {"dce_sink", "xla.sdy.ShardingGroup"}) {
    CustomCallRegistry::Register(
        {.target = target, .verify = VerifySink, .eval = EvalSink, .work = Free});
  }
  CustomCallRegistry::Register(
      {.target = "AllocateBuffer", .verify = VerifyAllocate, .eval = EvalAllocate, .work = Free});
  return true;
}();

}  // namespace
}  // namespace tpusim::ops
