#include "spmd/function_partitioner.h"

#include <algorithm>
#include <functional>

#include "tpusim/ops/op_def.h"

namespace tpusim::spmd {

StatusOr<std::unique_ptr<ir::Function>> FunctionPartitioner::Run(const ir::Function& f) {
  TPUSIM_ASSIGN_OR_RETURN(wishes_, PropagateBackward(module_, f, annotations_, mesh_));
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Function> out, Signature(f));
  emit_ = std::make_unique<Emitter>(mesh_, &out->entry(), stats_);
  resharded_.emplace_back();
  TPUSIM_RETURN_IF_ERROR(PartitionOps(f.entry()));
  const ir::Operation& ret = *f.entry().terminator();
  emit_->set_location(ret.loc());
  TPUSIM_RETURN_IF_ERROR(Return(f, ret, *out).WithLocation(ret.loc().ToString()));
  return out;
}

Status FunctionPartitioner::PartitionOps(const ir::Block& in) {
  for (const auto& op : in.ops()) {
    if (op.get() == in.terminator()) break;
    emit_->set_location(op->loc());
    Status s = PartitionOp(*op);
    if (!s.ok()) return s.WithLocation(op->loc().ToString());
  }
  return Status::Ok();
}

// The partitioned function's arguments: each device's tiles, their
// shardings in `mhlo.sharding`.
StatusOr<std::unique_ptr<ir::Function>> FunctionPartitioner::Signature(const ir::Function& f) {
  ir::FunctionType type;
  std::vector<Sharding> shardings;
  for (int i = 0; i < static_cast<int>(f.type().inputs.size()); ++i) {
    auto s = annotations_.Arg(f, i);
    if (!s.ok()) {
      return s.status()
          .WithContext("argument " + std::to_string(i))
          .WithLocation(f.loc().ToString());
    }
    type.inputs.push_back(LocalType(mesh_, f.type().inputs[i], *s));
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
    NoteGlobalShape(f.type().inputs[i], shardings[i], attrs);
  }
  return out;
}

