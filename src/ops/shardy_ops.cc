// Shardy's manual computation, JAX's shard_map as it prints under Shardy:
//   %r = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"x"}, {}]>]
//            out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"}
//            (%tile: tensor<4x8xf32>) { ... sdy.return %y : tensor<4x8xf32> }
//            : (tensor<16x8xf32>) -> tensor<16x8xf32>
// Every device runs the body on its tile of each operand along the manual
// axes, and each result is the devices' tiles put back together, as XLA's
// partitioned program holds them. Outside the body a device holds whole
// arrays (partitioning them is the SPMD partitioner's work), so the free
// axes leave dimensions whole here.
#include "ops/custom_calls/spmd_markers.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

using ir::Attribute;

// The shardings of attribute `key` ("in_shardings" / "out_shardings").
StatusOr<std::vector<Attribute>> Shardings(const ir::Operation& op, std::string_view key,
                                           int count) {
  Attribute a = op.attr(key);
  if (a.kind() != Attribute::Kind::kStruct || a.name() != "sdy.sharding_per_value") {
    return InvalidArgument("sdy.manual_computation needs " + std::string(key) +
                           " (a list of #sdy.sharding)");
  }
  const std::vector<Attribute>& list = a.Get("shardings").array();
  if (static_cast<int>(list.size()) != count) {
    return InvalidArgument("sdy.manual_computation has " + std::to_string(list.size()) + " " +
                           std::string(key) + " for " + std::to_string(count) + " values");
  }
  return list;
}

// A tile and its whole array: same element type and rank, and each whole
// dimension a multiple of the tile's (the mesh, which says how many tiles,
// is checked when the op runs).
Status CheckTileOf(const ir::Type& tile, const ir::Type& whole, const std::string& what) {
  bool ok = tile.is_tensor() && whole.is_tensor() && tile.element() == whole.element() &&
            tile.rank() == whole.rank();
  for (int64_t d = 0; ok && d < tile.rank(); ++d) {
    const int64_t t = tile.shape()[d], w = whole.shape()[d];
    ok = t == 0 ? w == 0 : w % t == 0;
  }
  if (ok) return Status::Ok();
  return InvalidArgument("sdy.manual_computation: " + what + " " + tile.ToString() +
                         " is not a tile of " + whole.ToString());
}

Status VerifyManualComputation(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 1));
  TPUSIM_RETURN_IF_ERROR(Shardings(op, "in_shardings", op.num_operands()).status());
  TPUSIM_RETURN_IF_ERROR(Shardings(op, "out_shardings", op.num_results()).status());
  Attribute axes = op.attr("manual_axes");
  bool names = axes.kind() == Attribute::Kind::kStruct && axes.name() == "sdy.manual_axes" &&
               axes.Get("axes").kind() == Attribute::Kind::kArray;
  for (size_t i = 0; names && i < axes.Get("axes").array().size(); ++i) {
    names = axes.Get("axes").array()[i].kind() == Attribute::Kind::kString;
  }
  if (!names) return InvalidArgument("sdy.manual_computation needs manual_axes (axis names)");
  const ir::Region& body = op.region(0);
  if (body.num_blocks() != 1 || body.front().num_arguments() != op.num_operands()) {
    return InvalidArgument(
        "the body of sdy.manual_computation needs one block with an argument "
        "per operand");
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    TPUSIM_RETURN_IF_ERROR(CheckTileOf(body.front().argument(i).type(), op.operand(i).type(),
                                       "argument " + std::to_string(i)));
  }
  const ir::Operation* ret = body.front().terminator();
  if (ret == nullptr || ret->name_str() != "sdy.return" ||
      ret->num_operands() != op.num_results()) {
    return InvalidArgument("the body of sdy.manual_computation must end in sdy.return with " +
                           std::to_string(op.num_results()) + " values");
  }
  for (int i = 0; i < op.num_results(); ++i) {
    TPUSIM_RETURN_IF_ERROR(CheckTileOf(ret->operand(i).type(), op.result(i).type(),
                                       "returned value " + std::to_string(i)));
  }
  return Status::Ok();
}

