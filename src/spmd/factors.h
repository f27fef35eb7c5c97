// Choosing the mesh axes of an op's sharding-rule factors. Internal to
// src/spmd.
#ifndef TPUSIM_SPMD_FACTORS_H_
#define TPUSIM_SPMD_FACTORS_H_

#include <optional>
#include <vector>

#include "spmd/mesh.h"
#include "tpusim/ops/sharding_rule.h"

namespace tpusim::spmd {

// `op`'s sharding rule: its OpDef's, or the elementwise rule; nullopt for
// ops that run on whole arrays.
std::optional<ops::ShardingRule> RuleOf(const ir::Operation& op);

// The axes given to each factor of a rule so far; no axis serves two.
class FactorAxes {
 public:
  FactorAxes(const Mesh& mesh, const ops::ShardingRule& rule);

  const std::vector<Axes>& axes() const { return axes_; }
  // Factors found in no result: their partial results need combining.
  bool IsReduction(int f) const { return reduction_[f]; }
  // Gives factor `f` `candidate` if it has none, may be sharded, fits
  // `candidate` and no other factor holds any of its axes.
  void Offer(int f, const Axes& candidate);
  // Offers each dimension of a value with `dims` (its factors) the axes
  // `s` gives it; reductions only if `reductions`, others only if not.
  void OfferValue(const std::vector<int>& dims, const Sharding& s, bool reductions);
  // The sharding of a value whose dimensions are the factors `dims`.
  Sharding Of(const std::vector<int>& dims) const;

 private:
  // Whether factor `f` may split `parts` ways: evenly, or padded where the
  // rule allows, or into windows that each device can compute.
  bool Fits(int f, int64_t parts) const;

  const Mesh& mesh_;
  const ops::ShardingRule& rule_;
  std::vector<Axes> axes_;
  std::vector<bool> reduction_, taken_;
};

}  // namespace tpusim::spmd

#endif  // TPUSIM_SPMD_FACTORS_H_
