// SPMD partitioning, as XLA's partitioner does before a program runs on a
// slice: a *global* program, whose arguments, results and sharding
// constraints say how values are split across devices, becomes the one
// program every device runs on its own tiles, with the collectives that
// move data between them.
//
// Shardings come as GSPMD strings (`mhlo.sharding`, `custom_call @Sharding`)
// or Shardy attributes (`sdy.sharding`); both are placed on one device mesh
// (spmd/mesh.h). Each op is split by its OpDef's sharding rule
// (ops/sharding_rule.h): factors sharded alike on every operand need no
// communication, a sharded reduction factor leaves partial results that an
// all-reduce (or, when the next use wants the result split, a reduce-scatter)
// combines, and operands are resharded to what the op needs with
// all-gathers and local dynamic slices. Ops without a rule run on whole
// arrays. Shardings spread forward from the arguments through the program.
#ifndef TPUSIM_SPMD_PARTITIONER_H_
#define TPUSIM_SPMD_PARTITIONER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::spmd {

// What partitioning did, for the report and for tests.
struct PartitionStats {
  int64_t devices = 1;
  // Collectives and slices inserted, by op name ("stablehlo.all_gather").
  std::map<std::string, int> inserted;
  int replicated_ops = 0;  // ops computed on whole arrays (no rule applied)
  // Operands split in a way their op cannot use, which had to move (lose
  // axes): "file:line:col: op operand i moves from [...] to [...]".
  std::vector<std::string> conflicts;
};

// Whether `module` is a global program to partition: it runs on several
// partitions (mhlo.num_partitions > 1, one replica), some argument, result
// or op carries a sharding, and no op already works per device
// (collectives, partition_id, shard_map regions).
bool IsGlobalProgram(const ir::Module& module);

// Whether `module` has regions each device runs on its own part (a
// shard_map: sdy.manual_computation, or GSPMD's SPMDFullToShardShape),
// whose collectives need every device: one chip cannot run it whole.
bool HasManualRegions(const ir::Module& module);

// The per-device program of global program `module` (left unchanged), its
// private functions inlined into `entry`. The result's entry takes and
// returns each device's tiles, with `mhlo.sharding` on its arguments and
// results saying which tile each device holds. Errors carry the location of
// the op or function they concern: kInvalidArgument for an illegal
// sharding, kUnimplemented for one tpusim cannot partition yet (an
// arbitrary order of devices).
StatusOr<std::unique_ptr<ir::Module>> Partition(const ir::Module& module, const std::string& entry,
                                                PartitionStats* stats = nullptr);

}  // namespace tpusim::spmd

#endif  // TPUSIM_SPMD_PARTITIONER_H_
