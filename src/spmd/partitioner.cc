#include "tpusim/spmd/partitioner.h"

#include <algorithm>

#include "spmd/annotations.h"
#include "spmd/emitter.h"
#include "spmd/factors.h"
#include "spmd/mesh.h"
#include "spmd/propagation.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::spmd {
namespace {

// Set on a partitioned module, so that it is never partitioned again.
constexpr std::string_view kPartitioned = "tpusim.spmd_partitioned";

int64_t IntAttr(const ir::Attribute& a, int64_t otherwise) {
  return a.kind() == ir::Attribute::Kind::kInt ? a.int_value() : otherwise;
}

Sharding ReplicatedFor(ir::Value v) {
  return Sharding::Replicated(v.type().is_tensor() ? v.type().rank() : 0);
}

// A global value's stand-in in the partitioned program.
struct Local {
  ir::Value value;       // this device's tile
  Sharding sharding;     // which tile
  Axes partial;          // axes over which tiles still hold partial results...
  std::string combiner;  // ...to be combined by this op
};

// Partitions one function: a forward walk over its entry block that
// appends each op's per-device form, and the moves its operands need, to a
// new function.
class Partitioner {
 public:
  Partitioner(const ir::Module& module, const Mesh& mesh, PartitionStats* stats)
      : annotations_(module, mesh), mesh_(mesh), stats_(stats) {}

  StatusOr<std::unique_ptr<ir::Function>> Run(const ir::Function& f);

 private:
  StatusOr<std::unique_ptr<ir::Function>> Signature(const ir::Function& f);
  Status PartitionOp(const ir::Operation& op);
  Status Split(const ir::Operation& op, const ops::ShardingRule& rule);
  FactorAxes ChooseFactorAxes(const ir::Operation& op, const ops::ShardingRule& rule) const;
  void Whole(const ir::Operation& op);
  void Clone(const ir::Operation& op, ir::ValueMap& map);
  Status Return(const ir::Function& f, const ir::Operation& op, ir::Function& out);
  // `v` held as `target` says: the partial results combined, then axes
  // moved, gathered and sliced, each at most once per (value, sharding).
  ir::Value Reshard(ir::Value v, const Sharding& target);
  std::optional<int64_t> ScatterDim(const Local& l, const Sharding& target) const;
  void MoveAxes(Local& l, const Sharding& target);
  void GatherAndSlice(Local& l, const Sharding& target);

  Annotations annotations_;
  const Mesh& mesh_;
  PartitionStats* stats_;
  Preferences wishes_;
  std::unique_ptr<Emitter> emit_;
  std::unordered_map<const ir::ValueImpl*, Local> locals_;
  std::map<std::pair<const ir::ValueImpl*, Sharding>, ir::Value> resharded_;
};

StatusOr<std::unique_ptr<ir::Function>> Partitioner::Run(const ir::Function& f) {
  TPUSIM_ASSIGN_OR_RETURN(wishes_, PropagateBackward(f, annotations_, mesh_));
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Function> out, Signature(f));
  emit_ = std::make_unique<Emitter>(mesh_, &out->entry(), stats_);
  for (const auto& op : f.entry().ops()) {
    emit_->set_location(op->loc());
    Status s = op.get() == f.entry().terminator() ? Return(f, *op, *out) : PartitionOp(*op);
    if (!s.ok()) return s.WithLocation(op->loc().ToString());
  }
  return out;
}

// The partitioned function's arguments: each device's tiles, their
// shardings in `mhlo.sharding`.
StatusOr<std::unique_ptr<ir::Function>> Partitioner::Signature(const ir::Function& f) {
  ir::FunctionType type;
  std::vector<Sharding> shardings;
  for (int i = 0; i < static_cast<int>(f.type().inputs.size()); ++i) {
    auto s = annotations_.Arg(f, i);
    if (!s.ok()) {
      return s.status()
          .WithContext("argument " + std::to_string(i))
          .WithLocation(f.loc().ToString());
    }
    type.inputs.push_back(*LocalType(mesh_, f.type().inputs[i], *s));
    shardings.push_back(std::move(*s));
  }
  auto out = std::make_unique<ir::Function>(f.name(), type, f.loc());
  out->set_public(f.is_public());
  out->attrs() = f.attrs();
  ir::Block& block = out->body().AddBlock();
  for (size_t i = 0; i < shardings.size(); ++i) {
    ir::Value arg = block.AddArgument(type.inputs[i], f.entry().argument(i).name());
    locals_[f.entry().argument(i).impl()] = {arg, shardings[i], {}, {}};
    ir::AttributeMap& attrs = out->arg_attrs()[i] = f.arg_attrs()[i];
    attrs.Erase("sdy.sharding");
    attrs.Set("mhlo.sharding", ir::Attribute::String(ToHlo(mesh_, shardings[i]).ToString()));
  }
  return out;
}

