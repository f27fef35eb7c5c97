#include "tpusim/spmd/partitioner.h"

#include <algorithm>
#include <set>

#include "compiler/fusion_rules.h"
#include "spmd/emitter.h"
#include "spmd/mesh.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ir/sharding.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::spmd {
namespace {

// Set on a partitioned module, so that it is never partitioned again.
constexpr std::string_view kPartitioned = "tpusim.spmd_partitioned";

int64_t IntAttr(const ir::Attribute& a, int64_t otherwise) {
  return a.kind() == ir::Attribute::Kind::kInt ? a.int_value() : otherwise;
}

bool IsSdyConstraint(const ir::Operation& op) {
  return op.name_str() == "sdy.sharding_constraint" || op.name_str() == "sdy.reshard";
}

// GSPMD's `custom_call @Sharding` or Shardy's constraint ops: the value, to
// be held as the op's sharding says.
bool IsShardingConstraint(const ir::Operation& op) {
  ir::Attribute target = op.attr("call_target_name");
  return IsSdyConstraint(op) ||
         (op.name_str() == "stablehlo.custom_call" &&
          target.kind() == ir::Attribute::Kind::kString && target.str() == "Sharding");
}

// An op of a program that is already per device.
bool WorksPerDevice(const ir::Operation& op) {
  static const std::set<std::string, std::less<>> kOps = {
      "stablehlo.all_gather",   "stablehlo.all_reduce",         "stablehlo.reduce_scatter",
      "stablehlo.all_to_all",   "stablehlo.collective_permute", "stablehlo.collective_broadcast",
      "stablehlo.partition_id", "stablehlo.replica_id",         "stablehlo.send",
      "stablehlo.recv",         "sdy.manual_computation"};
  if (kOps.count(op.name_str())) return true;
  ir::Attribute target = op.attr("call_target_name");
  return op.name_str() == "stablehlo.custom_call" &&
         target.kind() == ir::Attribute::Kind::kString &&
         (target.str() == "SPMDFullToShardShape" || target.str() == "SPMDShardToFullShape");
}

bool HasSharding(const ir::AttributeMap& attrs) {
  return attrs.Has("mhlo.sharding") || attrs.Has("sdy.sharding");
}

// A global value's stand-in in the partitioned program.
struct Local {
  ir::Value value;       // this device's tile
  Sharding sharding;     // which tile
  Axes partial;          // axes over which tiles still hold partial results...
  std::string combiner;  // ...to be combined by this op
};

class Partitioner {
 public:
  Partitioner(const ir::Module& module, const Mesh& mesh, PartitionStats* stats)
      : module_(module), mesh_(mesh), stats_(stats) {}

  StatusOr<std::unique_ptr<ir::Function>> Run(const ir::Function& f);

 private:
  StatusOr<Sharding> ShardingOf(const StatusOr<std::optional<ir::HloSharding>>& s,
                                const ir::Type& type) const;
  StatusOr<Sharding> OnMesh(const ir::HloSharding& s, const ir::Type& type) const;
  Status PartitionOp(const ir::Operation& op);
  Status Constrain(const ir::Operation& op);
  Status Split(const ir::Operation& op, const ops::ShardingRule& rule);
  std::vector<Axes> ChooseFactorAxes(const ir::Operation& op, const ops::ShardingRule& rule) const;
  void Whole(const ir::Operation& op);
  void Clone(const ir::Operation& op, ir::ValueMap& map);
  Status ApplyOpSharding(const ir::Operation& op);
  Status Return(const ir::Operation& op, ir::Function& out);
  // `v` held as `target` says: the partial results combined, then axes
  // moved, gathered and sliced, each at most once per (value, sharding).
  ir::Value Reshard(ir::Value v, const Sharding& target);
  void MoveAxes(Local& l, const Sharding& target);
  void GatherAndSlice(Local& l, const Sharding& target);
  std::optional<int64_t> ScatterDim(const Local& l, const Sharding& target) const;

