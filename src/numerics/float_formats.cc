#include "tpusim/numerics/float_formats.h"

#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

namespace tpusim::numerics {
namespace {

using ir::ElementType;

// How a narrow float type spends its top exponent code and its sign bit.
enum class NanStyle : uint8_t {
  kIeee,       // exponent all ones: infinity (mantissa 0) or NaN
  kAllOnes,    // "FN": only S.1..1.1..1 is NaN; no infinity
  kNegZero,    // "FNUZ": 1000...0 is the only NaN; no infinity, no -0
  kNone,       // f4/f6 "FN": every code is a finite number
  kUnsigned,   // f8E8M0FNU: no sign, no zero, 0xFF is NaN
};

struct Format {
  int ebits;
  int mbits;
  int bias;
  NanStyle nan;
};

Format FormatOf(ElementType t) {
  switch (t) {
    case ElementType::kF4E2M1FN: return {2, 1, 1, NanStyle::kNone};
    case ElementType::kF6E2M3FN: return {2, 3, 1, NanStyle::kNone};
    case ElementType::kF6E3M2FN: return {3, 2, 3, NanStyle::kNone};
    case ElementType::kF8E3M4: return {3, 4, 3, NanStyle::kIeee};
    case ElementType::kF8E4M3: return {4, 3, 7, NanStyle::kIeee};
    case ElementType::kF8E4M3FN: return {4, 3, 7, NanStyle::kAllOnes};
    case ElementType::kF8E4M3FNUZ: return {4, 3, 8, NanStyle::kNegZero};
    case ElementType::kF8E4M3B11FNUZ: return {4, 3, 11, NanStyle::kNegZero};
    case ElementType::kF8E5M2: return {5, 2, 15, NanStyle::kIeee};
    case ElementType::kF8E5M2FNUZ: return {5, 2, 16, NanStyle::kNegZero};
    case ElementType::kF8E8M0FNU: return {8, 0, 127, NanStyle::kUnsigned};
    case ElementType::kF16: return {5, 10, 15, NanStyle::kIeee};
    case ElementType::kBF16: return {8, 7, 127, NanStyle::kIeee};
    default: return {8, 23, 127, NanStyle::kIeee};  // not reached for valid callers
  }
}

int SignShift(const Format& f) { return f.ebits + f.mbits; }
uint16_t ExpMask(const Format& f) { return static_cast<uint16_t>((1u << f.ebits) - 1); }
uint16_t MantMask(const Format& f) { return static_cast<uint16_t>((1u << f.mbits) - 1); }

// The largest biased exponent that encodes finite numbers.
int MaxFiniteExponent(const Format& f) {
  return f.nan == NanStyle::kIeee ? ExpMask(f) - 1 : ExpMask(f);
}

double MaxFiniteOf(const Format& f) {
  if (f.nan == NanStyle::kUnsigned) return std::ldexp(1.0, ExpMask(f) - 1 - f.bias);
  int emax = MaxFiniteExponent(f) - f.bias;
  // FN types give the all-ones mantissa of the top exponent to NaN.
  int top_mant = f.nan == NanStyle::kAllOnes ? MantMask(f) - 1 : MantMask(f);
  return std::ldexp(1.0 + std::ldexp(top_mant, -f.mbits), emax);
}

uint16_t NanBits(const Format& f) {
  switch (f.nan) {
    case NanStyle::kIeee:  // quiet NaN: top mantissa bit set
      return static_cast<uint16_t>((ExpMask(f) << f.mbits) | (1u << (f.mbits - 1)));
    case NanStyle::kAllOnes:
      return static_cast<uint16_t>((ExpMask(f) << f.mbits) | MantMask(f));
    case NanStyle::kNegZero:
      return static_cast<uint16_t>(1u << SignShift(f));
    case NanStyle::kUnsigned:
      return 0xFF;
    case NanStyle::kNone:
      break;
  }
  return 0;
}

// Bits of the magnitude `a` (finite, >= 0, already representable in f).
uint16_t EncodeMagnitude(const Format& f, double a) {
  if (a == 0) return 0;
  int e;
  double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int biased = e - 1 + f.bias;
  if (biased <= 0) {
    // Subnormal: a = mant * 2^(1 - bias - mbits).
    return static_cast<uint16_t>(std::ldexp(a, f.bias - 1 + f.mbits));
  }
  auto mant = static_cast<uint16_t>(std::ldexp(m * 2 - 1, f.mbits));
  return static_cast<uint16_t>((biased << f.mbits) | mant);
}

// Rounds |v| to the grid of f (nearest, ties to even), ignoring the range's
// top end. Exact because scaling a double by a power of two is exact here.
double RoundToGrid(const Format& f, double a) {
  int e;
  std::frexp(a, &e);
  int min_exp = 1 - f.bias;  // exponent of the smallest normal
  int exp = std::max(e - 1, min_exp);
  double quantum = std::ldexp(1.0, exp - f.mbits);
  return std::nearbyint(a / quantum) * quantum;
}

// f8E8M0FNU holds only 2^-127 .. 2^127 and NaN. Like LLVM's APFloat, zero
// becomes the smallest value and negative numbers (unrepresentable) NaN.
uint16_t EncodeE8M0(double v) {
  if (v == 0) return 0x00;
  if (std::isnan(v) || v < 0 || std::isinf(v)) return 0xFF;
  // Round the exponent: ties (1.5 * 2^e) go to the even biased exponent,
  // as bitwise round-to-nearest-even with no mantissa bits does.
  int e;
  double m = std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
  int exp = e - 1;
  double frac = m * 2;  // in [1, 2)
  if (frac > 1.5 || (frac == 1.5 && ((exp + 127) & 1))) ++exp;
  if (exp < -127) return 0x00;  // nearest is the smallest value
  if (exp > 127) return 0xFF;
  return static_cast<uint16_t>(exp + 127);
}

// Decoded values of every 8-bit-or-narrower type, built once.
struct SmallTables {
  std::array<std::array<double, 256>, ir::kNumElementTypes> value{};
  SmallTables() {
    for (int i = 0; i < ir::kNumElementTypes; ++i) {
      auto t = static_cast<ElementType>(i);
      if (!ir::IsFloat(t) || ir::BitWidth(t) > 8) continue;
      for (int b = 0; b < 256; ++b) value[i][b] = Decode(t, static_cast<uint16_t>(b));
    }
  }
  static double Decode(ElementType t, uint16_t bits);
};

double SmallTables::Decode(ElementType t, uint16_t bits) {
  Format f = FormatOf(t);
  int width = ir::BitWidth(t);
  bits &= static_cast<uint16_t>((1u << width) - 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.nan == NanStyle::kUnsigned) {
    return bits == 0xFF ? nan : std::ldexp(1.0, bits - 127);
  }
  bool neg = (bits >> SignShift(f)) & 1;
  int exp = (bits >> f.mbits) & ExpMask(f);
  int mant = bits & MantMask(f);
  if (f.nan == NanStyle::kNegZero && bits == NanBits(f)) return nan;
  if (f.nan == NanStyle::kAllOnes && exp == ExpMask(f) && mant == MantMask(f)) {
    return neg ? -nan : nan;
  }
  if (f.nan == NanStyle::kIeee && exp == ExpMask(f)) {
    double r = mant == 0 ? std::numeric_limits<double>::infinity() : nan;
    return neg ? -r : r;
  }
  double mag = exp == 0 ? std::ldexp(mant, 1 - f.bias - f.mbits)
                        : std::ldexp((1 << f.mbits) + mant, exp - f.bias - f.mbits);
  return neg ? -mag : mag;
}

const SmallTables& Tables() {
  static const SmallTables tables;
  return tables;
}

uint32_t FloatToBits(float f) { return std::bit_cast<uint32_t>(f); }

// A double that rounds to any float type of <= 24 significant bits exactly
// as `v` would: |v| rounded to 53 bits with round-to-odd, so a second
// rounding cannot see a false tie.
double Int64ToDoubleOdd(int64_t v) {
  uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int shift = std::bit_width(m) - 53;
  if (shift > 0) {
    uint64_t t = m >> shift;
    if (m & ((uint64_t{1} << shift) - 1)) t |= 1;
    double d = std::ldexp(static_cast<double>(t), shift);
    return v < 0 ? -d : d;
  }
  return static_cast<double>(v);
}

// Saturating double -> int64, truncating toward zero; NaN gives 0.
int64_t SaturatingToInt64(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (d < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

uint64_t SaturatingToUint64(double d) {
  if (std::isnan(d) || d <= 0) return 0;
  if (d >= 18446744073709551616.0) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(d);
}

// Wraps v into an integer type's storage: two's complement modulo 2^bits,
// sign-extended for signed types and zero-extended for unsigned ones.
void StoreWrappedInt(ElementType t, uint64_t v, uint8_t* p) {
  int bits = ir::BitWidth(t);
  if (bits < 8) {
    uint8_t low = static_cast<uint8_t>(v & ((1u << bits) - 1));
    if (ir::IsSignedInt(t) && (low >> (bits - 1)) & 1) {
      low = static_cast<uint8_t>(low | (0xFF << bits));
    }
    *p = low;
    return;
  }
  switch (bits) {
    case 8: { uint8_t x = static_cast<uint8_t>(v); std::memcpy(p, &x, 1); break; }
    case 16: { uint16_t x = static_cast<uint16_t>(v); std::memcpy(p, &x, 2); break; }
    case 32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}

template <typename T>
T LoadRaw(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void StoreRaw(T v, uint8_t* p) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace

uint16_t DoubleToHalf(double d) { return EncodeSmallFloat(ElementType::kF16, d); }

uint16_t EncodeSmallFloat(ElementType t, double v) {
  if (t == ElementType::kF8E8M0FNU) return EncodeE8M0(v);
  Format f = FormatOf(t);
  uint16_t sign = std::signbit(v) ? static_cast<uint16_t>(1u << SignShift(f)) : 0;
  if (std::isnan(v)) {
    // f4/f6 have no NaN encoding; NaN has no nearest value, so it becomes +0.
    if (f.nan == NanStyle::kNone) return 0;
    return f.nan == NanStyle::kNegZero ? NanBits(f) : (sign | NanBits(f));
  }
  double max = MaxFiniteOf(f);
  double a = std::fabs(v);
  double r = std::isinf(a) ? a : RoundToGrid(f, a);
  if (r > max) {
    switch (f.nan) {
      case NanStyle::kIeee: return sign | static_cast<uint16_t>(ExpMask(f) << f.mbits);
      case NanStyle::kAllOnes: return sign | NanBits(f);
      case NanStyle::kNegZero: return NanBits(f);
      default: r = max; break;  // saturate
    }
  }
  if (r == 0 && f.nan == NanStyle::kNegZero) return 0;  // no negative zero
  return sign | EncodeMagnitude(f, r);
}

SmallFloatEncoder::SmallFloatEncoder(ElementType t) {
  Format f = FormatOf(t);
  shift_ = static_cast<uint32_t>(23 - f.mbits);
  rebias_ = static_cast<uint32_t>(f.bias - 127) << 23;
  round_half_ = (1u << (shift_ - 1)) - 1;
  min_normal_ = FloatToBits(std::ldexp(1.0f, 1 - f.bias));
  magic_ = std::ldexp(1.0f, 24 - f.bias - f.mbits);
  magic_bits_ = FloatToBits(magic_);
  sign_shift_ = static_cast<uint32_t>(SignShift(f));
  sign_mask_ = ~0u;
  zero_sign_mask_ = ~0u;
  nan_sign_mask_ = ~0u;
  const uint32_t all_ones = (uint32_t{ExpMask(f)} << f.mbits) | MantMask(f);
  max_finite_ = all_ones;
  switch (f.nan) {
    case NanStyle::kIeee:
      max_finite_ = (uint32_t{ExpMask(f)} - 1) << f.mbits | MantMask(f);
      overflow_ = uint32_t{ExpMask(f)} << f.mbits;  // infinity
      break;
    case NanStyle::kAllOnes:
      max_finite_ = all_ones - 1;
      overflow_ = NanBits(f);
      break;
    case NanStyle::kNegZero:
      overflow_ = NanBits(f);
      zero_sign_mask_ = 0;
      break;
    case NanStyle::kNone:
      overflow_ = all_ones;  // saturate
      nan_sign_mask_ = 0;    // NaN becomes +0
      break;
    case NanStyle::kUnsigned:
      min_normal_ = 0x00800000u;  // f32 subnormals: see operator()
      max_finite_ = all_ones - 1;
      overflow_ = NanBits(f);
      sign_mask_ = 0;
      zero_sign_mask_ = 0;
      nan_sign_mask_ = 0;
      negative_is_nan_ = 1;
      exponent_only_ = 1;
      break;
  }
  nan_ = NanBits(f);
}

double DecodeSmallFloat(ElementType t, uint16_t bits) {
  if (t == ElementType::kBF16) return Bf16ToFloat(bits);
  if (t == ElementType::kF16) return HalfToFloat(bits);
  return Tables().value[static_cast<int>(t)][bits & 0xFF];
}

double MaxFinite(ElementType t) {
  switch (t) {
    case ElementType::kF32: return std::numeric_limits<float>::max();
    case ElementType::kF64: return std::numeric_limits<double>::max();
    default: return MaxFiniteOf(FormatOf(t));
  }
}

double MinNormal(ElementType t) {
  switch (t) {
    case ElementType::kF32: return std::numeric_limits<float>::min();
    case ElementType::kF64: return std::numeric_limits<double>::min();
    default: return std::ldexp(1.0, 1 - FormatOf(t).bias);
  }
}

double LoadAsDouble(ElementType t, const uint8_t* p) {
  switch (t) {
    case ElementType::kI1: return *p != 0;
    case ElementType::kSI2: case ElementType::kSI4: case ElementType::kSI8:
      return LoadRaw<int8_t>(p);
    case ElementType::kSI16: return LoadRaw<int16_t>(p);
    case ElementType::kSI32: return LoadRaw<int32_t>(p);
    case ElementType::kSI64: return static_cast<double>(LoadRaw<int64_t>(p));
    case ElementType::kUI2: case ElementType::kUI4: case ElementType::kUI8: return *p;
    case ElementType::kUI16: return LoadRaw<uint16_t>(p);
    case ElementType::kUI32: return LoadRaw<uint32_t>(p);
    case ElementType::kUI64: return static_cast<double>(LoadRaw<uint64_t>(p));
    case ElementType::kF16: case ElementType::kBF16:
      return DecodeSmallFloat(t, LoadRaw<uint16_t>(p));
    case ElementType::kF32: case ElementType::kC64: return LoadRaw<float>(p);
    case ElementType::kF64: case ElementType::kC128: return LoadRaw<double>(p);
    default: return DecodeSmallFloat(t, *p);  // f4/f6/f8
  }
}

int64_t LoadAsInt64(ElementType t, const uint8_t* p) {
  switch (t) {
    case ElementType::kSI64: return LoadRaw<int64_t>(p);
    case ElementType::kUI64: return static_cast<int64_t>(LoadRaw<uint64_t>(p));
    default:
      if (ir::IsFloat(t) || ir::IsComplex(t)) return SaturatingToInt64(LoadAsDouble(t, p));
      return static_cast<int64_t>(LoadAsDouble(t, p));  // exact below 64 bits
  }
}

uint64_t LoadAsUint64(ElementType t, const uint8_t* p) {
  switch (t) {
    case ElementType::kUI64: return LoadRaw<uint64_t>(p);
    case ElementType::kSI64: return static_cast<uint64_t>(LoadRaw<int64_t>(p));
    default:
      if (ir::IsFloat(t) || ir::IsComplex(t)) return SaturatingToUint64(LoadAsDouble(t, p));
      return static_cast<uint64_t>(LoadAsInt64(t, p));
  }
}

void StoreDouble(ElementType t, double v, uint8_t* p) {
  switch (t) {
    case ElementType::kI1: *p = v != 0; return;
    case ElementType::kF32: StoreRaw(static_cast<float>(v), p); return;
    case ElementType::kF64: StoreRaw(v, p); return;
    case ElementType::kC64: StoreRaw(std::complex<float>(static_cast<float>(v), 0), p); return;
    case ElementType::kC128: StoreRaw(std::complex<double>(v, 0), p); return;
    case ElementType::kF16: case ElementType::kBF16:
      StoreRaw(EncodeSmallFloat(t, v), p);
      return;
    default:
      if (ir::IsFloat(t)) {
        *p = static_cast<uint8_t>(EncodeSmallFloat(t, v));
      } else if (ir::IsUnsignedInt(t)) {
        StoreWrappedInt(t, v < 0 ? static_cast<uint64_t>(SaturatingToInt64(v))
                                 : SaturatingToUint64(v), p);
      } else {
        StoreWrappedInt(t, static_cast<uint64_t>(SaturatingToInt64(v)), p);
      }
  }
}

void StoreInt64(ElementType t, int64_t v, uint8_t* p) {
  switch (t) {
    case ElementType::kI1: *p = v != 0; return;
    case ElementType::kF32: StoreRaw(static_cast<float>(v), p); return;
    case ElementType::kF64: StoreRaw(static_cast<double>(v), p); return;
    case ElementType::kC64:
      StoreRaw(std::complex<float>(static_cast<float>(v), 0), p);
      return;
    case ElementType::kC128:
      StoreRaw(std::complex<double>(static_cast<double>(v), 0), p);
      return;
    default:
      if (ir::IsFloat(t)) {
        StoreDouble(t, Int64ToDoubleOdd(v), p);
      } else {
        StoreWrappedInt(t, static_cast<uint64_t>(v), p);
      }
  }
}

}  // namespace tpusim::numerics