Status FunctionPartitioner::PartitionOp(const ir::Operation& op) {
  if (op.name_str() == "sdy.manual_computation") return PartitionManualComputation(op);
  if (IsManual(op) || IsCustomCall(op, "SPMDFullToShardShape")) return PartitionGspmdManual(op);
  if (WorksPerDevice(op) && op.name_str() != "stablehlo.partition_id" &&
      op.name_str() != "stablehlo.replica_id") {
    return InvalidArgument(op.name_str() +
                           " outside the manual regions of a global program: only per-device "
                           "programs may exchange data themselves");
  }
  if (IsShardingConstraint(op)) {
    TPUSIM_ASSIGN_OR_RETURN(Sharding s, annotations_.Constraint(op));
    locals_[op.result(0).impl()] = {Reshard(op.operand(0), s), s, {}, {}};
    return Status::Ok();
  }
  const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
  if (op.name_str() == "stablehlo.while") {
    TPUSIM_RETURN_IF_ERROR(PartitionWhile(op));
  } else if (def != nullptr && def->control_flow && op.num_regions() > 0) {
    TPUSIM_RETURN_IF_ERROR(PartitionBranches(op));
  } else if (AddsPartials(op)) {
    // Done: the sum stays partial.
  } else if (std::optional<ops::ShardingRule> rule = RuleOf(op)) {
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
FactorAxes FunctionPartitioner::ChooseFactorAxes(const ir::Operation& op,
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

// Partial sums add before they are combined: a + b over the same tiles,
// both partial over the same axes, is itself partial, so one all-reduce
// serves both (a parallel block's attention and MLP outputs).
bool FunctionPartitioner::AddsPartials(const ir::Operation& op) {
  if (op.name_str() != "stablehlo.add" || op.num_operands() != 2) return false;
  const Local& a = locals_.at(op.operand(0).impl());
  const Local& b = locals_.at(op.operand(1).impl());
  if (a.partial.empty() || a.partial != b.partial || a.combiner != "stablehlo.add" ||
      b.combiner != a.combiner || !(a.sharding == b.sharding)) {
    return false;
  }
  ir::ValueMap map = {{op.operand(0).impl(), a.value}, {op.operand(1).impl(), b.value}};
  ir::Operation* copy = Clone(op, map);
  ir::Value sum = copy->result(0);
  sum.set_type(a.value.type());
  locals_[op.result(0).impl()] = {sum, a.sharding, a.partial, a.combiner};
  return true;
}

Status FunctionPartitioner::Split(const ir::Operation& op, const ops::ShardingRule& rule) {
  const FactorAxes factors = ChooseFactorAxes(op, rule);
  ir::ValueMap map;
  for (int i = 0; i < op.num_operands(); ++i) {
    const Sharding want = factors.Of(rule.operands[i]);
    NoteConflict(op, i, want);
    map[op.operand(i).impl()] = Reshard(op.operand(i), want);
  }
  MaskPadding(op, rule, factors, map);
  AddHalos(op, rule, factors, map);
  ir::Operation* copy = Clone(op, map);
  DropSplitPadding(rule, factors, *copy);
  for (const std::string& key : rule.local_sizes) {
    const ir::Shape& whole = op.operand(0).type().shape();
    const ir::Shape& part = copy->operand(0).type().shape();
    std::vector<int64_t> sizes = copy->attr(key).AsInts();
    for (size_t d = 0; d < sizes.size() && d < whole.size(); ++d) {
      if (sizes[d] == whole[d]) sizes[d] = part[d];
    }
    copy->attrs().Set(key, ir::Attribute::DenseArray(ir::ElementType::kSI64, sizes));
  }
  for (int r = 0; r < op.num_results(); ++r) {
    ir::Value result = map.at(op.result(r).impl());
    const Sharding s = factors.Of(rule.results[r]);
    result.set_type(LocalType(mesh_, result.type(), s));
    locals_[op.result(r).impl()] = {result, s, {}, {}};
  }
  Axes partial;
  for (size_t f = 0; f < factors.axes().size(); ++f) {
    const Axes& axes = factors.axes()[f];
    if (factors.IsReduction(static_cast<int>(f)))
      partial.insert(partial.end(), axes.begin(), axes.end());
  }
  for (int r = 0; r < op.num_results(); ++r) {
    Axes summed = partial;
    if (r < std::ssize(rule.summed)) {
      for (int f : rule.summed[r]) {
        summed.insert(summed.end(), factors.axes()[f].begin(), factors.axes()[f].end());
      }
    }
    if (summed.empty()) continue;
    Local& l = locals_[op.result(r).impl()];
    l.partial = std::move(summed);
    l.combiner = rule.combiner;
  }
  return Status::Ok();
}

std::optional<ir::Value> FunctionPartitioner::PadValue(const ir::Operation& op,
                                                       const ops::ShardingRule& rule, int i,
                                                       const ir::ValueMap& map) const {
  const int pad = i < static_cast<int>(rule.pad_values.size()) ? rule.pad_values[i] : -1;
  if (pad < 0) return std::nullopt;
  return map.at(op.operand(pad).impl());
}

namespace {

// Calls fn(i, dim, factor, local value) for each dimension of each
// distinct operand of `op` that a factor the op splits covers.
void ForSplitDims(const ir::Operation& op, const ops::ShardingRule& rule, const FactorAxes& factors,
                  ir::ValueMap& map, const std::function<void(int, int64_t, int, ir::Value&)>& fn) {
  std::unordered_set<const ir::ValueImpl*> done;
  for (int i = 0; i < op.num_operands(); ++i) {
    if (!done.insert(op.operand(i).impl()).second) continue;  // an operand used twice
    for (size_t d = 0; d < rule.operands[i].size(); ++d) {
      const int f = rule.operands[i][d];
      if (f >= 0 && !factors.axes()[f].empty()) {
        fn(i, static_cast<int64_t>(d), f, map[op.operand(i).impl()]);
      }
    }
  }
}

}  // namespace

// A reduction reads every row of its operands, the padding of an uneven
// split too: it must hold the value that changes nothing.
void FunctionPartitioner::MaskPadding(const ir::Operation& op, const ops::ShardingRule& rule,
                                      const FactorAxes& factors, ir::ValueMap& map) {
  ForSplitDims(op, rule, factors, map, [&](int i, int64_t dim, int f, ir::Value& v) {
    const int64_t size = op.operand(i).type().dim(dim);
    if (!factors.IsReduction(f) || size % mesh_.Size(factors.axes()[f]) == 0) return;
    v = emit_->Mask(v, dim, factors.axes()[f], size, PadValue(op, rule, i, map));
  });
}

// Each device's windows along a split dimension read rows of its
// neighbours' parts: they come with the operand.
void FunctionPartitioner::AddHalos(const ir::Operation& op, const ops::ShardingRule& rule,
                                   const FactorAxes& factors, ir::ValueMap& map) {
  ForSplitDims(op, rule, factors, map, [&](int i, int64_t dim, int f, ir::Value& v) {
    const auto& w = rule.factors[f].window;
    if (!w) return;
    v = emit_->Halo(v, dim, factors.axes()[f], w->HaloLo(), w->HaloHi(),
                    PadValue(op, rule, i, map));
  });
}

// The halos stand for a split dimension's padding on the devices.
void FunctionPartitioner::DropSplitPadding(const ops::ShardingRule& rule, const FactorAxes& factors,
                                           ir::Operation& op) {
  ir::Attribute padding = op.attr(rule.padding);
  if (rule.padding.empty() || !padding) return;
  std::vector<int64_t> rows = padding.AsInts();
  for (size_t f = 0; f < rule.factors.size(); ++f) {
    const auto& w = rule.factors[f].window;
    if (!w || factors.axes()[f].empty() || 2 * w->padding_row + 1 >= std::ssize(rows)) continue;
    rows[2 * w->padding_row] = rows[2 * w->padding_row + 1] = 0;
  }
  op.attrs().Set(rule.padding, I64Matrix(rows, 2));
}

// An operand split in a way the op cannot use loses some of its axes (a
// gather or an all-to-all): the shardings conflict, and the report says
// where.
void FunctionPartitioner::NoteConflict(const ir::Operation& op, int i, const Sharding& want) {
  const Sharding& have = locals_.at(op.operand(i).impl()).sharding;
  for (size_t d = 0; d < have.dims.size() && d < want.dims.size(); ++d) {
    const Axes& h = have.dims[d];
    const Axes& w = want.dims[d];
    if (h.size() > w.size() || !std::equal(h.begin(), h.end(), w.begin())) {
      stats_->conflicts.push_back(op.loc().ToString() + ": " + op.name_str() + " operand " +
                                  std::to_string(i) + " moves from " + have.ToString() + " to " +
                                  want.ToString());
      return;
    }
  }
}

void FunctionPartitioner::Whole(const ir::Operation& op) {
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
ir::Operation* FunctionPartitioner::Clone(const ir::Operation& op, ir::ValueMap& map) {
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
  return emit_->Append(std::move(copy));
}

// Results leave as the function's result shardings say, or as they are.
Status FunctionPartitioner::Return(const ir::Function& f, const ir::Operation& op,
                                   ir::Function& out) {
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
    NoteGlobalShape(v.type(), want, attrs);
  }
  out.set_type(std::move(type));
  emit_->Emit(op.name_str(), std::move(values), {});
  return Status::Ok();
}

void FunctionPartitioner::NoteGlobalShape(const ir::Type& global, const Sharding& s,
                                          ir::AttributeMap& attrs) const {
  if (SplitsEvenly(mesh_, global, s)) return;
  attrs.Set(std::string(ir::kGlobalShape),
            ir::Attribute::DenseArray(ir::ElementType::kSI64, global.shape()));
}

}  // namespace tpusim::spmd
