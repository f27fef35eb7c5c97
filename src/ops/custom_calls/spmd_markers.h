// The custom calls that bracket the manual regions of a global SPMD program
// (JAX's shard_map under GSPMD, XLA's partitioner): `Sharding` annotates a
// value with its sharding, `SPMDFullToShardShape` turns the whole array into
// this device's tile, and `SPMDShardToFullShape` puts the devices' tiles
// back together. Run on every device of a grid, they give each device its
// part as XLA's partitioned program would hold it. The tile functions serve
// Shardy's sdy.manual_computation too (shardy_ops.cc).
#ifndef TPUSIM_OPS_CUSTOM_CALLS_SPMD_MARKERS_H_
#define TPUSIM_OPS_CUSTOM_CALLS_SPMD_MARKERS_H_

#include <span>
#include <string_view>
#include <vector>

#include "tpusim/ir/sharding.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::ops {

bool IsSpmdMarker(std::string_view target);

// Evaluates marker `op` (IsSpmdMarker(target)). Tiles follow the partition
// ids of the devices; SPMDShardToFullShape meets every partition of this
// replica. kUnimplemented for a tile whose sharding cannot be found (the
// operand of SPMDFullToShardShape must come from a tiled `Sharding`).
StatusOr<std::vector<Tensor>> EvalSpmdMarker(EvalContext& ctx, const ir::Operation& op,
                                             std::string_view target,
                                             std::span<const Tensor> operands);

// The tile of `whole` that `s` (tiled or replicated) gives this process's
// partition, of type `tile_type`. kInvalidArgument unless the tiles make up
// the whole exactly; `what` names the value in errors.
StatusOr<Tensor> TakeTile(EvalContext& ctx, const ir::HloSharding& s, const Tensor& whole,
                          const ir::Type& tile_type, const std::string& what);

// The whole array of type `whole_type` whose tiles under `s` (tiled or
// replicated) are the partitions' `tile`s: every partition of this
// replica's process calls it and they exchange their tiles. Errors as for
// TakeTile.
StatusOr<Tensor> GatherTiles(EvalContext& ctx, const ir::HloSharding& s, const Tensor& tile,
                             const ir::Type& whole_type, const std::string& what);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_CUSTOM_CALLS_SPMD_MARKERS_H_
