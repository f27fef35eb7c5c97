#include "tpusim/numerics/tpu.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "numerics/vector_clones.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::numerics {

int NumPasses(MatmulPrecision p) {
  switch (p) {
    case MatmulPrecision::kDefault: return 1;
    case MatmulPrecision::kHigh: return 3;
    case MatmulPrecision::kHighest: return 6;
  }
  return 1;
}

const char* MatmulPrecisionName(MatmulPrecision p) {
  switch (p) {
    case MatmulPrecision::kDefault: return "DEFAULT";
    case MatmulPrecision::kHigh: return "HIGH";
    case MatmulPrecision::kHighest: return "HIGHEST";
  }
  return "DEFAULT";
}

uint16_t TpuFloatToBf16(float f) {
  uint32_t b = std::bit_cast<uint32_t>(f);
  // bf16 has f32's exponent range, so only subnormal inputs give subnormal
  // results; the TPU's vector unit flushes them.
  if ((b & 0x7F800000u) == 0) return static_cast<uint16_t>((b >> 16) & 0x8000u);
  return FloatToBf16(f);
}

float TpuRoundToBf16(float f) { return Bf16ToFloat(TpuFloatToBf16(f)); }

void SplitBf16(float x, int n, float* parts) {
  float rest = x;
  for (int i = 0; i < n; ++i) {
    parts[i] = TpuRoundToBf16(rest);
    // inf - inf would make the lower parts NaN and poison products that are
    // finite in the true value's expansion; a non-finite head has no tail.
    rest = std::isfinite(parts[i]) ? rest - parts[i] : 0.0f;  // exact in f32
  }
}

namespace {

// SplitBf16Array on one block, with SplitBf16's steps as bit operations
// that vectorise: `rest` holds what the parts so far leave of each input.
[[gnu::always_inline]] inline void SplitBlock(const float* __restrict in, int64_t m, int n,
                                              uint16_t* __restrict planes, int64_t plane_stride,
                                              float* __restrict rest) {
  for (int64_t j = 0; j < m; ++j) rest[j] = in[j];
  for (int i = 0; i < n; ++i) {
    uint16_t* __restrict out = planes + i * plane_stride;
    for (int64_t j = 0; j < m; ++j) {
      const uint32_t b = std::bit_cast<uint32_t>(rest[j]);
      // TpuFloatToBf16: FloatToBf16, but subnormals flushed to signed zero.
      const uint16_t h = (b & 0x7F800000u) == 0 ? static_cast<uint16_t>((b >> 16) & 0x8000u)
                                                : FloatToBf16(rest[j]);
      out[j] = h;
      const float part = Bf16ToFloat(h);
      const bool finite = (h & 0x7F80u) != 0x7F80u;
      rest[j] = finite ? rest[j] - part : 0.0f;
    }
  }
}

}  // namespace

TPUSIM_VECTOR_CLONES void SplitBf16Array(const float* in, int64_t count, int n, uint16_t* planes,
                                         int64_t plane_stride) {
  constexpr int64_t kBlock = 512;
  alignas(64) float rest[kBlock];
  int64_t j = 0;
  for (; j + kBlock <= count; j += kBlock) {
    SplitBlock(in + j, kBlock, n, planes + j, plane_stride, rest);
  }
  SplitBlock(in + j, count - j, n, planes + j, plane_stride, rest);
}

}  // namespace tpusim::numerics
