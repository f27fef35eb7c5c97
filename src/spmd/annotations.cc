#include "spmd/annotations.h"

#include <set>

#include "tpusim/ir/sharding.h"

namespace tpusim::spmd {
namespace {

bool IsSdyConstraint(const ir::Operation& op) {
  return op.name_str() == "sdy.sharding_constraint" || op.name_str() == "sdy.reshard";
}

int64_t Rank(const ir::Type& t) { return t.is_tensor() ? t.rank() : 0; }

}  // namespace

bool IsCustomCall(const ir::Operation& op, std::string_view target) {
  ir::Attribute t = op.attr("call_target_name");
  return op.name_str() == "stablehlo.custom_call" && t.kind() == ir::Attribute::Kind::kString &&
         t.str() == target;
}

bool HasManualSharding(const ir::Module& module, const ir::Operation& op) {
  if (!op.attrs().Has("mhlo.sharding")) return false;
  auto s = ir::OpSharding(module, op);
  return s.ok() && *s && (*s)->kind == ir::HloSharding::Kind::kManual;
}

bool IsShardingConstraint(const ir::Operation& op) {
  return IsSdyConstraint(op) || IsCustomCall(op, "Sharding");
}

bool WorksPerDevice(const ir::Operation& op) {
  static const std::set<std::string, std::less<>> kOps = {
      "stablehlo.all_gather",   "stablehlo.all_reduce",         "stablehlo.reduce_scatter",
      "stablehlo.all_to_all",   "stablehlo.collective_permute", "stablehlo.collective_broadcast",
      "stablehlo.partition_id", "stablehlo.replica_id",         "stablehlo.send",
      "stablehlo.recv",         "sdy.manual_computation"};
  return kOps.count(op.name_str()) || IsCustomCall(op, "SPMDFullToShardShape") ||
         IsCustomCall(op, "SPMDShardToFullShape");
}

bool HasSharding(const ir::AttributeMap& attrs) {
  return attrs.Has("mhlo.sharding") || attrs.Has("sdy.sharding");
}

StatusOr<Sharding> Annotations::OnMesh(const ir::HloSharding& s, const ir::Type& type) const {
  TPUSIM_ASSIGN_OR_RETURN(Sharding out, FromHlo(mesh_, s, Rank(type)));
  return out;
}

StatusOr<Sharding> Annotations::Sdy(const ir::Attribute& sharding, const ir::Type& type) const {
  auto key = std::make_pair(sharding.ToString(), Rank(type));
  if (auto it = sdy_.find(key); it != sdy_.end()) return it->second;
  TPUSIM_ASSIGN_OR_RETURN(ir::HloSharding hlo, ir::SdyShardingToHlo(module_, sharding, Rank(type)));
  TPUSIM_ASSIGN_OR_RETURN(Sharding out, OnMesh(hlo, type));
  sdy_.emplace(std::move(key), out);
  return out;
}

StatusOr<Sharding> Annotations::OrReplicated(const StatusOr<std::optional<ir::HloSharding>>& s,
                                             const ir::Type& type) const {
  TPUSIM_RETURN_IF_ERROR(s.status());
  if (!s->has_value()) return Sharding::Replicated(Rank(type));
  return OnMesh(**s, type);
}

StatusOr<Sharding> Annotations::Arg(const ir::Function& f, int i) const {
  return OrReplicated(ir::ArgSharding(module_, f, i), f.type().inputs[i]);
}

StatusOr<Sharding> Annotations::Result(const ir::Function& f, int i) const {
  return OrReplicated(ir::ResultSharding(module_, f, i), f.type().results[i]);
}

StatusOr<Sharding> Annotations::Constraint(const ir::Operation& op) const {
  if (op.num_operands() != 1 || op.num_results() != 1) {
    return InvalidArgument(op.name_str() + " constrains one value");
  }
  const ir::Type& t = op.result(0).type();
  if (!IsSdyConstraint(op)) return OrReplicated(ir::OpSharding(module_, op), t);
  return Sdy(op.attr("sharding"), t);
}

StatusOr<std::vector<std::optional<Sharding>>> Annotations::OpResults(
    const ir::Operation& op) const {
  std::vector<std::optional<Sharding>> out(op.num_results());
  if (!HasSharding(op.attrs())) return out;
  TPUSIM_ASSIGN_OR_RETURN(std::optional<ir::HloSharding> s, ir::OpSharding(module_, op));
  if (!s) return out;
  const bool tuple = s->kind == ir::HloSharding::Kind::kTuple;
  for (int r = 0; r < op.num_results(); ++r) {
    if (tuple && r >= static_cast<int>(s->elements.size())) break;
    TPUSIM_ASSIGN_OR_RETURN(out[r], OnMesh(tuple ? s->elements[r] : *s, op.result(r).type()));
  }
  return out;
}

}  // namespace tpusim::spmd
