#include "spmd/factors.h"

#include <algorithm>

#include "compiler/fusion_rules.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::spmd {

std::optional<ops::ShardingRule> RuleOf(const ir::Operation& op) {
  const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
  if (def != nullptr && def->sharding_rule) return def->sharding_rule(op);
  if (compiler::IsElementwise(op)) return ops::ElementwiseShardingRule(op);
  return std::nullopt;
}

FactorAxes::FactorAxes(const Mesh& mesh, const ops::ShardingRule& rule)
    : mesh_(mesh),
      rule_(rule),
      axes_(rule.factors.size()),
      reduction_(rule.factors.size(), true),
      taken_(mesh.num_axes(), false) {
  for (const auto& dims : rule.results) {
    for (int f : dims) {
      if (f >= 0) reduction_[f] = false;
    }
  }
}

bool FactorAxes::Fits(int f, int64_t parts) const {
  const ops::ShardingRule::Factor& factor = rule_.factors[f];
  if (factor.window) return factor.window->Splits(parts);
  return factor.size % parts == 0 || factor.splits_unevenly;
}

void FactorAxes::Offer(int f, const Axes& candidate) {
  if (candidate.empty() || !axes_[f].empty() || !rule_.factors[f].shardable ||
      (reduction_[f] && rule_.combiner.empty()) || !Fits(f, mesh_.Size(candidate)) ||
      std::any_of(candidate.begin(), candidate.end(), [&](int a) { return taken_[a]; })) {
    return;
  }
  axes_[f] = candidate;
  for (int a : candidate) taken_[a] = true;
}

void FactorAxes::OfferValue(const std::vector<int>& dims, const Sharding& s, bool reductions) {
  for (size_t d = 0; d < dims.size() && d < s.dims.size(); ++d) {
    if (dims[d] >= 0 && reduction_[dims[d]] == reductions) Offer(dims[d], s.dims[d]);
  }
}

Sharding FactorAxes::Of(const std::vector<int>& dims) const {
  Sharding s;
  for (int f : dims) s.dims.push_back(f >= 0 ? axes_[f] : Axes{});
  return s;
}

}  // namespace tpusim::spmd
