// Conversions between f32/f64 and the narrow floating types (bf16, f16, the
// f8/f6/f4 variants), and generic element load/store helpers.
//
// Everything here follows IEEE round-to-nearest-even unless a name says
// otherwise; the TPU's own conversion rules are in numerics/tpu.h.
#ifndef TPUSIM_NUMERICS_FLOAT_FORMATS_H_
#define TPUSIM_NUMERICS_FLOAT_FORMATS_H_

#include <bit>
#include <cstdint>

#include "tpusim/ir/element_type.h"

namespace tpusim::numerics {

// The f32 <-> bf16/f16 conversions are inline and branch-free, so that loops
// over arrays of them vectorise (float_arrays.h has such loops).

// bf16: round to nearest even; NaN stays NaN (made quiet, its payload's top
// bits kept), infinities kept, overflow goes to infinity, subnormals kept
// (IEEE behaviour).
inline uint16_t FloatToBf16(float f) {
  uint32_t b = std::bit_cast<uint32_t>(f);
  uint32_t rounded = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
  uint32_t nan = (b >> 16) | 0x40u;
  return static_cast<uint16_t>((b & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}
inline float Bf16ToFloat(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

// IEEE binary16 (NaN made quiet, its payload's top bits kept).
inline uint16_t FloatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7FFFFFFFu;
  // Normal results: rebias the exponent (15 - 127, modulo 2^32) and round
  // to nearest even at bit 13.
  uint32_t normal = (x + 0xC8000FFFu + ((x >> 13) & 1u)) >> 13;
  // Below 2^-14 the result is subnormal; adding 0.5 puts its quantum
  // (2^-24) at the float's last place, so the FPU's own RNE rounds it.
  uint32_t subnormal = std::bit_cast<uint32_t>(std::bit_cast<float>(x) + 0.5f) - 0x3F000000u;
  uint32_t mag = x < 0x38800000u ? subnormal : normal;
  mag = x >= 0x477FF000u ? 0x7C00u : mag;  // >= 65520 rounds to infinity
  mag = x > 0x7F800000u ? 0x7E00u | ((x >> 13) & 0x3FFu) : mag;  // quiet NaN
  return static_cast<uint16_t>(sign | mag);
}
uint16_t DoubleToHalf(double d);
inline float HalfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t{bits & 0x8000u} << 16;
  uint32_t exp = (bits >> 10) & 0x1Fu;
  uint32_t mant = bits & 0x3FFu;
  uint32_t normal = ((exp + 112) << 23) | (mant << 13);
  uint32_t special = 0x7F800000u | (mant << 13);  // infinity or NaN, payload as is
  uint32_t subnormal =
      std::bit_cast<uint32_t>(static_cast<float>(static_cast<int32_t>(mant)) * 0x1p-24f);
  uint32_t mag = exp == 0 ? subnormal : exp == 0x1F ? special : normal;
  return std::bit_cast<float>(sign | mag);
}

// Any floating element type of 16 bits or fewer (bf16, f16, f8*, f6*, f4*):
// the bits of the value nearest to `v` (round to nearest even). Overflow gives
// infinity where the type has one, else NaN for the FN/FNUZ types that have a
// NaN, else the largest finite value (saturating types without NaN).
// REQUIRES: IsFloat(t) && BitWidth(t) <= 16.
uint16_t EncodeSmallFloat(ir::ElementType t, double v);
// The exact value of `bits` in type t. REQUIRES as above.
double DecodeSmallFloat(ir::ElementType t, uint16_t bits);

// EncodeSmallFloat(t, f) for f32 inputs as branch-free integer operations,
// for loops that the compiler vectorises: build one per element type outside
// the loop, call it per element.
class SmallFloatEncoder {
 public:
  // REQUIRES: IsFloat(t) && BitWidth(t) <= 16.
  explicit SmallFloatEncoder(ir::ElementType t);

  // Bit for bit EncodeSmallFloat(t, f) (NaN made the type's canonical NaN).
  uint16_t operator()(float f) const {
    uint32_t u = std::bit_cast<uint32_t>(f);
    uint32_t a = u & 0x7FFFFFFFu;
    uint32_t neg = u >> 31;
    uint32_t sign = (neg << sign_shift_) & sign_mask_;
    // Results in the normal range: rebias, round to nearest even at `shift_`.
    uint32_t normal = (a + rebias_ + round_half_ + ((a >> shift_) & 1u)) >> shift_;
    // Subnormal results: magic_'s last place is the type's smallest
    // subnormal, so the FPU's RNE does the rounding (as in FloatToHalf).
    uint32_t subnormal = std::bit_cast<uint32_t>(std::bit_cast<float>(a) + magic_) - magic_bits_;
    // f8E8M0FNU has no subnormals: 2^-126 only above 1.5 * 2^-127.
    subnormal = exponent_only_ ? static_cast<uint32_t>(a > 0x00600000u) : subnormal;
    uint32_t mag = a < min_normal_ ? subnormal : normal;
    mag = mag > max_finite_ ? overflow_ : mag;
    uint32_t r = mag | (mag == 0 ? sign & zero_sign_mask_ : sign);
    bool nan = a > 0x7F800000u || (neg & negative_is_nan_ & (a != 0)) != 0;
    return static_cast<uint16_t>(nan ? nan_ | (sign & nan_sign_mask_) : r);
  }

 private:
  uint32_t shift_ = 0;           // 23 - mantissa bits
  uint32_t rebias_ = 0;          // (bias - 127) << 23, modulo 2^32
  uint32_t round_half_ = 0;      // (1 << (shift_ - 1)) - 1
  uint32_t min_normal_ = 0;      // f32 bits of the type's smallest normal
  float magic_ = 0;              // 2^23 times the smallest subnormal
  uint32_t magic_bits_ = 0;
  uint32_t max_finite_ = 0;      // bits of the largest finite magnitude
  uint32_t overflow_ = 0;        // what rounds past it becomes
  uint32_t sign_shift_ = 0;
  uint32_t sign_mask_ = 0;       // 0 for unsigned types
  uint32_t zero_sign_mask_ = 0;  // 0 for types without -0
  uint32_t nan_ = 0;             // the canonical NaN (0 where there is none)
  uint32_t nan_sign_mask_ = 0;
  uint32_t negative_is_nan_ = 0;
  uint32_t exponent_only_ = 0;
};

// Largest finite value and smallest positive normal of a float type.
double MaxFinite(ir::ElementType t);
double MinNormal(ir::ElementType t);

// Generic per-element access to tensor storage, for paths that are not
// performance critical (conversions, printing, literals). `p` points to one
// stored element of type t.
//   LoadAsDouble: value as a double (complex: the real part; ints exact to 2^53).
//   LoadAsInt64: integer/bool value; floats truncated toward zero.
//   StoreDouble / StoreInt64: the stored form of v (floats round to nearest
//   even, ints wrap modulo 2^bits, bools are v != 0).
double LoadAsDouble(ir::ElementType t, const uint8_t* p);
int64_t LoadAsInt64(ir::ElementType t, const uint8_t* p);
uint64_t LoadAsUint64(ir::ElementType t, const uint8_t* p);
void StoreDouble(ir::ElementType t, double v, uint8_t* p);
void StoreInt64(ir::ElementType t, int64_t v, uint8_t* p);

}  // namespace tpusim::numerics

#endif  // TPUSIM_NUMERICS_FLOAT_FORMATS_H_
