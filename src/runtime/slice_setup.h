// `run --slice/--topology`: the slice a program is timed on, and the device
// grid it runs as.
#ifndef TPUSIM_RUNTIME_SLICE_SETUP_H_
#define TPUSIM_RUNTIME_SLICE_SETUP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/pod/slice.h"
#include "tpusim/runtime/run.h"

namespace tpusim::runtime {

// The slice of options.slice, or options.topology of `chip`; nullopt if
// neither is given.
StatusOr<std::optional<pod::Slice>> SelectSlice(const RunOptions& options,
                                                const hw::ChipSpec& chip);

// The program's processes: mhlo.num_replicas x mhlo.num_partitions (1 if absent).
struct ProcessGrid {
  int64_t replicas = 1, partitions = 1;
  int64_t size() const { return replicas * partitions; }
};
ProcessGrid GridOf(const ir::Module& module);

// A module that declares neither mhlo.num_partitions nor mhlo.num_replicas
// but whose mhlo.sharding attributes place tiles on devices (JAX's older
// GSPMD exports leave the count to the compile options) gets the number of
// devices they name as its partition count.
void InferPartitionCount(ir::Module& module);

// One line: the slice, its torus and hosts, and the devices the program uses.
std::string DescribeSlice(const pod::Slice& slice, const ProcessGrid& grid);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_SLICE_SETUP_H_
