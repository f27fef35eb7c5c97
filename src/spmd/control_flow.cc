// While loops, if and case: their regions are partitioned like the
// function's body, so a loop over layers keeps its weights and activations
// split. A loop carries each value as its operand comes in and moves each
// iteration's results back to that; the branches of an if or a case return
// their results as the first branch leaves them.
#include "spmd/function_partitioner.h"

namespace tpusim::spmd {
namespace {

std::vector<ir::NamedAttribute> OwnAttrs(const ir::Operation& op) {
  std::vector<ir::NamedAttribute> attrs;
  for (const auto& [key, value] : op.attrs().entries()) {
    if (key != "mhlo.sharding" && key != "sdy.sharding") attrs.emplace_back(key, value);
  }
  return attrs;
}

}  // namespace

Status FunctionPartitioner::PartitionRegion(const ir::Region& region, ir::Region& out,
                                            const std::vector<Sharding>& args,
                                            std::vector<std::optional<Sharding>>& results) {
  if (region.num_blocks() != 1) return Unimplemented("partitioning a region of several blocks");
  const ir::Block& in = region.front();
  ir::Block& block = out.AddBlock();
  for (int i = 0; i < in.num_arguments(); ++i) {
    ir::Value a = in.argument(i);
    const ir::Type t = LocalType(mesh_, a.type(), args[i]);
    locals_[a.impl()] = {block.AddArgument(t, a.name()), args[i], {}, {}};
  }
  Enter(&block);
  Status s = PartitionOps(in);
  const ir::Operation* ret = in.terminator();
  if (s.ok() && (ret == nullptr || ret->num_operands() != static_cast<int>(results.size()))) {
    s = InvalidArgument("a region returns " + std::to_string(ret ? ret->num_operands() : 0) +
                        " values for " + std::to_string(results.size()));
  }
  if (s.ok()) {
    emit_->set_location(ret->loc());
    std::vector<ir::Value> values;
    for (int i = 0; i < ret->num_operands(); ++i) {
      ir::Value v = ret->operand(i);
      if (!results[i]) results[i] = locals_.at(v.impl()).sharding;
      values.push_back(Reshard(v, *results[i]));
    }
    emit_->Emit(ret->name_str(), std::move(values), {});
  }
  Leave();
  return s;
}

Status FunctionPartitioner::PartitionWhile(const ir::Operation& op) {
  if (op.num_regions() != 2) return InvalidArgument("stablehlo.while needs two regions");
  std::vector<Sharding> carried;
  std::vector<ir::Value> operands;
  std::vector<ir::Type> types;
  for (ir::Value v : op.operands()) {
    carried.push_back(locals_.at(v.impl()).sharding);
    operands.push_back(Reshard(v, carried.back()));
    types.push_back(operands.back().type());
  }
  ir::Operation* loop = emit_->Emit(op.name_str(), operands, types, OwnAttrs(op));
  std::vector<std::optional<Sharding>> condition = {Sharding::Replicated(0)};
  TPUSIM_RETURN_IF_ERROR(PartitionRegion(op.region(0), loop->AddRegion(), carried, condition));
  std::vector<std::optional<Sharding>> next(carried.begin(), carried.end());
  TPUSIM_RETURN_IF_ERROR(PartitionRegion(op.region(1), loop->AddRegion(), carried, next));
  for (int r = 0; r < op.num_results(); ++r) {
    locals_[op.result(r).impl()] = {loop->result(r), carried[r], {}, {}};
  }
  return Status::Ok();
}

Status FunctionPartitioner::PartitionBranches(const ir::Operation& op) {
  std::vector<ir::Value> operands;
  for (ir::Value v : op.operands()) operands.push_back(Reshard(v, ReplicatedFor(v)));
  std::vector<ir::Type> types;
  for (ir::Value r : op.results()) types.push_back(r.type());
  ir::Operation* branch = emit_->Emit(op.name_str(), operands, types, OwnAttrs(op));
  std::vector<std::optional<Sharding>> results(op.num_results());
  for (int i = 0; i < op.num_regions(); ++i) {
    TPUSIM_RETURN_IF_ERROR(PartitionRegion(op.region(i), branch->AddRegion(), {}, results));
  }
  for (int r = 0; r < op.num_results(); ++r) {
    const ir::Type local = LocalType(mesh_, op.result(r).type(), *results[r]);
    branch->result(r).set_type(std::move(local));
    locals_[op.result(r).impl()] = {branch->result(r), *results[r], {}, {}};
  }
  return Status::Ok();
}

}  // namespace tpusim::spmd
