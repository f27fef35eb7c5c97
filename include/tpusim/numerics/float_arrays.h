// Whole-array conversions between floating types, at memory speed: bit for
// bit the per-element functions of float_formats.h, in loops the compiler
// vectorises (with AVX-512 where the host has it, chosen at run time).
//
// Narrow types are stored as tensors store them: uint16_t for bf16 and f16,
// one byte for the f8/f6/f4 types. `in` and `out` must not overlap; n >= 0.
#ifndef TPUSIM_NUMERICS_FLOAT_ARRAYS_H_
#define TPUSIM_NUMERICS_FLOAT_ARRAYS_H_

#include <bit>
#include <cstdint>

#include "tpusim/ir/element_type.h"

namespace tpusim::numerics {

// out[i] = FloatToBf16(in[i]): NaN payloads kept, made quiet.
void FloatToBf16Array(const float* in, uint16_t* out, int64_t n);
// out[i] = Bf16ToFloat(in[i]): the bits shifted, a signalling NaN kept as is.
void Bf16ToFloatArray(const uint16_t* in, float* out, int64_t n);
// out[i] = FloatToHalf(in[i]) and HalfToFloat(in[i]).
void FloatToHalfArray(const float* in, uint16_t* out, int64_t n);
void HalfToFloatArray(const uint16_t* in, float* out, int64_t n);
// out[i] = TpuFloatToBf16(in[i]) (numerics/tpu.h: subnormals flushed).
void TpuFloatToBf16Array(const float* in, uint16_t* out, int64_t n);

// out[i] = EncodeSmallFloat(t, in[i]): one rounding, NaN the type's
// canonical NaN. REQUIRES: IsFloat(t) && BitWidth(t) <= 16.
void EncodeSmallFloatArray(ir::ElementType t, const float* in, void* out, int64_t n);
void EncodeSmallFloatArray(ir::ElementType t, const double* in, void* out, int64_t n);
// out[i] = static_cast<float>(DecodeSmallFloat(t, in[i])): exact, with
// NaNs made quiet as the conversion through double makes them.
// REQUIRES as above.
void DecodeSmallFloatArray(ir::ElementType t, const void* in, float* out, int64_t n);

// For any two real float types (f4 to f64): element i of `out` is
// StoreDouble(to, LoadAsDouble(from, element i of `in`)), the generic path
// that reads inputs and writes .npy files.
// REQUIRES: IsFloat(from) && IsFloat(to).
void ConvertFloatArray(ir::ElementType from, const void* in, ir::ElementType to, void* out,
                       int64_t n);

// Whether any of n f32 values (bf16 values, in their 16-bit storage) is
// subnormal: exponent field zero, value not zero.
bool AnySubnormalFloat(const float* v, int64_t n);
bool AnySubnormalBf16(const uint16_t* v, int64_t n);
// Replaces every subnormal by the zero of its sign, in place.
void FlushSubnormalFloats(float* v, int64_t n);
void FlushSubnormalBf16s(uint16_t* v, int64_t n);

// `d` rounded to f32 with round-to-odd: rounding that once more to any type
// of at most 22 significant bits gives the correct rounding of `d` (no false
// ties), as EncodeSmallFloat(t, d) needs. NaN stays NaN with its sign.
inline float RoundToOddFloat(double d) {
  float f = static_cast<float>(d);
  uint32_t u = std::bit_cast<uint32_t>(f);
  double back = static_cast<double>(f);
  // Truncate toward zero, then mark an inexact result by its last bit.
  u -= (back > d && d >= 0) || (back < d && d < 0) ? 1u : 0u;
  u |= back != d && d == d ? 1u : 0u;
  return std::bit_cast<float>(u);
}

}  // namespace tpusim::numerics

#endif  // TPUSIM_NUMERICS_FLOAT_ARRAYS_H_