// `sharding` over the manual axes alone, as an HloSharding over the mesh's
// devices: the free axes and the replicated ones leave their tiles whole.
StatusOr<ir::HloSharding> ManualSharding(const ir::Module& module, const Attribute& sharding,
                                         const Attribute& manual_axes, int64_t rank) {
  auto manual = [&](const Attribute& axis) {
    for (const Attribute& m : manual_axes.Get("axes").array()) {
      if (m.str() == ir::SdyAxisName(axis)) return true;
    }
    return false;
  };
  std::vector<Attribute> dims;
  for (const Attribute& dim : sharding.Get("dims").array()) {
    std::vector<Attribute> axes;
    for (const Attribute& axis : dim.array()) {
      if (!manual(axis)) break;  // Shardy puts manual axes before free ones
      axes.push_back(axis);
    }
    dims.push_back(Attribute::Array(std::move(axes)));
  }
  Attribute restricted = Attribute::Struct(
      "sdy.sharding", {{"mesh", sharding.Get("mesh")}, {"dims", Attribute::Array(dims)}});
  return ir::SdyShardingToHlo(module, restricted, rank);
}

StatusOr<std::vector<Tensor>> EvalManualComputation(EvalContext& ctx, const ir::Operation& op,
                                                    std::span<const Tensor> operands) {
  const std::string where = "sdy.manual_computation at " + op.loc().ToString();
  const Attribute axes = op.attr("manual_axes");
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Attribute> in,
                          Shardings(op, "in_shardings", op.num_operands()));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Attribute> out,
                          Shardings(op, "out_shardings", op.num_results()));
  const ir::Block& body = op.region(0).front();
  std::vector<Tensor> tiles;
  for (int i = 0; i < op.num_operands(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(ir::HloSharding s,
                            ManualSharding(ctx.module(), in[i], axes, operands[i].rank()));
    TPUSIM_ASSIGN_OR_RETURN(Tensor tile, TakeTile(ctx, s, operands[i], body.argument(i).type(),
                                                  where + ", operand " + std::to_string(i)));
    tiles.push_back(std::move(tile));
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> local, ctx.RunRegion(op.region(0), tiles));
  std::vector<Tensor> results;
  for (int i = 0; i < op.num_results(); ++i) {
    const ir::Type& whole = op.result(i).type();
    TPUSIM_ASSIGN_OR_RETURN(ir::HloSharding s,
                            ManualSharding(ctx.module(), out[i], axes, whole.rank()));
    TPUSIM_ASSIGN_OR_RETURN(
        Tensor r, GatherTiles(ctx, s, local[i], whole, where + ", result " + std::to_string(i)));
    results.push_back(std::move(r));
  }
  return results;
}

Status VerifyReturn(const ir::Operation& op) { return ExpectNumResults(op, 0); }

// The body is timed op by op (control_flow); the tiles' hand-over is free,
// as in XLA's partitioned program, where each device already holds its tile.
TPUSIM_REGISTER_OP({.name = "sdy.manual_computation",
                    .verify = VerifyManualComputation,
                    .eval = EvalManualComputation,
                    .work = FreeWork,
                    .control_flow = true,
                    .side_effects = true});
TPUSIM_REGISTER_OP(
    {.name = "sdy.return", .verify = VerifyReturn, .is_terminator = true, .work = FreeWork});

// sdy.sharding_constraint and sdy.reshard: the value, which the SPMD
// partitioner moves to the sharding its `sharding` attribute names; on whole
// arrays, the value itself.
Status VerifyConstraint(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, 0, op.operand(0).type()));
  Attribute s = op.attr("sharding");
  if (s.kind() != Attribute::Kind::kStruct || s.name() != "sdy.sharding") {
    return InvalidArgument(op.name_str() + " needs a sharding (a #sdy.sharding)");
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalConstraint(EvalContext&, const ir::Operation&,
                                             std::span<const Tensor> operands) {
  return std::vector<Tensor>{operands[0]};
}

TPUSIM_REGISTER_OP({.name = "sdy.sharding_constraint",
                    .verify = VerifyConstraint,
                    .eval = EvalConstraint,
                    .work = FreeWork});
TPUSIM_REGISTER_OP(
    {.name = "sdy.reshard", .verify = VerifyConstraint, .eval = EvalConstraint, .work = FreeWork});

}  // namespace
}  // namespace tpusim::ops
