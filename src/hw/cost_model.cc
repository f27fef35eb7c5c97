#include "tpusim/hw/cost_model.h"

#include <algorithm>
#include <cmath>

#include "tpusim/hw/layout.h"
#include "tpusim/hw/mxu.h"

namespace tpusim::hw {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool IsInt8(ir::ElementType t) { return ir::IsInteger(t) && ir::BitWidth(t) <= 8; }
bool IsFp8(ir::ElementType t) { return ir::IsFloat(t) && ir::BitWidth(t) <= 8; }

// Elements a transpose unit moves per cycle: one 8 x 128 tile in 8 cycles
// (an assumption; no generation publishes it).
constexpr double kTransposeElementsPerCycle = 128;

// K is streamed through VMEM in double-buffered chunks of this depth, so a
// tile's footprint does not grow with the contraction size.
constexpr int64_t kStreamedK = 512;

// Extra HBM bytes when a matmul's operands and f32 result do not fit in VMEM
// together: the output is computed in b x b f32 blocks held in VMEM while K
// streams past, re-reading LHS rows once per column block and RHS columns
// once per row block.
int64_t TilingBytes(const ChipSpec& chip, const ops::MatmulWork& mm) {
  const int64_t eb = std::max(1, ir::BitWidth(mm.lhs) / 8);
  const int64_t vmem = chip.memory.vmem_bytes;
  if ((mm.m * mm.k + mm.k * mm.n) * eb + mm.m * mm.n * 4 <= vmem) return 0;
  const int64_t tk = std::min(mm.k, kStreamedK);
  auto fits = [&](int64_t b) { return b * b * 4 + 2 * 2 * b * tk * eb <= vmem; };
  int64_t b = 128;
  while (fits(b + 128)) b += 128;
  const int64_t col_blocks = CeilDiv(mm.n, b), row_blocks = CeilDiv(mm.m, b);
  return mm.batch * ((col_blocks - 1) * mm.m * mm.k + (row_blocks - 1) * mm.k * mm.n) * eb;
}

// A fused kernel's intermediates beyond VMEM go to HBM and come back, on
// every tile.
int64_t SpillBytes(const ChipSpec& chip, const ops::Work& w) {
  const int64_t excess = w.onchip_bytes - chip.memory.vmem_bytes;
  return excess > 0 ? 2 * excess * std::max<int64_t>(w.onchip_tiles, 1) : 0;
}

double VectorSeconds(const ChipSpec& chip, const ops::Work& w, double pad_ratio) {
  const double slots = static_cast<double>(chip.vpu.lanes) * chip.vpu.sublanes *
                       CoresPerDevice(chip) * chip.clock_hz;
  using C = ops::VectorClass;
  auto ops = [&](C c) { return static_cast<double>(w.vector_ops[static_cast<int>(c)]); };
  // Divides and square roots go through the same unit as transcendentals.
  double alu = (ops(C::kAlu) + ops(C::kMultiply)) / chip.vpu.alu_ops_per_cycle;
  double slow = (ops(C::kDivide) + ops(C::kTranscendental)) /
                chip.vpu.transcendental_ops_per_cycle;
  return (alu + slow) * pad_ratio / slots;
}

}  // namespace

const char* UnitName(Unit u) {
  switch (u) {
    case Unit::kMxu: return "mxu";
    case Unit::kVector: return "vpu";
    case Unit::kTranspose: return "xlu";
    case Unit::kHbm: return "hbm";
    case Unit::kIci:
      return "ici";
    case Unit::kHost: return "host";
  }
  return "?";
}

const char* BoundName(Bound b) {
  switch (b) {
    case Bound::kMxu: return "mxu";
    case Bound::kVector: return "vpu";
    case Bound::kTranspose: return "xlu";
    case Bound::kMemory: return "memory";
    case Bound::kIci:
      return "ici";
    case Bound::kHost: return "host";
    case Bound::kOverhead: return "overhead";
    case Bound::kFree: return "free";
  }
  return "?";
}

int CoresPerDevice(const ChipSpec& chip) { return chip.megacore ? chip.tensor_cores : 1; }