Status Partitioner::PartitionOp(const ir::Operation& op) {
  if (IsShardingConstraint(op)) {
    TPUSIM_ASSIGN_OR_RETURN(Sharding s, annotations_.Constraint(op));
    locals_[op.result(0).impl()] = {Reshard(op.operand(0), s), s, {}, {}};
    return Status::Ok();
  }
  if (std::optional<ops::ShardingRule> rule = RuleOf(op)) {
    TPUSIM_RETURN_IF_ERROR(Split(op, *rule));
  } else {
    Whole(op);
  }
  // An op's own sharding moves its results as a constraint would.
  TPUSIM_ASSIGN_OR_RETURN(auto own, annotations_.OpResults(op));
  for (int r = 0; r < op.num_results(); ++r) {
    if (!own[r]) continue;
    ir::Value v = Reshard(op.result(r), *own[r]);
    locals_[op.result(r).impl()] = {v, *own[r], {}, {}};
  }
  return Status::Ok();
}

// Factors take the axes their dimensions already have in the operands, the
// first operand first, and those that stay in the result before reductions:
// a dot keeps its operands' batch and free shardings and gathers what
// contracts against them (FSDP's weights) rather than the reverse. The
// users' wishes for the results fill what the operands leave open.
FactorAxes Partitioner::ChooseFactorAxes(const ir::Operation& op,
                                         const ops::ShardingRule& rule) const {
  FactorAxes factors(mesh_, rule);
  for (bool reductions : {false, true}) {
    for (int i = 0; i < op.num_operands(); ++i) {
      factors.OfferValue(rule.operands[i], locals_.at(op.operand(i).impl()).sharding, reductions);
    }
  }
  for (int r = 0; r < op.num_results(); ++r) {
    auto it = wishes_.find(op.result(r).impl());
    if (it != wishes_.end()) factors.OfferValue(rule.results[r], it->second, false);
  }
  return factors;
}

Status Partitioner::Split(const ir::Operation& op, const ops::ShardingRule& rule) {
  const FactorAxes factors = ChooseFactorAxes(op, rule);
  ir::ValueMap map;
  for (int i = 0; i < op.num_operands(); ++i) {
    map[op.operand(i).impl()] = Reshard(op.operand(i), factors.Of(rule.operands[i]));
  }
  Clone(op, map);
  for (int r = 0; r < op.num_results(); ++r) {
    ir::Value result = map.at(op.result(r).impl());
    const Sharding s = factors.Of(rule.results[r]);
    TPUSIM_ASSIGN_OR_RETURN(ir::Type local, LocalType(mesh_, result.type(), s));
    result.set_type(std::move(local));
    locals_[op.result(r).impl()] = {result, s, {}, {}};
  }
  Axes partial;
  for (size_t f = 0; f < factors.axes().size(); ++f) {
    const Axes& axes = factors.axes()[f];
    if (factors.IsReduction(static_cast<int>(f)))
      partial.insert(partial.end(), axes.begin(), axes.end());
  }
  for (int r = 0; r < op.num_results() && !partial.empty(); ++r) {
    Local& l = locals_[op.result(r).impl()];
    l.partial = partial;
    l.combiner = rule.combiner;
  }
  return Status::Ok();
}

void Partitioner::Whole(const ir::Operation& op) {
  ir::ValueMap map;
  for (ir::Value v : op.operands()) map[v.impl()] = Reshard(v, ReplicatedFor(v));
  Clone(op, map);
  for (ir::Value r : op.results()) {
    locals_[r.impl()] = {map.at(r.impl()), ReplicatedFor(r), {}, {}};
  }
  if (op.num_operands() > 0) ++stats_->replicated_ops;
}

// Appends a copy of `op` with operands from `map`. Values its regions take
// from the enclosing function are used whole.
void Partitioner::Clone(const ir::Operation& op, ir::ValueMap& map) {
  for (int i = 0; i < op.num_regions(); ++i) {
    ir::Walk(op.region(i), [&](ir::Operation& inner) {
      for (ir::Value v : inner.operands()) {
        if (locals_.count(v.impl()) && !map.count(v.impl())) {
          map[v.impl()] = Reshard(v, ReplicatedFor(v));
        }
      }
    });
  }
  std::unique_ptr<ir::Operation> copy = ir::CloneOp(op, map);
  copy->attrs().Erase("mhlo.sharding");  // they describe the global value
  copy->attrs().Erase("sdy.sharding");
  emit_->Append(std::move(copy));
}

// Results leave as the function's result shardings say, or as they are.
Status Partitioner::Return(const ir::Function& f, const ir::Operation& op, ir::Function& out) {
  std::vector<ir::Value> values;
  ir::FunctionType type = out.type();
  out.result_attrs().resize(op.num_operands());
  for (int i = 0; i < op.num_operands(); ++i) {
    ir::Value v = op.operand(i);
    const bool annotated =
        i < static_cast<int>(f.result_attrs().size()) && HasSharding(f.result_attrs()[i]);
    Sharding want = locals_.at(v.impl()).sharding;
    if (annotated) {
      auto s = annotations_.Result(f, i);
      if (!s.ok()) return s.status().WithContext("result " + std::to_string(i));
      want = std::move(*s);
    }
    values.push_back(Reshard(v, want));
    type.results.push_back(values.back().type());
    ir::AttributeMap& attrs = out.result_attrs()[i];
    if (i < static_cast<int>(f.result_attrs().size())) attrs = f.result_attrs()[i];
    attrs.Erase("sdy.sharding");
    attrs.Set("mhlo.sharding", ir::Attribute::String(ToHlo(mesh_, want).ToString()));
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
