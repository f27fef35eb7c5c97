// A TPU chip as plain data: what a TensorCore holds, how fast it runs, and
// how much memory it has. Presets for v2 to 7x come with their sources; a
// researcher changes a copy (a 256x256 MXU, twice the HBM bandwidth) by
// dumping a preset to TOML, editing it, and loading it back.
#ifndef TPUSIM_HW_CHIP_H_
#define TPUSIM_HW_CHIP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"

namespace tpusim::hw {

// Which operand stays in the MXU's PEs while the others stream through.
enum class Dataflow {
  kWeightStationary,  // the TPU's: a K x N weight tile is held, LHS rows stream
  kOutputStationary,  // each PE accumulates one output; both operands stream
  kInputStationary,   // an M x K LHS tile is held, weight columns stream
};
const char* DataflowName(Dataflow d);  // "weight_stationary", ...

// How the MXU's cycles are counted (docs/report.md, "The MXU").
enum class CycleModel {
  kRegister,  // the machine of mxu.h, which systolic_array.h simulates PE by PE
  kScaleSim,  // SCALE-Sim v2/v3's count, to compare with it: folds back to
              // back, no output drain, the last cycle's index
};
const char* CycleModelName(CycleModel m);  // "register", "scale_sim"

struct MxuSpec {
  int rows = 128;             // PE rows: the contraction (K) side of a weight tile
  int cols = 128;             // PE columns: the output (N) side
  int per_core = 4;           // MXUs in one TensorCore
  Dataflow dataflow = Dataflow::kWeightStationary;
  // A second register per PE, so that folds overlap: weight- and
  // input-stationary load the next tile's weights while the current tile
  // computes (as on the TPU); output-stationary shifts a fold's sums out
  // while the next fold computes. Without it the array idles meanwhile.
  bool double_buffered = true;
  CycleModel cycle_model = CycleModel::kRegister;
  double int8_rate = 2.0;     // int8 MACs per bf16 MAC slot (1 where unsupported)
  double fp8_rate = 1.0;      // fp8 MACs per bf16 MAC slot
  // Calibration, the one constant per generation (docs/validation.md): the
  // share of the cycle count's rate that compiled kernels sustain, for what
  // the cycle model leaves out (operand feed, kernel prologues, scheduling).
  // 1 counts the cycles alone.
  double sustained_fraction = 1.0;
};

struct VectorUnitSpec {
  int lanes = 128;            // VPU lanes
  int sublanes = 8;           // VPU sublanes
  double alu_ops_per_cycle = 4;         // elementwise ops per element slot per cycle
  double transcendental_ops_per_cycle = 0.25;  // exp/log/... per slot per cycle
  int transpose_units = 1;    // XLUs per TensorCore
};

struct MemorySpec {
  int64_t vmem_bytes = 0;     // per TensorCore
  int64_t hbm_bytes = 0;      // per chip
  double hbm_bytes_per_s = 0; // per chip, the vendor's peak
  // The share of the peak that a large copy sustains, measured
  // (docs/validation.md); 1 where no measurement is published.
  double hbm_sustained_fraction = 1.0;
  // Smallest HBM transfer: a gather of one f32 still moves this many bytes.
  int64_t dma_granule_bytes = 512;
};

// The chip's inter-chip interconnect: links to its torus neighbours.
struct IciSpec {
  int links_per_chip = 4;       // 4 in a 2D torus, 6 in 3D
  double link_bytes_per_s = 0;  // one link, one way
  double hop_latency_s = 1e-6;  // per chip crossed
};

// The chip's link to its host's memory (PCIe): host offloading and host
// callbacks move data over it. bytes_per_s = 0: not modeled, and such moves
// are priced as free (the report notes it).
struct HostLinkSpec {
  double bytes_per_s = 0;  // one way
  double latency_s = 0;    // per transfer
};

// How the generation's pod slices are built (src/pod prices them).
struct SliceRules {
  int rank = 2;  // torus dimensions
  int chips_per_host = 4;
  // Accelerator type names: "<type_prefix>-<N>", N counting TensorCores or chips.
  std::string type_prefix;
  bool name_counts_cores = false;
  // Wraparound: with cube > 0, every axis of a slice built of whole
  // cube^rank blocks; with wrap_length > 0, each axis of exactly that length.
  int cube = 0;
  int wrap_length = 0;
  std::vector<std::string> topologies;  // the offered shapes, smallest first: "2x2x1"
  double dcn_bytes_per_s_per_chip = 0;  // data-center network, between slices
};

struct ChipSpec {
  std::string name;           // "v5e"
  std::string description;    // one line for `tpusim chips`
  int tensor_cores = 1;       // per chip
  bool megacore = false;      // cores act as one device, work split between them
  double clock_hz = 0;
  MxuSpec mxu;
  VectorUnitSpec vpu;
  MemorySpec memory;
  IciSpec ici;
  HostLinkSpec host;
  SliceRules slice;
  double op_overhead_s = 0;   // fixed cost per op launch (see docs/report.md)
  // The vendor's bf16 peak, kept to check PeakBf16FlopsPerS(); 0 if unknown.
  double published_bf16_flops = 0;
  std::vector<std::string> sources;  // where each figure comes from

  // bf16 FLOP/s of the whole chip from its own parameters:
  // 2 x MACs/cycle x clock.
  double PeakBf16FlopsPerS() const;
  double PeakInt8OpsPerS() const;
  // MXU multiply-accumulates per cycle in one TensorCore.
  int64_t MacsPerCyclePerCore() const;
  // Devices (what a program's partitions and replicas run on) per chip:
  // one per TensorCore, or one for a megacore chip.
  int DevicesPerChip() const { return megacore ? 1 : tensor_cores; }
  // What one device has of the chip's HBM: where each TensorCore is a
  // device (v2, v3, 7x) it has its share of the capacity and the bandwidth.
  int64_t HbmBytesPerDevice() const { return memory.hbm_bytes / DevicesPerChip(); }
  double HbmPeakBytesPerSPerDevice() const { return memory.hbm_bytes_per_s / DevicesPerChip(); }
  // The bandwidth a device's HBM traffic is priced at: its peak times the
  // sustained fraction.
  double HbmBytesPerSPerDevice() const {
    return HbmPeakBytesPerSPerDevice() * memory.hbm_sustained_fraction;
  }
};

// OK, or kInvalidArgument naming the first impossible value, its message
// starting with the field's path ("mxu.rows must be positive, got 0"): a
// size, clock, rate or bandwidth out of its range (zero, negative, or past
// a bound no chip comes near), the SCALE-Sim count with double buffering,
// which SCALE-Sim does not model. A vector unit wider than the MXU columns
// is fine.
Status Validate(const ChipSpec& chip);

// "megacore of 2 TCs x 4 MXUs 128x128, 95.7 GiB HBM": what the fields make,
// for a chip file that gives no description.
std::string DescribeFields(const ChipSpec& chip);

// The built-in presets, v2 to 7x, in generation order.
const std::vector<ChipSpec>& Presets();
// A preset by name ("v5e", "v5litepod" and "tpu7x" are aliases); kNotFound
// lists the known names.
StatusOr<ChipSpec> FindPreset(std::string_view name);

// TOML text of every field, with a comment per field; LoadChipToml reads it
// back. Unknown keys and impossible values are kInvalidArgument with
// file:line:col.
std::string DumpChipToml(const ChipSpec& chip);
StatusOr<ChipSpec> LoadChipToml(std::string_view text, const std::string& filename);

}  // namespace tpusim::hw

#endif  // TPUSIM_HW_CHIP_H_