  const ir::Module& module_;
  const Mesh& mesh_;
  PartitionStats* stats_;
  std::unique_ptr<Emitter> emit_;
  std::unordered_map<const ir::ValueImpl*, Local> locals_;
  std::map<std::pair<const ir::ValueImpl*, Sharding>, ir::Value> resharded_;
};

StatusOr<Sharding> Partitioner::ShardingOf(const StatusOr<std::optional<ir::HloSharding>>& s,
                                           const ir::Type& type) const {
  TPUSIM_RETURN_IF_ERROR(s.status());
  if (!s->has_value()) return Sharding::Replicated(type.is_tensor() ? type.rank() : 0);
  return OnMesh(**s, type);
}

StatusOr<Sharding> Partitioner::OnMesh(const ir::HloSharding& s, const ir::Type& type) const {
  TPUSIM_ASSIGN_OR_RETURN(Sharding out, FromHlo(mesh_, s, type.is_tensor() ? type.rank() : 0));
  TPUSIM_RETURN_IF_ERROR(LocalType(mesh_, type, out).status());
  return out;
}

StatusOr<std::unique_ptr<ir::Function>> Partitioner::Run(const ir::Function& f) {
  ir::FunctionType type;
  std::vector<Sharding> shardings;
  for (int i = 0; i < static_cast<int>(f.type().inputs.size()); ++i) {
    const ir::Type& t = f.type().inputs[i];
    auto s = ShardingOf(ir::ArgSharding(module_, f, i), t);
    if (!s.ok()) {
      return s.status()
          .WithContext("argument " + std::to_string(i))
          .WithLocation(f.loc().ToString());
    }
    type.inputs.push_back(*LocalType(mesh_, t, *s));
    shardings.push_back(std::move(*s));
  }
  auto out = std::make_unique<ir::Function>(f.name(), type, f.loc());
  out->set_public(f.is_public());
  out->attrs() = f.attrs();
  ir::Block& block = out->body().AddBlock();
  for (size_t i = 0; i < shardings.size(); ++i) {
    ir::Value arg = block.AddArgument(type.inputs[i], f.entry().argument(i).name());
    locals_[f.entry().argument(i).impl()] = {arg, shardings[i], {}, {}};
    out->arg_attrs()[i] = f.arg_attrs()[i];
    out->arg_attrs()[i].Erase("sdy.sharding");
    out->arg_attrs()[i].Set("mhlo.sharding",
                            ir::Attribute::String(ToHlo(mesh_, shardings[i]).ToString()));
  }
  emit_ = std::make_unique<Emitter>(mesh_, &block, stats_);
  for (const auto& op : f.entry().ops()) {
    emit_->set_location(op->loc());
    Status s = op.get() == f.entry().terminator() ? Return(*op, *out) : PartitionOp(*op);
    if (!s.ok()) return s.WithLocation(op->loc().ToString());
  }
  return out;
}

Status Partitioner::PartitionOp(const ir::Operation& op) {
  if (IsShardingConstraint(op)) return Constrain(op);
  const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
  std::optional<ops::ShardingRule> rule;
  if (def != nullptr && def->sharding_rule) {
    rule = def->sharding_rule(op);
  } else if (compiler::IsElementwise(op)) {
    rule = ops::ElementwiseShardingRule(op);
  }
  if (rule) {
    TPUSIM_RETURN_IF_ERROR(Split(op, *rule));
  } else {
    Whole(op);
  }
  return ApplyOpSharding(op);
}

Status Partitioner::Constrain(const ir::Operation& op) {
  if (op.num_operands() != 1 || op.num_results() != 1) {
    return InvalidArgument(op.name_str() + " constrains one value");
  }
  const ir::Type& t = op.result(0).type();
  Sharding s;
  if (IsSdyConstraint(op)) {
    TPUSIM_ASSIGN_OR_RETURN(ir::HloSharding hlo,
                            ir::SdyShardingToHlo(module_, op.attr("sharding"), t.rank()));
    TPUSIM_ASSIGN_OR_RETURN(s, OnMesh(hlo, t));
  } else {
    TPUSIM_ASSIGN_OR_RETURN(s, ShardingOf(ir::OpSharding(module_, op), t));
  }
  locals_[op.result(0).impl()] = {Reshard(op.operand(0), s), s, {}, {}};
  return Status::Ok();
}

// Factors take the axes their dimensions already have in the operands, the
// first operand first; factors that stay in the result go before reductions,
// so a dot keeps its operands' batch and free shardings and gathers what
// contracts against them (FSDP's weights) rather than the reverse.
std::vector<Axes> Partitioner::ChooseFactorAxes(const ir::Operation& op,
                                                const ops::ShardingRule& rule) const {
  const size_t n = rule.factors.size();
  std::vector<bool> reduction(n, true);
  for (const auto& dims : rule.results) {
    for (int f : dims) {
      if (f >= 0) reduction[f] = false;
    }
  }
  std::vector<Axes> axes(n);
  std::vector<bool> taken(mesh_.num_axes(), false);
  for (bool reductions : {false, true}) {
    if (reductions && rule.combiner.empty()) break;
    for (int i = 0; i < op.num_operands(); ++i) {
      const Sharding& s = locals_.at(op.operand(i).impl()).sharding;
      for (size_t d = 0; d < rule.operands[i].size() && d < s.dims.size(); ++d) {
        const int f = rule.operands[i][d];
        if (f < 0 || reduction[f] != reductions || !axes[f].empty() || !rule.factors[f].shardable ||
            s.dims[d].empty() || rule.factors[f].size % mesh_.Size(s.dims[d]) != 0 ||
            std::any_of(s.dims[d].begin(), s.dims[d].end(), [&](int a) { return taken[a]; })) {
          continue;
        }
        axes[f] = s.dims[d];
        for (int a : axes[f]) taken[a] = true;
      }
    }
  }
  return axes;
}

Status Partitioner::Split(const ir::Operation& op, const ops::ShardingRule& rule) {
  const std::vector<Axes> axes = ChooseFactorAxes(op, rule);
  ir::ValueMap map;
  for (int i = 0; i < op.num_operands(); ++i) {
    Sharding want;
    for (int f : rule.operands[i]) want.dims.push_back(f >= 0 ? axes[f] : Axes{});
    map[op.operand(i).impl()] = Reshard(op.operand(i), want);
  }
  Clone(op, map);
  std::vector<bool> kept(axes.size(), false);
  for (int r = 0; r < op.num_results(); ++r) {
    ir::Value result = map.at(op.result(r).impl());
    Local& l = locals_[op.result(r).impl()];
    l.value = result;
    for (int f : rule.results[r]) {
      l.sharding.dims.push_back(f >= 0 ? axes[f] : Axes{});
      if (f >= 0) kept[f] = true;
    }
    TPUSIM_ASSIGN_OR_RETURN(ir::Type local, LocalType(mesh_, result.type(), l.sharding));
    result.set_type(std::move(local));
  }
  Axes partial;
  for (size_t f = 0; f < axes.size(); ++f) {
    if (!kept[f]) partial.insert(partial.end(), axes[f].begin(), axes[f].end());
  }
  if (partial.empty()) return Status::Ok();
  for (int r = 0; r < op.num_results(); ++r) {
    Local& l = locals_[op.result(r).impl()];
    l.partial = partial;
    l.combiner = rule.combiner;
  }
  return Status::Ok();
}

void Partitioner::Whole(const ir::Operation& op) {
  ir::ValueMap map;
  for (ir::Value v : op.operands()) {
    map[v.impl()] = Reshard(v, Sharding::Replicated(v.type().is_tensor() ? v.type().rank() : 0));
  }
  const bool computes = op.num_operands() > 0;
  Clone(op, map);
  for (int r = 0; r < op.num_results(); ++r) {
    const ir::Type& t = op.result(r).type();
    locals_[op.result(r).impl()] = {
        map.at(op.result(r).impl()), Sharding::Replicated(t.is_tensor() ? t.rank() : 0), {}, {}};
  }
  if (computes) ++stats_->replicated_ops;
}

// Appends a copy of `op` with operands from `map`. Values its regions take
// from the enclosing function are used whole.
void Partitioner::Clone(const ir::Operation& op, ir::ValueMap& map) {
  for (int i = 0; i < op.num_regions(); ++i) {
    ir::Walk(op.region(i), [&](ir::Operation& inner) {
      for (ir::Value v : inner.operands()) {
        if (locals_.count(v.impl()) && !map.count(v.impl())) {
          map[v.impl()] =
              Reshard(v, Sharding::Replicated(v.type().is_tensor() ? v.type().rank() : 0));
        }
      }
    });
  }
  std::unique_ptr<ir::Operation> copy = ir::CloneOp(op, map);
  copy->attrs().Erase("mhlo.sharding");  // they describe the global value
  copy->attrs().Erase("sdy.sharding");
  emit_->Append(std::move(copy));
}

Status Partitioner::ApplyOpSharding(const ir::Operation& op) {
  if (!HasSharding(op.attrs())) return Status::Ok();
  TPUSIM_ASSIGN_OR_RETURN(std::optional<ir::HloSharding> s, ir::OpSharding(module_, op));
  if (!s) return Status::Ok();
  for (int r = 0; r < op.num_results(); ++r) {
    const bool tuple = s->kind == ir::HloSharding::Kind::kTuple;
    if (tuple && r >= static_cast<int>(s->elements.size())) break;
    const ir::Type& t = op.result(r).type();
    TPUSIM_ASSIGN_OR_RETURN(Sharding want, OnMesh(tuple ? s->elements[r] : *s, t));
    ir::Value v = Reshard(op.result(r), want);
    locals_[op.result(r).impl()] = {v, want, {}, {}};
  }
  return Status::Ok();
}

Status Partitioner::Return(const ir::Operation& op, ir::Function& out) {
  std::vector<ir::Value> values;
  ir::FunctionType type = out.type();
  out.result_attrs().resize(op.num_operands());
  const ir::Function& f = *module_.Lookup(out.name());
  for (int i = 0; i < op.num_operands(); ++i) {
    ir::Value v = op.operand(i);
    const Local& l = locals_.at(v.impl());
    Sharding want = l.sharding;
    if (i < static_cast<int>(f.result_attrs().size()) && HasSharding(f.result_attrs()[i])) {
      auto s = ShardingOf(ir::ResultSharding(module_, f, i), v.type());
      if (!s.ok()) return s.status().WithContext("result " + std::to_string(i));
      want = *s;
    }
    values.push_back(Reshard(v, want));
    type.results.push_back(values.back().type());
    if (i < static_cast<int>(f.result_attrs().size())) out.result_attrs()[i] = f.result_attrs()[i];
    out.result_attrs()[i].Erase("sdy.sharding");
    out.result_attrs()[i].Set("mhlo.sharding",
                              ir::Attribute::String(ToHlo(mesh_, want).ToString()));
  }
  out.set_type(std::move(type));
  emit_->Emit(op.name_str(), std::move(values), {});
  return Status::Ok();
}

// The dimension a reduce-scatter can split `l`'s partial results along to
// give `target` at once: `target` adds the partial axes to its sharding.
std::optional<int64_t> Partitioner::ScatterDim(const Local& l, const Sharding& target) const {
  std::optional<int64_t> dim;
  for (size_t d = 0; d < target.dims.size(); ++d) {
    const Axes& have = l.sharding.dims[d];
    const Axes& want = target.dims[d];
    if (want == have) continue;
    Axes joined = have;
    joined.insert(joined.end(), l.partial.begin(), l.partial.end());
    if (dim || want != joined) return std::nullopt;
    dim = static_cast<int64_t>(d);
  }
  return dim;
}

ir::Value Partitioner::Reshard(ir::Value v, const Sharding& target) {
  Local& l = locals_.at(v.impl());
  const auto key = std::make_pair(v.impl(), target);
  if (auto it = resharded_.find(key); it != resharded_.end()) return it->second;
  if (!l.partial.empty()) {
    if (std::optional<int64_t> d = ScatterDim(l, target)) {
      ir::Value scattered = emit_->ReduceScatter(l.value, *d, l.partial, l.combiner);
      resharded_.emplace(key, scattered);
      return scattered;
    }
    l.value = emit_->AllReduce(l.value, l.partial, l.combiner);
    l.partial.clear();
  }
  if (l.sharding == target) return l.value;
  Local moving = {l.value, l.sharding, {}, {}};
  MoveAxes(moving, target);
  GatherAndSlice(moving, target);
  resharded_.emplace(key, moving.value);
  return moving.value;
}

// Axes leaving the minor end of one dimension for the minor end of another
// move in one all-to-all, as XLA reshards, instead of a gather and a slice.
void Partitioner::MoveAxes(Local& l, const Sharding& target) {
  std::vector<Axes>& dims = l.sharding.dims;
  for (size_t from = 0; from < dims.size(); ++from) {
    const Axes& keep = target.dims[from];
    if (dims[from].size() <= keep.size() ||
        !std::equal(keep.begin(), keep.end(), dims[from].begin())) {
      continue;
    }
    const Axes axes(dims[from].begin() + static_cast<int64_t>(keep.size()), dims[from].end());
    for (size_t to = 0; to < dims.size(); ++to) {
      Axes joined = dims[to];
      joined.insert(joined.end(), axes.begin(), axes.end());
      const Axes& want = target.dims[to];
      if (to == from || joined.size() > want.size() ||
          !std::equal(joined.begin(), joined.end(), want.begin())) {
        continue;
      }
      l.value =
          emit_->AllToAll(l.value, static_cast<int64_t>(to), static_cast<int64_t>(from), axes);
      dims[from] = keep;
      dims[to] = std::move(joined);
      break;
    }
  }
}

// Gathers each dimension whose axes do not begin `target`'s, then slices
// what `target` splits further.
void Partitioner::GatherAndSlice(Local& l, const Sharding& target) {
  std::vector<Axes> slices(target.dims.size());
  bool slice = false;
  for (size_t d = 0; d < target.dims.size(); ++d) {
    const Axes& have = l.sharding.dims[d];
    const Axes& want = target.dims[d];
    const bool prefix =
        have.size() <= want.size() && std::equal(have.begin(), have.end(), want.begin());
    if (!prefix) l.value = emit_->AllGather(l.value, static_cast<int64_t>(d), have);
    slices[d].assign(want.begin() + static_cast<int64_t>(prefix ? have.size() : 0), want.end());
    slice |= !slices[d].empty();
  }
  if (slice) l.value = emit_->Slice(l.value, slices);
  l.sharding = target;
}

}  // namespace

