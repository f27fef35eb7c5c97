#include "spmd/propagation.h"

#include "spmd/factors.h"

namespace tpusim::spmd {
namespace {

void Prefer(Preferences& wishes, ir::Value v, const Sharding& s) {
  if (!s.IsReplicated()) wishes.emplace(v.impl(), s);
}

// Carries the wishes for `op`'s results to its operands.
void Through(const ir::Operation& op, const Mesh& mesh, Preferences& wishes) {
  std::optional<ops::ShardingRule> rule = RuleOf(op);
  if (!rule) return;
  FactorAxes factors(mesh, *rule);
  bool any = false;
  for (int r = 0; r < op.num_results(); ++r) {
    auto it = wishes.find(op.result(r).impl());
    if (it == wishes.end()) continue;
    factors.OfferValue(rule->results[r], it->second, /*reductions=*/false);
    any = true;
  }
  if (!any) return;
  for (int i = 0; i < op.num_operands(); ++i) {
    Prefer(wishes, op.operand(i), factors.Of(rule->operands[i]));
  }
}

}  // namespace

StatusOr<Preferences> PropagateBackward(const ir::Module& module, const ir::Function& f,
                                        const Annotations& annotations, const Mesh& mesh) {
  Preferences wishes;
  const ir::Operation* ret = f.entry().terminator();
  for (int i = 0; ret != nullptr && i < ret->num_operands(); ++i) {
    if (i >= static_cast<int>(f.result_attrs().size()) || !HasSharding(f.result_attrs()[i])) {
      continue;
    }
    auto s = annotations.Result(f, i);
    if (!s.ok()) return s.status().WithLocation(f.loc().ToString());
    Prefer(wishes, ret->operand(i), *s);
  }
  const auto& ops = f.entry().ops();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    const ir::Operation& op = **it;
    if (&op == ret || HasManualSharding(module, op) || op.name_str() == "sdy.manual_computation" ||
        IsCustomCall(op, "SPMDShardToFullShape")) {
      continue;
    }
    if (IsShardingConstraint(op)) {
      auto s = annotations.Constraint(op);
      if (!s.ok()) return s.status().WithLocation(op.loc().ToString());
      Prefer(wishes, op.operand(0), *s);
      continue;
    }
    auto own = annotations.OpResults(op);
    if (!own.ok()) return own.status().WithLocation(op.loc().ToString());
    for (int r = 0; r < op.num_results(); ++r) {
      if ((*own)[r]) wishes[op.result(r).impl()] = *(*own)[r];
    }
    Through(op, mesh, wishes);
  }
  return wishes;
}

}  // namespace tpusim::spmd
