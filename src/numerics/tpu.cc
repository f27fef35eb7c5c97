#include "tpusim/numerics/tpu.h"

#include <bit>
#include <cmath>

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

}  // namespace tpusim::numerics
