// Control flow: while, if, case, and composite (which runs its decomposition).
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

// Region `r` of `op` has one block taking `args` and returning `results`.
Status ExpectRegion(const ir::Operation& op, int r, const std::vector<ir::Type>& args,
                    const std::vector<ir::Type>& results) {
  const ir::Region& region = op.region(r);
  std::string which = "'" + op.name_str() + "' region " + std::to_string(r);
  if (region.num_blocks() != 1) return InvalidArgument(which + " must have one block");
  const ir::Block& block = region.front();
  if (ir::TypesOf(block.arguments()) != args) {
    return InvalidArgument(which + " takes " + ir::TypeListString(ir::TypesOf(block.arguments())) +
                           ", expected " + ir::TypeListString(args));
  }
  const ir::Operation* term = block.terminator();
  if (term == nullptr || term->name_str() != "stablehlo.return") {
    return InvalidArgument(which + " must end in stablehlo.return");
  }
  if (ir::TypesOf(term->operands()) != results) {
    return InvalidArgument(which + " returns " + ir::TypeListString(ir::TypesOf(term->operands())) +
                           ", expected " + ir::TypeListString(results));
  }
  return Status::Ok();
}

// while(operands) cond {...} do {...}: the loop state starts as the operands.
Status VerifyWhile(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 2));
  std::vector<ir::Type> state = ir::TypesOf(op.operands());
  if (ir::TypesOf(op.results()) != state) {
    return InvalidArgument("'stablehlo.while' results " + ir::TypeListString(ir::TypesOf(op.results())) +
                           " differ from its operands " + ir::TypeListString(state));
  }
  TPUSIM_RETURN_IF_ERROR(ExpectRegion(op, 0, state, {ir::Type::Tensor(ir::ElementType::kI1, {})}));
  return ExpectRegion(op, 1, state, state);
}

StatusOr<std::vector<Tensor>> EvalWhile(EvalContext& ctx, const ir::Operation& op,
                                        std::span<const Tensor> operands) {
  // The loop holds its state alone (when its operands died here), so a body
  // that updates a stacked buffer one slice per iteration writes in place.
  std::vector<Tensor> state = ctx.TakeOperands(operands);
  for (int64_t i = 0;; ++i) {
    TPUSIM_RETURN_IF_ERROR(ctx.BeginIteration(op, i));
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> cond, ctx.RunRegion(op.region(0), state));
    if (cond[0].data<uint8_t>()[0] == 0) return state;
    TPUSIM_ASSIGN_OR_RETURN(state, ctx.RunRegionConsuming(op.region(1), std::move(state)));
  }
}

TPUSIM_REGISTER_OP({.name = "stablehlo.while",
                    .verify = VerifyWhile,
                    .eval = EvalWhile,
                    .work = FreeWork,
                    .control_flow = true});

// Each branch takes nothing and returns the op's result types.
Status VerifyBranches(const ir::Operation& op) {
  if (op.num_regions() < 1) return InvalidArgument("'" + op.name_str() + "' needs a branch");
  for (int r = 0; r < op.num_regions(); ++r) {
    TPUSIM_RETURN_IF_ERROR(ExpectRegion(op, r, {}, ir::TypesOf(op.results())));
  }
  return Status::Ok();
}

Status VerifyIf(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 2));
  if (op.operand(0).type() != ir::Type::Tensor(ir::ElementType::kI1, {})) {
    return InvalidArgument("'stablehlo.if' predicate must be tensor<i1>, got " +
                           op.operand(0).type().ToString());
  }
  return VerifyBranches(op);
}

StatusOr<std::vector<Tensor>> EvalIf(EvalContext& ctx, const ir::Operation& op,
                                     std::span<const Tensor> operands) {
  bool pred = operands[0].data<uint8_t>()[0] != 0;
  return ctx.RunRegion(op.region(pred ? 0 : 1), {});
}

TPUSIM_REGISTER_OP({.name = "stablehlo.if",
                    .verify = VerifyIf,
                    .eval = EvalIf,
                    .work = FreeWork,
                    .control_flow = true});

Status VerifyCase(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  if (op.operand(0).type() != ir::Type::Tensor(ir::ElementType::kSI32, {})) {
    return InvalidArgument("'stablehlo.case' index must be tensor<i32>, got " +
                           op.operand(0).type().ToString());
  }
  return VerifyBranches(op);
}

// An index outside [0, branches) selects the last branch.
StatusOr<std::vector<Tensor>> EvalCase(EvalContext& ctx, const ir::Operation& op,
                                       std::span<const Tensor> operands) {
  int32_t index = operands[0].data<int32_t>()[0];
  int last = op.num_regions() - 1;
  return ctx.RunRegion(op.region(index >= 0 && index < last ? index : last), {});
}

TPUSIM_REGISTER_OP({.name = "stablehlo.case",
                    .verify = VerifyCase,
                    .eval = EvalCase,
                    .work = FreeWork,
                    .control_flow = true});

// composite: its meaning is its decomposition, a function of the module; the
// verifier's call checks do not cover it, so the callee's types are checked
// when it runs (the interpreter rejects arguments of the wrong type).
Status VerifyComposite(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(GetAttr(op, "name", ir::Attribute::Kind::kString).status());
  return GetAttr(op, "decomposition", ir::Attribute::Kind::kSymbolRef).status();
}

StatusOr<std::vector<Tensor>> EvalComposite(EvalContext& ctx, const ir::Operation& op,
                                            std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(
      std::vector<Tensor> results,
      ctx.CallConsuming(op.attr("decomposition").str(), ctx.TakeOperands(operands)));
  if (static_cast<int>(results.size()) != op.num_results()) {
    return InvalidArgument("decomposition @" + op.attr("decomposition").str() + " returns " +
                           std::to_string(results.size()) + " values for " +
                           std::to_string(op.num_results()) + " results");
  }
  for (int i = 0; i < op.num_results(); ++i) {
    if (results[i].type() != op.result(i).type()) {
      return InvalidArgument("decomposition @" + op.attr("decomposition").str() + " returns " +
                             results[i].type().ToString() + " for result " + std::to_string(i) +
                             " of type " + op.result(i).type().ToString());
    }
  }
  return results;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.composite",
                    .verify = VerifyComposite,
                    .eval = EvalComposite,
                    .work = FreeWork});

}  // namespace
}  // namespace tpusim::ops
