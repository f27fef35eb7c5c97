// Prices an op's Work on a chip: how long each unit (MXU, vector unit,
// transpose unit, HBM) is busy, and the op's time. Within one op, compute and
// memory overlap, so the op takes the busiest unit's time plus the chip's
// fixed per-op overhead (docs/report.md gives every formula).
#ifndef TPUSIM_HW_COST_MODEL_H_
#define TPUSIM_HW_COST_MODEL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "tpusim/hw/chip.h"
#include "tpusim/ops/work.h"

namespace tpusim::hw {

// kIci: the chip's inter-chip links, busy with a collective's transfers
// (priced by the pod model, src/pod). kHost: the link to the host's memory
// (host offloading, host callbacks).
enum class Unit { kMxu, kVector, kTranspose, kHbm, kIci, kHost };
inline constexpr int kNumUnits = 6;
const char* UnitName(Unit u);  // "mxu", "vpu", "xlu", "hbm", "ici", "host"

// What limits an op.
enum class Bound { kMxu, kVector, kTranspose, kMemory, kIci, kHost, kOverhead, kFree };
inline constexpr int kNumBounds = 8;
// "mxu", "vpu", "xlu", "memory", "ici", "host", "overhead", "free"
const char* BoundName(Bound b);

struct OpCost {
  double seconds = 0;                       // the op's predicted time
  double unit_seconds[kNumUnits] = {};
  double overhead_seconds = 0;
  int64_t mxu_cycles = 0;                   // all passes, busiest MXU
  int64_t flops = 0;
  int64_t bytes_read = 0, bytes_written = 0;  // logical
  int64_t hbm_bytes = 0;        // moved: padded tensors, re-reads, DMA granules
  int64_t padding_bytes = 0;    // of hbm_bytes, the tiles' padding
  int64_t tiling_bytes = 0;     // of hbm_bytes, re-reads when a matmul's
                                // working set exceeds VMEM
  int64_t spill_bytes = 0;      // of hbm_bytes, a fused kernel's intermediates
                                // that exceed VMEM, written and read back
  Bound bound = Bound::kFree;
  // A collective's traffic over the whole slice, and how long each torus
  // axis's busiest link and the DCN are busy with it (the pod model's).
  double ici_bytes = 0, dcn_bytes = 0;
  double ici_axis_seconds[3] = {0, 0, 0};
  double dcn_seconds = 0;
  // Bytes on each directed ICI link of the slice are ici_link_scale times
  // *ici_link_loads (indexed as pod::Slice::LinkIndex); shared by every op
  // with the same groups, so that an op's cost stays small.
  std::shared_ptr<const std::vector<double>> ici_link_loads;
  double ici_link_scale = 0;
};

// TensorCores that one device's work is spread over (megacore: all).
int CoresPerDevice(const ChipSpec& chip);

// `ici_seconds`: how long the op's collective keeps the ICI and DCN busy,
// from the pod model (0 for none). REQUIRES: Validate(chip).ok().
OpCost PriceWork(const ChipSpec& chip, const ops::Work& work, double ici_seconds = 0);

// MXU cycles of one matmul on one device, all passes, int8/fp8 at their rates.
int64_t MatmulCycles(const ChipSpec& chip, const ops::MatmulWork& mm);

}  // namespace tpusim::hw

#endif  // TPUSIM_HW_COST_MODEL_H_
