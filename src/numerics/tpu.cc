#include "tpusim/numerics/tpu.h"

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

namespace {

// SplitBf16 of m floats, each part as its bf16 bits, as bit operations that
// vectorise: `rest` holds what the parts so far leave of each input. inf -
// inf would make the lower parts NaN and poison products that are finite in
// the true value's expansion, so a non-finite head has no tail.
[[gnu::always_inline]] inline void SplitBlock(const float* __restrict in, int64_t m, int n,
                                              uint16_t* __restrict planes, int64_t plane_stride,
                                              float* __restrict rest) {
  for (int64_t j = 0; j < m; ++j) rest[j] = in[j];
  for (int i = 0; i < n; ++i) {
    uint16_t* __restrict out = planes + i * plane_stride;
    for (int64_t j = 0; j < m; ++j) {
      const uint16_t h = TpuFloatToBf16(rest[j]);
      out[j] = h;
      const float part = Bf16ToFloat(h);
      const bool finite = (h & 0x7F80u) != 0x7F80u;
      rest[j] = finite ? rest[j] - part : 0.0f;
    }
  }
}

}  // namespace

void SplitBf16(float x, int n, float* parts) {
  uint16_t bits[3];
  float rest;
  SplitBlock(&x, 1, n, bits, 1, &rest);
  for (int i = 0; i < n; ++i) parts[i] = Bf16ToFloat(bits[i]);
}

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