int64_t MatmulCycles(const ChipSpec& chip, const ops::MatmulWork& mm) {
  const int cores = CoresPerDevice(chip);
  const MxuSpec& mxu = chip.mxu;
  MatmulDims d{mm.m, mm.k, mm.n};
  int64_t cycles;
  if (mm.batch >= cores) {
    // Whole batch elements per core; each MXU takes a share of the tiles.
    int64_t tiles = CeilDiv(mm.batch, cores) * NumTiles(mxu, d);
    cycles = ArrayCycles(mxu, d, CeilDiv(tiles, mxu.per_core)).cycles;
  } else {
    cycles = CoreCycles(mxu, d, cores).cycles;
  }
  double rate = 1.0;
  if (IsInt8(mm.lhs) && IsInt8(mm.rhs)) rate = mxu.int8_rate;
  if (IsFp8(mm.lhs) && IsFp8(mm.rhs)) rate = mxu.fp8_rate;
  return static_cast<int64_t>(std::ceil(static_cast<double>(cycles) * mm.passes / rate));
}

OpCost PriceWork(const ChipSpec& chip, const ops::Work& w, double ici_seconds) {
  OpCost c;
  c.flops = w.flops;
  c.bytes_read = w.bytes_read();
  c.bytes_written = w.bytes_written();
  if (w.free) return c;
  int64_t padded = 0, largest_write = 0, largest_write_padded = 0;
  for (const ir::Type& t : w.reads) padded += PaddedBytes(t);
  for (const ir::Type& t : w.writes) {
    padded += PaddedBytes(t);
    if (ops::LogicalBytes(t) > largest_write) {
      largest_write = ops::LogicalBytes(t);
      largest_write_padded = PaddedBytes(t);
    }
  }
  c.padding_bytes = std::max<int64_t>(0, padded - c.bytes_read - c.bytes_written);
  for (const ops::MatmulWork& mm : w.matmuls) {
    c.mxu_cycles += MatmulCycles(chip, mm);
    c.tiling_bytes += TilingBytes(chip, mm);
  }
  const int64_t dma = w.random_accesses *
                      std::max(w.random_access_bytes, chip.memory.dma_granule_bytes);
  c.spill_bytes = SpillBytes(chip, w);
  c.hbm_bytes = padded + c.tiling_bytes + c.spill_bytes + dma;
  // The vector unit works on whole tiles, so padding costs it slots too.
  double pad_ratio = largest_write > 0 ? static_cast<double>(largest_write_padded) /
                                             static_cast<double>(largest_write)
                                       : 1.0;
  c.unit_seconds[static_cast<int>(Unit::kMxu)] =
      c.mxu_cycles / (chip.clock_hz * chip.mxu.sustained_fraction);
  c.unit_seconds[static_cast<int>(Unit::kVector)] = VectorSeconds(chip, w, pad_ratio);
  c.unit_seconds[static_cast<int>(Unit::kTranspose)] =
      w.transpose_elements / (kTransposeElementsPerCycle * chip.vpu.transpose_units *
                              CoresPerDevice(chip) * chip.clock_hz);
  c.unit_seconds[static_cast<int>(Unit::kHbm)] = c.hbm_bytes / chip.HbmBytesPerSPerDevice();
  c.unit_seconds[static_cast<int>(Unit::kIci)] = ici_seconds;
  // Without a host link in the chip model, host transfers cost nothing
  // (the op's notes say so).
  if (w.host_bytes > 0 && chip.host.bytes_per_s > 0) {
    c.unit_seconds[static_cast<int>(Unit::kHost)] =
        w.host_bytes / chip.host.bytes_per_s + w.host_transfers * chip.host.latency_s;
  }
  c.overhead_seconds = chip.op_overhead_s;
  static constexpr Bound kBoundOf[kNumUnits] = {Bound::kMxu, Bound::kVector, Bound::kTranspose,
                                                Bound::kMemory, Bound::kIci,  Bound::kHost};
  double busiest = 0;
  c.bound = Bound::kOverhead;
  for (int u = 0; u < kNumUnits; ++u) {
    if (c.unit_seconds[u] > busiest) {
      busiest = c.unit_seconds[u];
      c.bound = kBoundOf[u];
    }
  }
  if (busiest < c.overhead_seconds) c.bound = Bound::kOverhead;
  c.seconds = busiest + c.overhead_seconds;
  return c;
}

}  // namespace tpusim::hw
