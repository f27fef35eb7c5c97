// The TPU's numerics: its f32 -> bf16 rounding and the MXU's precision passes.
//
// Shared by the host executor (--numerics tpu) and the cycle-level MXU
// reference model, so both compute the same bits.
#ifndef TPUSIM_NUMERICS_TPU_H_
#define TPUSIM_NUMERICS_TPU_H_

#include <bit>
#include <cstdint>

#include "tpusim/numerics/float_formats.h"

namespace tpusim::numerics {

// How many bf16 MXU passes an f32 matmul takes.
enum class MatmulPrecision {
  kDefault,  // 1 pass: inputs rounded to bf16, f32 accumulation
  kHigh,     // 3 passes (bf16_3x): hi*hi + hi*lo + lo*hi
  kHighest,  // 6 passes: hi/mid/lo splits, all products of order <= 2
};

int NumPasses(MatmulPrecision p);  // 1, 3, 6
const char* MatmulPrecisionName(MatmulPrecision p);  // "DEFAULT", ...

// The TPU's f32 -> bf16: round to nearest even, overflow to inf, subnormal
// inputs and results flushed to (signed) zero, NaN and inf kept. Inline, so
// that loops over arrays vectorise.
inline uint16_t TpuFloatToBf16(float f) {
  uint32_t b = std::bit_cast<uint32_t>(f);
  // bf16 has f32's exponent range, so only subnormal inputs give subnormal
  // results; the TPU's vector unit flushes them.
  return (b & 0x7F800000u) == 0 ? static_cast<uint16_t>((b >> 16) & 0x8000u) : FloatToBf16(f);
}
// TpuFloatToBf16 then back to f32.
inline float TpuRoundToBf16(float f) { return Bf16ToFloat(TpuFloatToBf16(f)); }

// Splits x into n bf16-representable parts (n = 1, 2 or 3), each the TPU
// bf16 rounding of what the previous parts leave: x ~= parts[0] + ... .
void SplitBf16(float x, int n, float* parts);

// SplitBf16 over `count` floats, each part as its bf16 bits: part i of
// in[j] goes to planes[i * plane_stride + j]. The bits FloatToBf16 gives
// SplitBf16's parts, element by element; vectorised.
void SplitBf16Array(const float* in, int64_t count, int n, uint16_t* planes, int64_t plane_stride);

}  // namespace tpusim::numerics

#endif  // TPUSIM_NUMERICS_TPU_H_
