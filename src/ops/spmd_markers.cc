#include "ops/spmd_markers.h"

#include "tpusim/ir/sharding.h"
#include "tpusim/ops/collectives.h"
#include "tpusim/tensor/tile.h"

namespace tpusim::ops {
namespace {

constexpr std::string_view kSharding = "Sharding";
constexpr std::string_view kFullToShard = "SPMDFullToShardShape";
constexpr std::string_view kShardToFull = "SPMDShardToFullShape";

// The tiled sharding in `op`'s mhlo.sharding, or kUnimplemented naming `what`.
StatusOr<ir::HloSharding> TiledSharding(const ir::Operation* op, const std::string& what) {
  ir::Attribute a = op ? op->attr("mhlo.sharding") : ir::Attribute();
  if (a.kind() == ir::Attribute::Kind::kString) {
    TPUSIM_ASSIGN_OR_RETURN(ir::HloSharding s, ir::ParseHloSharding(a.str()));
    if (s.kind == ir::HloSharding::Kind::kTiled) return s;
    if (s.kind == ir::HloSharding::Kind::kReplicated) return s;
  }
  return Unimplemented(what + " needs a tiled or replicated mhlo.sharding");
}

StatusOr<std::vector<Tensor>> FullToShard(EvalContext& ctx, const ir::Operation& op,
                                          const Tensor& whole) {
  const ir::Operation* source = op.operand(0).defining_op();
  TPUSIM_ASSIGN_OR_RETURN(ir::HloSharding s,
                          TiledSharding(source, "the operand of SPMDFullToShardShape"));
  TPUSIM_ASSIGN_OR_RETURN(Tensor tile, Tensor::Allocate(op.result(0).type()));
  ir::Shape offset(tile.rank(), 0);
  if (s.kind == ir::HloSharding::Kind::kTiled) {
    auto at = ir::TileOffset(s, tile.shape(), ctx.partition_id());
    if (!at) {
      return InvalidArgument("the sharding gives partition " + std::to_string(ctx.partition_id()) +
                             " no tile");
    }
    offset = *at;
  }
  for (int64_t d = 0; d < tile.rank(); ++d) {
    if (offset[d] + tile.shape()[d] > whole.shape()[d]) {
      return InvalidArgument("the tile does not fit in the operand");
    }
  }
  ExtractTile(whole, offset, tile);
  return std::vector<Tensor>{std::move(tile)};
}

StatusOr<std::vector<Tensor>> ShardToFull(EvalContext& ctx, const ir::Operation& op,
                                          const Tensor& tile) {
  TPUSIM_ASSIGN_OR_RETURN(ir::HloSharding s, TiledSharding(&op, "SPMDShardToFullShape"));
  TPUSIM_ASSIGN_OR_RETURN(Tensor whole, Tensor::Allocate(op.result(0).type()));
  if (s.kind == ir::HloSharding::Kind::kReplicated) {
    if (tile.type() != whole.type()) return InvalidArgument("a replicated tile must be whole");
    return std::vector<Tensor>{tile};
  }
  // Every partition of this replica contributes its tile.
  const int64_t partitions = ctx.num_partitions();
  const ProcessId self = ctx.replica_id() * partitions + ctx.partition_id();
  std::vector<std::vector<Tensor>> tiles{{tile}};
  if (partitions > 1) {
    if (ctx.collectives() == nullptr) {
      return InvalidArgument("SPMDShardToFullShape needs the program's " +
                             std::to_string(partitions) + " partitions; run it on a slice");
    }
    std::vector<ProcessId> group;
    for (int64_t p = 0; p < partitions; ++p) group.push_back(ctx.replica_id() * partitions + p);
    TPUSIM_ASSIGN_OR_RETURN(
        tiles, ctx.collectives()->Exchange(
                   group, self, "SPMDShardToFullShape at " + op.loc().ToString(), {tile}));
  }
  for (size_t p = 0; p < tiles.size(); ++p) {
    auto at = ir::TileOffset(s, tile.shape(), static_cast<int64_t>(p));
    if (!at) continue;
    for (int64_t d = 0; d < tile.rank(); ++d) {
      if ((*at)[d] + tile.shape()[d] > whole.shape()[d]) {
        return InvalidArgument("the tiles do not fit in the result");
      }
    }
    InsertTile(tiles[p][0], *at, whole);
  }
  return std::vector<Tensor>{std::move(whole)};
}

}  // namespace

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
  if (target == kFullToShard) return FullToShard(ctx, op, operands[0]);
  return ShardToFull(ctx, op, operands[0]);
}

}  // namespace tpusim::ops
