// The partitioning of one function: a forward walk over its entry block
// that appends each op's per-device form, and the moves its operands need,
// to a new function. Internal to src/spmd; partitioner.h is the interface.
#ifndef TPUSIM_SPMD_FUNCTION_PARTITIONER_H_
#define TPUSIM_SPMD_FUNCTION_PARTITIONER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "spmd/annotations.h"
#include "spmd/emitter.h"
#include "spmd/factors.h"
#include "spmd/mesh.h"
#include "spmd/propagation.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/spmd/partitioner.h"

namespace tpusim::spmd {

// A global value's stand-in in the partitioned program.
struct Local {
  ir::Value value;       // this device's tile
  Sharding sharding;     // which tile
  Axes partial;          // axes over which tiles still hold partial results...
  std::string combiner;  // ...to be combined by this op
};

inline Sharding ReplicatedFor(ir::Value v) {
  return Sharding::Replicated(v.type().is_tensor() ? v.type().rank() : 0);
}

class FunctionPartitioner {
 public:
  FunctionPartitioner(const ir::Module& module, const Mesh& mesh, PartitionStats* stats)
      : module_(module), annotations_(module, mesh), mesh_(mesh), stats_(stats) {}

  // `f` as every device runs it. Errors carry the location of the op.
  StatusOr<std::unique_ptr<ir::Function>> Run(const ir::Function& f);

 private:
  // function_partitioner.cc: the walk and the ops.
  StatusOr<std::unique_ptr<ir::Function>> Signature(const ir::Function& f);
  // Partitions the ops of `in` but its terminator into the emitter's block.
  Status PartitionOps(const ir::Block& in);
  Status PartitionOp(const ir::Operation& op);
  Status Split(const ir::Operation& op, const ops::ShardingRule& rule);
  bool AddsPartials(const ir::Operation& op);
  // The value operand `i` of `op` reads where it has none (the rule's
  // pad_values), from `map`; nullopt for zero.
  std::optional<ir::Value> PadValue(const ir::Operation& op, const ops::ShardingRule& rule, int i,
                                    const ir::ValueMap& map) const;
  void MaskPadding(const ir::Operation& op, const ops::ShardingRule& rule,
                   const FactorAxes& factors, ir::ValueMap& map);
  void AddHalos(const ir::Operation& op, const ops::ShardingRule& rule, const FactorAxes& factors,
                ir::ValueMap& map);
  void DropSplitPadding(const ops::ShardingRule& rule, const FactorAxes& factors,
                        ir::Operation& op);
  FactorAxes ChooseFactorAxes(const ir::Operation& op, const ops::ShardingRule& rule) const;
  void NoteConflict(const ir::Operation& op, int operand, const Sharding& want);
  void Whole(const ir::Operation& op);
  ir::Operation* Clone(const ir::Operation& op, ir::ValueMap& map);
  Status Return(const ir::Function& f, const ir::Operation& op, ir::Function& out);
  // Writes `global`'s shape into `attrs` where `s` pads its tiles.
  void NoteGlobalShape(const ir::Type& global, const Sharding& s, ir::AttributeMap& attrs) const;

  // control_flow.cc: while, if and case, their bodies partitioned too.
  Status PartitionWhile(const ir::Operation& op);
  Status PartitionBranches(const ir::Operation& op);
  // Partitions the block of `region` into `out`'s, its arguments held as
  // `args`; the terminator's operands leave as `results` says, or as they
  // are where it holds nullopt (then filled in).
  Status PartitionRegion(const ir::Region& region, ir::Region& out,
                         const std::vector<Sharding>& args,
                         std::vector<std::optional<Sharding>>& results);

  // manual.cc: shard_map regions, kept as written.
  bool IsManual(const ir::Operation& op) const;
  Status PartitionManualComputation(const ir::Operation& op);
  Status PartitionGspmdManual(const ir::Operation& op);

  // reshard.cc: moving values between shardings.
  // `v` held as `target` says: the partial results combined, then axes
  // moved, gathered and sliced, each at most once per (value, sharding)
  // within a block and the blocks it is nested in.
  ir::Value Reshard(ir::Value v, const Sharding& target);
  // A dimension a reduce-scatter can split `l`'s partial results along,
  // and the partial axes it scatters over (the rest are all-reduced).
  struct Scatter {
    int64_t dim;
    Axes axes;
  };
  std::optional<Scatter> ScatterDim(const Local& l, const Sharding& target) const;
  void MoveAxes(Local& l, const Sharding& target);
  void GatherAndSlice(Local& l, const Sharding& target, const ir::Type& global);
  std::optional<ir::Value> Resharded(ir::Value v, const Sharding& s) const;
  void Remember(ir::Value v, const Sharding& s, ir::Value local);
  // Emits into `block` (a region's) until Leave.
  void Enter(ir::Block* block);
  void Leave();

  const ir::Module& module_;
  Annotations annotations_;
  const Mesh& mesh_;
  PartitionStats* stats_;
  Preferences wishes_;
  std::unique_ptr<Emitter> emit_;
  std::unordered_map<const ir::ValueImpl*, Local> locals_;
  // Values of GSPMD manual regions: per device already.
  std::unordered_set<const ir::ValueImpl*> manual_;
  // Per block being emitted into, innermost last: the values resharded there.
  std::vector<std::map<std::pair<const ir::ValueImpl*, Sharding>, ir::Value>> resharded_;
};

}  // namespace tpusim::spmd

#endif  // TPUSIM_SPMD_FUNCTION_PARTITIONER_H_
