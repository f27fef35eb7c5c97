// Manual regions (JAX's shard_map) inside a global program are kept as
// written: their ops are already per device. Under Shardy the region is an
// sdy.manual_computation, whose operands arrive as the tiles its
// in_shardings name and whose body is copied in; under GSPMD it lies
// between SPMDFullToShardShape and SPMDShardToFullShape markers, and every
// value computed from a marked tile is per device and copied as is.
#include <algorithm>

#include "spmd/function_partitioner.h"

namespace tpusim::spmd {
namespace {

// A tile of `what` must be of the type the region works on.
Status CheckTile(const ir::Type& have, const ir::Type& want, const std::string& what) {
  if (have == want) return Status::Ok();
  return InvalidArgument(what + " is split into tiles of " + have.ToString() +
                         ", but the manual region works on " + want.ToString());
}

// `sharding` (a #sdy.sharding) with only the axes in `axes` left.
ir::Attribute OverAxes(const ir::Attribute& sharding, const std::vector<std::string>& axes) {
  std::vector<ir::Attribute> dims;
  for (const ir::Attribute& dim : sharding.Get("dims").array()) {
    std::vector<ir::Attribute> kept;
    for (const ir::Attribute& axis : dim.array()) {
      if (std::find(axes.begin(), axes.end(), axis.str()) != axes.end()) kept.push_back(axis);
    }
    dims.push_back(ir::Attribute::Array(std::move(kept)));
  }
  return ir::Attribute::Struct("sdy.sharding", {{"mesh", sharding.Get("mesh")},
                                                {"dims", ir::Attribute::Array(std::move(dims))}});
}

}  // namespace

bool FunctionPartitioner::IsManual(const ir::Operation& op) const {
  return std::any_of(op.operands().begin(), op.operands().end(),
                     [&](ir::Value v) { return manual_.count(v.impl()) > 0; });
}

Status FunctionPartitioner::PartitionManualComputation(const ir::Operation& op) {
  std::vector<ir::Attribute> in = op.attr("in_shardings").Get("shardings").array();
  std::vector<ir::Attribute> out = op.attr("out_shardings").Get("shardings").array();
  const ir::Block& body = op.region(0).front();
  std::vector<std::string> manual;
  for (const ir::Attribute& axis : op.attr("manual_axes").Get("axes").array()) {
    manual.push_back(axis.str());
  }
  // The body is per device along the manual axes and whole along the free
  // ones, as tpusim runs sdy.manual_computation: the free axes replicate.
  for (auto* list : {&in, &out}) {
    for (ir::Attribute& s : *list) s = OverAxes(s, manual);
  }
  ir::ValueMap map;
  for (int i = 0; i < op.num_operands(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(Sharding s, annotations_.Sdy(in[i], op.operand(i).type()));
    ir::Value tile = Reshard(op.operand(i), s);
    TPUSIM_RETURN_IF_ERROR(
        CheckTile(tile.type(), body.argument(i).type(), "operand " + std::to_string(i)));
    map[body.argument(i).impl()] = tile;
  }
  for (const auto& inner : body.ops()) {
    if (inner.get() == body.terminator()) break;
    emit_->Append(ir::CloneOp(*inner, map));
  }
  const ir::Operation& ret = *body.terminator();
  for (int r = 0; r < op.num_results(); ++r) {
    const ir::Type& whole = op.result(r).type();
    TPUSIM_ASSIGN_OR_RETURN(Sharding s, annotations_.Sdy(out[r], whole));
    ir::Value tile = map.at(ret.operand(r).impl());
    const ir::Type want = LocalType(mesh_, whole, s);
    TPUSIM_RETURN_IF_ERROR(CheckTile(want, tile.type(), "result " + std::to_string(r)));
    locals_[op.result(r).impl()] = {tile, s, {}, {}};
  }
  return Status::Ok();
}

// SPMDFullToShardShape: the operand's tiles as they are, from here on per
// device; SPMDShardToFullShape: per-device tiles that make up a global
// value split as its sharding says; any other op of a per-device value is
// copied as is.
Status FunctionPartitioner::PartitionGspmdManual(const ir::Operation& op) {
  if (IsCustomCall(op, "SPMDShardToFullShape")) {
    TPUSIM_ASSIGN_OR_RETURN(auto own, annotations_.OpResults(op));
    const ir::Type& whole = op.result(0).type();
    const Sharding s = own[0] ? *own[0] : ReplicatedFor(op.result(0));
    const ir::Type want = LocalType(mesh_, whole, s);
    ir::Value tile = locals_.at(op.operand(0).impl()).value;
    TPUSIM_RETURN_IF_ERROR(CheckTile(want, tile.type(), "the result"));
    locals_[op.result(0).impl()] = {tile, s, {}, {}};
    return Status::Ok();
  }
  if (IsCustomCall(op, "SPMDFullToShardShape")) {
    ir::Value v = op.operand(0);
    ir::Value tile = Reshard(v, locals_.at(v.impl()).sharding);
    TPUSIM_RETURN_IF_ERROR(CheckTile(tile.type(), op.result(0).type(), "the operand"));
    locals_[op.result(0).impl()] = {tile, ReplicatedFor(op.result(0)), {}, {}};
    manual_.insert(op.result(0).impl());
    return Status::Ok();
  }
  ir::ValueMap map;
  for (ir::Value v : op.operands()) {
    map[v.impl()] =
        manual_.count(v.impl()) ? locals_.at(v.impl()).value : Reshard(v, ReplicatedFor(v));
  }
  Clone(op, map);
  for (ir::Value r : op.results()) {
    locals_[r.impl()] = {map.at(r.impl()), ReplicatedFor(r), {}, {}};
    manual_.insert(r.impl());
  }
  return Status::Ok();
}

}  // namespace tpusim::spmd
