// Values on every device of a slice: `tpusim run --slice` of a partitioned
// program (mhlo.num_replicas x num_partitions processes).
#ifndef TPUSIM_RUNTIME_RUN_DEVICES_H_
#define TPUSIM_RUNTIME_RUN_DEVICES_H_

#include <cstdio>

#include "runtime/slice_setup.h"
#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/pod/collective_cost.h"
#include "tpusim/runtime/run.h"
#include "tpusim/timing/timeline.h"

namespace tpusim::runtime {

// Runs `compiled` on every process of `grid`, each on its own thread (a
// device of the slice), with collectives between them. Inputs are global
// arrays: an argument with a tiled `mhlo.sharding` is split into the
// device's tile, any other is given whole to every device. A result with a
// tiled sharding is assembled from the devices' tiles into result<i>.npy; a
// replicated one is device 0's; one without a sharding is written per
// device, result<i>.device<d>.npy. Sets `timeline` to device 0's, with
// every device's totals. `f` is the source entry function, whose names and
// shardings the inputs follow. Stopped (options.progress), returns
// kCancelled with `timeline` covering what ran, and writes no results.
Status RunOnDevices(const ir::Module& compiled, const ir::Module& source, const ir::Function& f,
                    const RunOptions& options, const hw::ChipSpec& chip, const ProcessGrid& grid,
                    pod::CollectivePricer* pod, std::optional<timing::Timeline>& timeline,
                    std::FILE* out);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_RUN_DEVICES_H_