bool IsGlobalProgram(const ir::Module& module) {
  if (module.attrs().Has(kPartitioned) ||
      IntAttr(module.attrs().Get("mhlo.num_partitions"), 1) <= 1 ||
      IntAttr(module.attrs().Get("mhlo.num_replicas"), 1) != 1) {
    return false;
  }
  bool sharded = false, per_device = false;
  for (const auto& f : module.functions()) {
    for (const auto& attrs : f->arg_attrs()) sharded |= HasSharding(attrs);
    for (const auto& attrs : f->result_attrs()) sharded |= HasSharding(attrs);
    ir::Walk(f->body(), [&](ir::Operation& op) {
      per_device |= WorksPerDevice(op);
      sharded |= IsShardingConstraint(op) || HasSharding(op.attrs());
    });
  }
  return sharded && !per_device;
}

StatusOr<std::unique_ptr<ir::Module>> Partition(const ir::Module& module, const std::string& entry,
                                                PartitionStats* stats) {
  PartitionStats local;
  if (stats == nullptr) stats = &local;
  const Mesh mesh(std::max<int64_t>(1, IntAttr(module.attrs().Get("mhlo.num_partitions"), 1)));
  stats->devices = mesh.devices();
  std::unique_ptr<ir::Module> out = ir::CloneModule(module);
  compiler::PassContext ctx{.entry = entry};
  TPUSIM_RETURN_IF_ERROR(compiler::RunInlining(*out, ctx));
  const ir::Function* f = out->Lookup(entry);
  if (f == nullptr) return NotFound("no function @" + entry);
  Partitioner partitioner(*out, mesh, stats);
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Function> partitioned, partitioner.Run(*f));
  out->RemoveFunction(entry);
  out->AddFunction(std::move(partitioned))->Renumber();
  out->attrs().Set(std::string(kPartitioned), ir::Attribute::Unit());
  Status valid = verify::VerifyModule(*out);
  if (!valid.ok()) return Internal("the partitioned program is invalid: " + valid.ToString());
  return out;
}

}  // namespace tpusim::spmd
