#include "ops/custom_calls/spmd_markers.h"

#include "tpusim/ops/collectives.h"
#include "tpusim/ops/custom_call.h"
#include "tpusim/ops/sharding_rule.h"
#include "tpusim/tensor/tile.h"

namespace tpusim::ops {
namespace {

constexpr std::string_view kSharding = "Sharding";
constexpr std::string_view kFullToShard = "SPMDFullToShardShape";
constexpr std::string_view kShardToFull = "SPMDShardToFullShape";

bool Replicated(const ir::HloSharding& s) { return s.kind == ir::HloSharding::Kind::kReplicated; }

// Whether tiles of `tile` make up `whole` under `s`: the same type when
// replicated, else each dimension `tile_dims` tiles long.
Status CheckTiles(const ir::HloSharding& s, const ir::Type& tile, const ir::Type& whole,
                  const std::string& what) {
  bool fits = tile.is_tensor() && whole.is_tensor() && tile.element() == whole.element() &&
              tile.rank() == whole.rank();
  if (fits && Replicated(s)) fits = tile == whole;
  if (fits && !Replicated(s)) {
    fits = s.kind == ir::HloSharding::Kind::kTiled &&
           static_cast<int64_t>(s.tile_dims.size()) >= tile.rank();
    for (int64_t d = 0; fits && d < tile.rank(); ++d) {
      fits = tile.shape()[d] * s.tile_dims[d] == whole.shape()[d];
    }
  }
  if (fits) return Status::Ok();
  return InvalidArgument(what + ": tiles of " + tile.ToString() + " do not make up " +
                         whole.ToString() + " under sharding " + s.ToString());
}

// The sharding in `op`'s mhlo.sharding, or kUnimplemented naming `what`.
StatusOr<ir::HloSharding> MarkerSharding(const ir::Operation* op, const std::string& what) {
  ir::Attribute a = op ? op->attr("mhlo.sharding") : ir::Attribute();
  if (a.kind() == ir::Attribute::Kind::kString) {
    TPUSIM_ASSIGN_OR_RETURN(ir::HloSharding s, ir::ParseHloSharding(a.str()));
    if (s.kind == ir::HloSharding::Kind::kTiled || Replicated(s)) return s;
  }
  return Unimplemented(what + " needs a tiled or replicated mhlo.sharding");
}

}  // namespace

StatusOr<Tensor> TakeTile(EvalContext& ctx, const ir::HloSharding& s, const Tensor& whole,
                          const ir::Type& tile_type, const std::string& what) {
  TPUSIM_RETURN_IF_ERROR(CheckTiles(s, tile_type, whole.type(), what));
  if (Replicated(s)) return whole;
  auto offset = ir::TileOffset(s, tile_type.shape(), ctx.partition_id());
  if (!offset) {
    return InvalidArgument(what + ": the sharding gives partition " +
                           std::to_string(ctx.partition_id()) + " no tile");
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor tile, Tensor::Allocate(tile_type));
  ExtractTile(whole, *offset, tile);
  return tile;
}

StatusOr<Tensor> GatherTiles(EvalContext& ctx, const ir::HloSharding& s, const Tensor& tile,
                             const ir::Type& whole_type, const std::string& what) {
  TPUSIM_RETURN_IF_ERROR(CheckTiles(s, tile.type(), whole_type, what));
  if (Replicated(s)) return tile;
  const int64_t partitions = ctx.num_partitions();
  const ProcessId self = ctx.replica_id() * partitions + ctx.partition_id();
  std::vector<std::vector<Tensor>> tiles{{tile}};
  if (partitions > 1) {
    if (ctx.collectives() == nullptr) {
      return InvalidArgument(what + " needs the program's " + std::to_string(partitions) +
                             " partitions; run it on a slice");
    }
    std::vector<ProcessId> group;
    for (int64_t p = 0; p < partitions; ++p) group.push_back(ctx.replica_id() * partitions + p);
    TPUSIM_ASSIGN_OR_RETURN(tiles, ctx.collectives()->Exchange(group, self, what, {tile}));
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor whole, Tensor::Allocate(whole_type));
  for (size_t p = 0; p < tiles.size(); ++p) {
    auto at = ir::TileOffset(s, tile.shape(), static_cast<int64_t>(p));
    if (at) InsertTile(tiles[p][0], *at, whole);
  }
  return whole;
}

bool IsSpmdMarker(std::string_view target) {
  return target == kSharding || target == kFullToShard || target == kShardToFull;
}

StatusOr<std::vector<Tensor>> EvalSpmdMarker(EvalContext& ctx, const ir::Operation& op,
                                             std::string_view target,
                                             std::span<const Tensor> operands) {
  if (operands.size() != 1 || op.num_results() != 1 || !operands[0].type().is_tensor() ||
      !op.result(0).type().is_tensor() || op.result(0).type().element() != operands[0].element()) {
    return InvalidArgument("'" + std::string(target) + "' takes one array to one array");
  }
  if (target == kSharding) {
    if (op.result(0).type() != operands[0].type()) {
      return InvalidArgument("'Sharding' must not change the type");
    }
    return std::vector<Tensor>{operands[0]};
  }
  const std::string what = std::string(target) + " at " + op.loc().ToString();
  if (target == kFullToShard) {
    // The tile follows the sharding of the `Sharding` that made the operand.
    TPUSIM_ASSIGN_OR_RETURN(
        ir::HloSharding s,
        MarkerSharding(op.operand(0).defining_op(), "the operand of SPMDFullToShardShape"));
    TPUSIM_ASSIGN_OR_RETURN(Tensor tile, TakeTile(ctx, s, operands[0], op.result(0).type(), what));
    return std::vector<Tensor>{std::move(tile)};
  }
  TPUSIM_ASSIGN_OR_RETURN(ir::HloSharding s, MarkerSharding(&op, "SPMDShardToFullShape"));
  TPUSIM_ASSIGN_OR_RETURN(Tensor whole,
                          GatherTiles(ctx, s, operands[0], op.result(0).type(), what));
  return std::vector<Tensor>{std::move(whole)};
}

namespace {

StatusOr<std::vector<Tensor>> EvalMarker(EvalContext& ctx, const ir::Operation& op,
                                         std::span<const Tensor> operands) {
  return EvalSpmdMarker(ctx, op, CallTarget(op), operands);
}

// In the partitioned program the markers are gone: each device holds its tile.
Work NoMarkerWork(const ir::Operation&) { return {.free = true}; }

TPUSIM_REGISTER_CUSTOM_CALL({.target = std::string(kSharding),
                             .eval = EvalMarker,
                             .work = NoMarkerWork});
TPUSIM_REGISTER_CUSTOM_CALL({.target = std::string(kFullToShard),
                             .eval = EvalMarker,
                             .work = NoMarkerWork});
TPUSIM_REGISTER_CUSTOM_CALL({.target = std::string(kShardToFull),
                             .eval = EvalMarker,
                             .work = NoMarkerWork});

}  // namespace
}  // namespace tpusim::ops
