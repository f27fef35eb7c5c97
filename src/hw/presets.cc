// Chip presets. Every figure carries its source; see
// ../shared/reference/tpu-facts.md for the full citations:
//   [C] Cloud TPU documentation, [J] JAX tpu_info.py, [S] "How to Scale Your
//   Model", [R] tpu-recipes' single-op microbenchmarks, [X] XLA's own
//   out-of-memory errors ("Used 33.07G of 31.25G hbm"), which give in GiB
//   the HBM a program and its arguments may take once the runtime has its
//   reserve, as public reports of them quote it. Figures marked
//   "assumed" are not published; they are the values of the nearest
//   generation that publishes them.
#include <algorithm>
#include <cctype>

#include "tpusim/hw/chip.h"

namespace tpusim::hw {
namespace {

constexpr double kGB = 1e9;
constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr int64_t kMiB = 1024 * 1024;

// The MXU's calibration (see MxuSpec), one per generation. v4, v5p and v5e
// are each fit on one published MaxText run, the first of their generation
// that runs here as published (docs/validation.md, scripts/validation.sh):
// v4 on the 22B run on v4-128, v5p on the 128B run on v5p-256, v5e on the
// 16B run on v5e-256. v6e and 7x are fit on single ops alone
// (scripts/single_ops.sh): v6e on its 8192^3 bf16 matmul, 7x on its
// 32768^3 one [R]; their training runs stay a held-out check. v2 and v3
// have neither and carry v4's value.
constexpr double kSustainedMxu = 0.715;
constexpr double kSustainedMxuV5p = 0.824;
constexpr double kSustainedMxuV5e = 0.808;
constexpr double kSustainedMxuV6e = 0.90;
constexpr double kSustainedMxuV7x = 0.83;

// Fixed cost per op where no small op is measured: an assumed launch cost.
constexpr double kAssumedOpOverhead = 0.35e-6;

// The VPU figures are published for v6e only (128 lanes x 8 sublanes, 2
// transpose units [C]); other generations assume the same vector shape.
VectorUnitSpec Vpu(int transpose_units) {
  VectorUnitSpec v;
  v.transpose_units = transpose_units;
  return v;
}

// Slice shapes as Cloud TPU offers them [C per generation, xpk system_characteristics.py].
const std::vector<std::string> k2dShapes = {"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"};
const std::vector<std::string> k3dShapes = {"2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4",  "4x4x8",
                                            "4x8x8", "8x8x8", "8x8x16", "8x16x16", "16x16x16"};

// Links to torus neighbours (4 in 2D, 6 in 3D) of `gbps_one_way` GB/s each,
// about 1 us a hop [S].
IciSpec Ici(int links, double gb_per_s_one_way) {
  return {.links_per_chip = links, .link_bytes_per_s = gb_per_s_one_way * kGB,
          .hop_latency_s = 1e-6};
}

// The link to the host's memory: PCIe, about 15 GB/s a chip [S]; v4 16 GB/s
// each way, v6e 32 GB/s [S]. Its per-transfer latency is not published:
// 10 us is an estimate (a DMA's setup and the host's side of it).
HostLinkSpec Host(double gb_per_s) {
  return {.bytes_per_s = gb_per_s * kGB, .latency_s = 10e-6};
}

ChipSpec V2() {
  ChipSpec c;
  c.name = "v2";
  c.description = "TPU v2: 2 TCs x 1 MXU 128x128, 16 GB HBM";
  c.tensor_cores = 2;                                  // [C]
  c.clock_hz = 0.70e9;                                 // peak / MACs [derived]
  c.mxu = {.rows = 128,
           .cols = 128,
           .per_core = 1,     // [J]
           .int8_rate = 1.0,  // no int8 path [C]
           .sustained_fraction = kSustainedMxu};
  c.vpu = Vpu(1);                                      // assumed
  c.memory = {.vmem_bytes = 16 * kMiB,                 // [J]
              .hbm_bytes = static_cast<int64_t>(16 * kGB),
              .hbm_bytes_per_s = 716 * kGB};           // [J]
  c.published_bf16_flops = 46e12;                      // [J]
  c.sources = {"[J] jax/_src/tpu_info.py", "[C] cloud.google.com/tpu/docs/system-architecture"};
  c.ici = Ici(4, 100);                                 // assumed as v3
  c.host = Host(15);                                   // about 15 GB/s a chip [S]
  c.slice = {.rank = 2, .chips_per_host = 4,          // 8 cores a host [S]
             .type_prefix = "v2", .name_counts_cores = true,
             .wrap_length = 16,                        // the 16x16 pod's edge [inferred]
             .topologies = {"2x2", "4x4", "8x8", "8x16", "16x16"},  // v2-8 .. v2-512 [C]
             .dcn_bytes_per_s_per_chip = 6.25 * kGB};  // assumed as v4 [S]
  return c;
}

ChipSpec V3() {
  ChipSpec c;
  c.name = "v3";
  c.description = "TPU v3: 2 TCs x 2 MXUs 128x128, 32 GiB HBM";
  c.tensor_cores = 2;                                  // [C]
  c.clock_hz = 0.94e9;                                 // peak / MACs [derived]
  c.mxu = {.rows = 128,
           .cols = 128,
           .per_core = 2,     // [C, J]
           .int8_rate = 1.0,  // no int8 path [C]
           .sustained_fraction = kSustainedMxu};
  c.vpu = Vpu(1);                                      // assumed
  c.memory = {.vmem_bytes = 16 * kMiB,                 // [J]
              .hbm_bytes = static_cast<int64_t>(32 * kGiB),
              .hbm_bytes_per_s = 900 * kGB};           // [C]; 825 in [J]
  c.published_bf16_flops = 123e12;                     // [C]; 140 in [J]
  c.sources = {"[C] cloud.google.com/tpu/docs/system-architecture", "[J] jax/_src/tpu_info.py"};
  c.ici = Ici(4, 100);                                 // [S]
  c.host = Host(15);                                   // about 15 GB/s a chip [S]
  c.slice = {.rank = 2, .chips_per_host = 4,          // 4x2 cores a host [S]
             .type_prefix = "v3", .name_counts_cores = true,
             .wrap_length = 32,                        // the 32x32 pod's edge [S, inferred]
             .topologies = {"2x2", "4x4", "4x8", "8x8", "8x16", "16x16", "16x32", "32x32"},
             .dcn_bytes_per_s_per_chip = 6.25 * kGB};  // [S]
  return c;
}

ChipSpec V4() {
  ChipSpec c;
  c.name = "v4";
  c.description = "TPU v4: megacore of 2 TCs x 4 MXUs 128x128, 32 GiB HBM";
  c.tensor_cores = 2;                                  // [C]
  c.megacore = true;                                   // [J]
  c.clock_hz = 1.05e9;                                 // [derived], also in slides
  c.mxu = {.rows = 128,
           .cols = 128,
           .per_core = 4,                              // [C, J]
           .int8_rate = 1.0,                           // 275 TOP/s = bf16 peak [C]
           .sustained_fraction = kSustainedMxu};       // fit here [validation]
  c.vpu = Vpu(1);                                      // assumed
  c.memory = {.vmem_bytes = 16 * kMiB,                 // [J]
              .hbm_bytes = static_cast<int64_t>(32 * kGiB),
              .hbm_bytes_per_s = 1200 * kGB};          // [C]
  c.published_bf16_flops = 275e12;                     // [C]
  c.sources = {"[C] cloud.google.com/tpu/docs/v4", "[J] jax/_src/tpu_info.py"};
  c.ici = Ici(6, 45);                                  // [S]
  c.host = Host(16);                                   // [S]
  c.slice = {.rank = 3, .chips_per_host = 4,          // 2x2x1 a host [C]
             .type_prefix = "v4", .name_counts_cores = true,
             .cube = 4,                                // OCS wraps whole 4x4x4 cubes [S]
             .topologies = {"2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8",
                            "8x8x8", "8x8x12", "8x8x16", "8x16x16"},  // [C, xpk]
             .dcn_bytes_per_s_per_chip = 6.25 * kGB};  // [S]
  return c;
}

ChipSpec V5e() {
  ChipSpec c;
  c.name = "v5e";
  c.description = "TPU v5e: 1 TC x 4 MXUs 128x128, 16 GB HBM";
  c.tensor_cores = 1;                                  // [C]
  c.clock_hz = 1.5e9;                                  // [S]
  c.mxu = {.rows = 128,
           .cols = 128,
           .per_core = 4,     // [C, J]
           .int8_rate = 2.0,  // 393 TOP/s [C]
           .sustained_fraction = kSustainedMxuV5e};
  c.vpu = Vpu(1);                                      // assumed
  c.memory = {.vmem_bytes = 128 * kMiB,                // [J]
              // "16 GB" [C] is 16 GiB; XLA allots programs 15.75 GiB [X].
              .hbm_bytes = static_cast<int64_t>(15.75 * kGiB),
              .hbm_bytes_per_s = 819 * kGB};           // [C]
  c.published_bf16_flops = 197e12;                     // [C]
  c.sources = {"[C] cloud.google.com/tpu/docs/v5e", "[S] scaling-book tpus.md",
               "[J] jax/_src/tpu_info.py", "[X] XLA:TPU's out-of-memory errors: 'of 15.75G hbm'"};
  c.ici = Ici(4, 45);                                  // [S]; 400 GB/s bidi a chip [C]
  c.host = Host(15);                                   // about 15 GB/s a chip [S]
  c.slice = {.rank = 2, .chips_per_host = 8,          // 4x4 is 2 hosts [C]
             .type_prefix = "v5litepod", .name_counts_cores = false,
             .wrap_length = 16,                        // wraps on axes of 16 [S]
             .topologies = k2dShapes,                  // [C]
             .dcn_bytes_per_s_per_chip = 3.125 * kGB}; // [S]
  return c;
}

ChipSpec V5p() {
  ChipSpec c;
  c.name = "v5p";
  c.description = "TPU v5p: megacore of 2 TCs x 4 MXUs 128x128, 95 GB HBM";
  c.tensor_cores = 2;                                  // [C]
  c.megacore = true;                                   // [J]
  c.clock_hz = 1.75e9;                                 // peak / MACs [derived]
  c.mxu = {.rows = 128,
           .cols = 128,
           .per_core = 4,     // [C, J]
           .int8_rate = 2.0,  // 918 TOP/s [J]
           .sustained_fraction = kSustainedMxuV5p};
  c.vpu = Vpu(1);                                      // assumed
  c.memory = {.vmem_bytes = 64 * kMiB,                 // [J]
              // "95 GB" [C]; XLA allots programs 95.74 GiB [X].
              .hbm_bytes = static_cast<int64_t>(95.74 * kGiB),
              .hbm_bytes_per_s = 2765 * kGB};          // [C]
  c.published_bf16_flops = 459e12;                     // [C]
  c.sources = {"[C] cloud.google.com/tpu/docs/v5p", "[J] jax/_src/tpu_info.py",
               "[X] XLA:TPU's out-of-memory errors: 'of 95.74G hbm'"};
  c.ici = Ici(6, 90);                                  // [S]; 1200 GB/s bidi a chip [C]
  c.host = Host(15);                                   // about 15 GB/s a chip [S]
  c.slice = {.rank = 3, .chips_per_host = 4,          // [C]
             .type_prefix = "v5p", .name_counts_cores = true,
             .cube = 4,                                // OCS wraps whole 4x4x4 cubes [S]
             .topologies = k3dShapes,                  // [C], and 16x16x24 below
             .dcn_bytes_per_s_per_chip = 6.25 * kGB};  // 50 Gbps a chip [C]
  c.slice.topologies.push_back("16x16x24");           // the largest slice [C]
  return c;
}

ChipSpec V6e() {
  ChipSpec c;
  c.name = "v6e";
  c.description = "TPU v6e (Trillium): 1 TC x 2 MXUs 256x256, 32 GB HBM";
  c.tensor_cores = 1;                                  // [C]
  // No published clock; this is the published peak over 2 x 256^2 MACs [derived].
  c.clock_hz = 918e12 / (2.0 * 2 * 256 * 256);
  c.mxu = {.rows = 256,
           .cols = 256,
           .per_core = 2,     // [C, J]
           .int8_rate = 2.0,  // 1836 TOP/s [C]
           .sustained_fraction = kSustainedMxuV6e};
  c.vpu = Vpu(2);                                      // 128x8 VPU, 2 XLUs [C]
  c.memory = {.vmem_bytes = 128 * kMiB,                // [J]
              // "32 GB" [C] is 32 GiB; XLA allots programs 31.25 GiB [X].
              .hbm_bytes = static_cast<int64_t>(31.25 * kGiB),
              .hbm_bytes_per_s = 1638 * kGB,           // [C]
              // A 32 MiB copy runs at 1359.6 GB/s [R].
              .hbm_sustained_fraction = 1359.6 / 1638};
  c.published_bf16_flops = 918e12;                     // [C]
  c.sources = {"[C] cloud.google.com/tpu/docs/v6e", "[J] jax/_src/tpu_info.py",
               "[X] XLA:TPU's out-of-memory errors: 'of 31.25G hbm'"};
  c.ici = Ici(4, 90);                                  // [S]; 800 GB/s bidi a chip [C]
  c.host = Host(32);                                   // [S]
  c.slice = {.rank = 2, .chips_per_host = 8,          // [C]
             .type_prefix = "v6e", .name_counts_cores = false,
             .wrap_length = 16,                        // wraps on axes of 16 [S]
             .topologies = k2dShapes,                  // [C]
             .dcn_bytes_per_s_per_chip = 12.5 * kGB};  // 100 Gbps a chip [C]
  return c;
}

ChipSpec V7x() {
  ChipSpec c;
  c.name = "7x";
  c.description = "TPU 7x (Ironwood): 2 TCs x 2 MXUs 256x256, 192 GiB HBM";
  c.tensor_cores = 2;                                  // [J]
  // No published clock; the published peak over 2 TCs x 2 x 256^2 MACs [derived].
  c.clock_hz = 2307e12 / (2.0 * 2 * 2 * 256 * 256);
  c.mxu = {.rows = 256,
           .cols = 256,
           .per_core = 2,     // [J]
           .int8_rate = 1.0,  // no int8 figure published
           .fp8_rate = 2.0,   // fp8 4614 TFLOP/s [C]
           .sustained_fraction = kSustainedMxuV7x};
  c.vpu = Vpu(2);                                      // assumed as v6e
  // Each TensorCore is a device with half of the HBM and its bandwidth.
  c.memory = {.vmem_bytes = 64 * kMiB,                 // [J]
              .hbm_bytes = static_cast<int64_t>(192 * kGiB),
              .hbm_bytes_per_s = 7380 * kGB,           // [C]
              // An 8 GiB copy on one core runs at 3210 GB/s of its 3690 [R].
              .hbm_sustained_fraction = 3210.0 / 3690};
  // A 2 MiB copy on one core takes 3.04 us [R], 1.31 us of it the transfer
  // at the sustained rate: the rest is each op's fixed cost.
  c.op_overhead_s = 1.73e-6;
  c.published_bf16_flops = 2307e12;                    // [C]
  c.sources = {"[C] cloud.google.com/tpu/docs/tpu7x", "[J] jax/_src/tpu_info.py"};
  c.ici = Ici(6, 100);                                 // 1200 GB/s bidi a chip [C] / 6 / 2
  c.host = Host(32);                                   // assumed as v6e
  c.slice = {.rank = 3, .chips_per_host = 4,          // [C]
             .type_prefix = "tpu7x", .name_counts_cores = true,  // [xpk]
             .cube = 4,                                // assumed as v5p
             .topologies = k3dShapes,                  // assumed as v5p
             .dcn_bytes_per_s_per_chip = 12.5 * kGB};  // 100 Gbps a chip [C]
  return c;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return out;
}

}  // namespace

const std::vector<ChipSpec>& Presets() {
  static const std::vector<ChipSpec>* presets = [] {
    auto* p = new std::vector<ChipSpec>{V2(), V3(), V4(), V5e(), V5p(), V6e(), V7x()};
    for (ChipSpec& c : *p) {
      if (c.op_overhead_s == 0) c.op_overhead_s = kAssumedOpOverhead;
    }
    return p;
  }();
  return *presets;
}

StatusOr<ChipSpec> FindPreset(std::string_view name) {
  std::string key = Lower(name);
  if (key == "v5litepod" || key == "v5lite") key = "v5e";
  if (key == "tpu7x" || key == "v7x" || key == "ironwood") key = "7x";
  if (key == "trillium") key = "v6e";
  std::string known;
  for (const ChipSpec& c : Presets()) {
    if (c.name == key) return c;
    known += (known.empty() ? "" : ", ") + c.name;
  }
  return NotFound("no chip preset '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace tpusim::hw
