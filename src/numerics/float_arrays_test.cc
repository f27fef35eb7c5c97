#include "tpusim/numerics/float_arrays.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "tpusim/numerics/float_formats.h"
#include "tpusim/numerics/tpu.h"

namespace tpusim::numerics {
namespace {

using ir::ElementType;

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
float F(uint32_t bits) { return std::bit_cast<float>(bits); }

// The scalar conversions as they were before they became inline and
// branch-free: the reference the new forms must equal bit for bit.
uint16_t OldFloatToBf16(float f) {
  uint32_t b = Bits(f);
  if (std::isnan(f)) return static_cast<uint16_t>((b >> 16) | 0x40);
  uint32_t lsb = (b >> 16) & 1;
  return static_cast<uint16_t>((b + 0x7FFF + lsb) >> 16);
}

uint16_t OldFloatToHalf(float f) {
  uint32_t x = Bits(f);
  auto sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7FFFFFFF;
  if (x > 0x7F800000) return sign | 0x7E00 | ((x >> 13) & 0x3FF);
  if (x >= 0x477FF000) return sign | 0x7C00;
  if (x < 0x38800000) {
    float r = F(x) + 0.5f;
    return sign | static_cast<uint16_t>(Bits(r) - 0x3F000000);
  }
  uint32_t odd = (x >> 13) & 1;
  x += (static_cast<uint32_t>(15 - 127) << 23) + 0xFFF + odd;
  return sign | static_cast<uint16_t>(x >> 13);
}

float OldHalfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t{bits & 0x8000u} << 16;
  uint32_t exp = (bits >> 10) & 0x1F;
  uint32_t mant = bits & 0x3FF;
  if (exp == 0x1F) return F(sign | 0x7F800000 | (mant << 13));
  if (exp == 0) {
    float mag = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -mag : mag;
  }
  return F(sign | ((exp + 112) << 23) | (mant << 13));
}

std::vector<ElementType> NarrowFloatTypes() {
  std::vector<ElementType> types;
  for (int i = 0; i < ir::kNumElementTypes; ++i) {
    auto t = static_cast<ElementType>(i);
    if (ir::IsFloat(t) && ir::BitWidth(t) <= 16) types.push_back(t);
  }
  return types;
}

std::vector<ElementType> AllFloatTypes() {
  std::vector<ElementType> types = NarrowFloatTypes();
  types.push_back(ElementType::kF32);
  types.push_back(ElementType::kF64);
  return types;
}

// About three million f32 inputs: specials (zeros, infinities, NaNs with
// payloads, subnormals), values at and beside every rounding tie of every
// narrow format at every exponent, an even sweep of all bit patterns, and
// random bit patterns.
const std::vector<float>& Samples() {
  static const std::vector<float> samples = [] {
    std::vector<float> s;
    for (uint32_t b : {0x00000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu,
                       0x7F800000u, 0x7F800001u, 0x7FBFFFFFu, 0x7FC00000u, 0x7FC12345u,
                       0x7FFFFFFFu, 0x3F800000u, 0x477FF000u, 0x477FEFFFu, 0x38800000u}) {
      s.push_back(F(b));
      s.push_back(F(b | 0x80000000u));
    }
    for (uint32_t exp = 0; exp < 256; ++exp) {
      for (uint32_t sign : {0u, 1u}) {
        for (uint32_t shift : {13u, 16u, 19u, 20u, 21u, 22u, 23u}) {
          uint32_t half = 1u << (shift - 1);
          for (uint32_t k : {0u, 1u, 2u, 3u, (0x7FFFFFu >> shift) - 1, 0x7FFFFFu >> shift}) {
            for (uint32_t d : {0u, 1u, half - 1, half, half + 1, 2 * half - 1}) {
              uint32_t mant = ((k << shift) + d) & 0x7FFFFFu;
              s.push_back(F(sign << 31 | exp << 23 | mant));
            }
          }
        }
      }
    }
    for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) s.push_back(F(static_cast<uint32_t>(b)));
    std::mt19937 rng(7);
    for (int i = 0; i < 2000000; ++i) s.push_back(F(rng()));
    return s;
  }();
  return samples;
}

// Every value of the narrow types as f32, the midpoints between neighbours
// (exact ties) and the floats just beside those midpoints.
std::vector<float> TiesOf(ElementType t) {
  std::vector<float> values;
  int codes = 1 << ir::BitWidth(t);
  std::vector<double> sorted;
  for (int c = 0; c < codes; ++c) {
    double v = DecodeSmallFloat(t, static_cast<uint16_t>(c));
    if (!std::isnan(v)) sorted.push_back(v);
  }
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    values.push_back(static_cast<float>(sorted[i]));
    if (i + 1 == sorted.size() || std::isinf(sorted[i]) || std::isinf(sorted[i + 1])) continue;
    auto mid = static_cast<float>((sorted[i] + sorted[i + 1]) / 2);  // exact
    values.push_back(mid);
    values.push_back(std::nextafter(mid, 0.0f));
    values.push_back(std::nextafter(mid, std::numeric_limits<float>::infinity()));
    values.push_back(std::nextafter(mid, -std::numeric_limits<float>::infinity()));
  }
  // Past the largest finite value: overflow, and the tie just above it.
  double max = MaxFinite(t);
  for (double v : {max * 1.0625, max * 1.125, max * 1.25, max * 2, max * 1.5}) {
    values.push_back(static_cast<float>(v));
    values.push_back(static_cast<float>(-v));
  }
  return values;
}

TEST(InlineFloatFormatsTest, EqualTheOldScalarFunctions) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    ASSERT_EQ(Bits(HalfToFloat(static_cast<uint16_t>(b))),
              Bits(OldHalfToFloat(static_cast<uint16_t>(b))))
        << std::hex << b;
    ASSERT_EQ(Bits(Bf16ToFloat(static_cast<uint16_t>(b))), b << 16);
  }
  for (float f : Samples()) {
    ASSERT_EQ(FloatToHalf(f), OldFloatToHalf(f)) << std::hex << Bits(f);
    ASSERT_EQ(FloatToBf16(f), OldFloatToBf16(f)) << std::hex << Bits(f);
  }
}

// Sizes that are not a multiple of any vector width or block.
constexpr int64_t kOddSizes[] = {0, 1, 7, 1023, 1025, 3001};

TEST(FloatArraysTest, Bf16AndHalfEqualTheScalarFunctions) {
  const std::vector<float>& in = Samples();
  const auto n = static_cast<int64_t>(in.size());
  std::vector<uint16_t> out(in.size());
  FloatToBf16Array(in.data(), out.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], FloatToBf16(in[i])) << std::hex << Bits(in[i]);
  FloatToHalfArray(in.data(), out.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], FloatToHalf(in[i])) << std::hex << Bits(in[i]);
  TpuFloatToBf16Array(in.data(), out.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], TpuFloatToBf16(in[i])) << std::hex << Bits(in[i]);
  }

  std::vector<uint16_t> codes(0x10000);
  for (uint32_t b = 0; b < 0x10000; ++b) codes[b] = static_cast<uint16_t>(b);
  std::vector<float> back(codes.size());
  Bf16ToFloatArray(codes.data(), back.data(), 0x10000);
  for (uint32_t b = 0; b < 0x10000; ++b) ASSERT_EQ(Bits(back[b]), Bits(Bf16ToFloat(codes[b])));
  HalfToFloatArray(codes.data(), back.data(), 0x10000);
  for (uint32_t b = 0; b < 0x10000; ++b) ASSERT_EQ(Bits(back[b]), Bits(HalfToFloat(codes[b])));
}

TEST(FloatArraysTest, EncodeEqualsEncodeSmallFloatForEveryNarrowType) {
  for (ElementType t : NarrowFloatTypes()) {
    SCOPED_TRACE(std::string(ir::ElementTypeName(t)));
    std::vector<float> in = Samples();
    std::vector<float> ties = TiesOf(t);
    in.insert(in.end(), ties.begin(), ties.end());
    const auto n = static_cast<int64_t>(in.size());
    const int w = ir::StorageBytes(t);
    std::vector<uint8_t> out(in.size() * w);
    EncodeSmallFloatArray(t, in.data(), out.data(), n);
    SmallFloatEncoder encoder(t);
    for (int64_t i = 0; i < n; ++i) {
      uint16_t want = EncodeSmallFloat(t, in[i]);
      uint16_t got = w == 2 ? reinterpret_cast<const uint16_t*>(out.data())[i] : out[i];
      ASSERT_EQ(got, want) << "input bits " << std::hex << Bits(in[i]);
      ASSERT_EQ(encoder(in[i]), want) << "input bits " << std::hex << Bits(in[i]);
    }
  }
}

TEST(FloatArraysTest, EncodeFromDoubleRoundsOnce) {
  std::mt19937_64 rng(11);
  std::vector<double> in = {0.0, -0.0, std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(),
                            -std::numeric_limits<double>::quiet_NaN(), 1e300, -1e300, 1e-300,
                            -1e-300, std::numeric_limits<double>::denorm_min()};
  for (int i = 0; i < 300000; ++i) in.push_back(std::bit_cast<double>(rng()));
  // Doubles near f32's range, where most narrow values live.
  for (int i = 0; i < 300000; ++i) {
    in.push_back(std::ldexp(std::bit_cast<double>((rng() >> 12) | 0x3FF0000000000000ull),
                            static_cast<int>(rng() % 320) - 160));
  }
  for (ElementType t : NarrowFloatTypes()) {
    SCOPED_TRACE(std::string(ir::ElementTypeName(t)));
    std::vector<double> cases = in;
    // Just above and below every tie: one bit past a float's precision,
    // where rounding first to f32 and then to t would round twice.
    for (float tie : TiesOf(t)) {
      cases.push_back(tie);
      cases.push_back(tie * (1 + 0x1p-40));
      cases.push_back(tie * (1 - 0x1p-40));
    }
    const auto n = static_cast<int64_t>(cases.size());
    const int w = ir::StorageBytes(t);
    std::vector<uint8_t> out(cases.size() * w);
    EncodeSmallFloatArray(t, cases.data(), out.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      uint16_t want = EncodeSmallFloat(t, cases[i]);
      uint16_t got = w == 2 ? reinterpret_cast<const uint16_t*>(out.data())[i] : out[i];
      ASSERT_EQ(got, want) << "input " << cases[i];
    }
  }
}

TEST(FloatArraysTest, DecodeEqualsDecodeSmallFloatForEveryCode) {
  for (ElementType t : NarrowFloatTypes()) {
    SCOPED_TRACE(std::string(ir::ElementTypeName(t)));
    const int w = ir::StorageBytes(t);
    const int64_t codes = w == 2 ? 0x10000 : 0x100;
    std::vector<uint8_t> in(codes * w);
    for (int64_t c = 0; c < codes; ++c) std::memcpy(in.data() + c * w, &c, w);
    std::vector<float> out(codes);
    DecodeSmallFloatArray(t, in.data(), out.data(), codes);
    for (int64_t c = 0; c < codes; ++c) {
      ASSERT_EQ(Bits(out[c]), Bits(static_cast<float>(DecodeSmallFloat(t, c)))) << c;
    }
  }
}

// Random bit patterns of `t`'s storage (canonical for the sub-byte types).
std::vector<uint8_t> RandomElements(ElementType t, int64_t n, std::mt19937_64& rng) {
  const int w = ir::StorageBytes(t);
  std::vector<uint8_t> bytes(n * w);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = rng();
    if (w == 1) r &= (1u << ir::BitWidth(t)) - 1;
    std::memcpy(bytes.data() + i * w, &r, w);
  }
  return bytes;
}

TEST(FloatArraysTest, ConvertEqualsLoadAsDoubleThenStoreDouble) {
  std::mt19937_64 rng(3);
  for (ElementType from : AllFloatTypes()) {
    for (ElementType to : AllFloatTypes()) {
      SCOPED_TRACE(std::string(ir::ElementTypeName(from)) + " -> " +
                   std::string(ir::ElementTypeName(to)));
      for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{1025}, int64_t{40001}}) {
        std::vector<uint8_t> in = RandomElements(from, n, rng);
        const int in_w = ir::StorageBytes(from), out_w = ir::StorageBytes(to);
        std::vector<uint8_t> got(n * out_w + 1, 0xAB), want(n * out_w + 1, 0xAB);
        ConvertFloatArray(from, in.data(), to, got.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          StoreDouble(to, LoadAsDouble(from, in.data() + i * in_w), want.data() + i * out_w);
        }
        ASSERT_EQ(got, want);  // and nothing written past the end
      }
    }
  }
}

TEST(FloatArraysTest, OddSizesLeaveTheRestAlone) {
  for (int64_t n : kOddSizes) {
    std::vector<float> in(n + 1);
    for (int64_t i = 0; i <= n; ++i) in[i] = static_cast<float>(i) * 0.37f - 100;
    std::vector<uint16_t> out(n + 1, 0xBEEF);
    FloatToBf16Array(in.data(), out.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], FloatToBf16(in[i]));
    EXPECT_EQ(out[n], 0xBEEF);
  }
}

TEST(RoundToOddFloatTest, TruncatesAndMarksInexactResults) {
  EXPECT_EQ(RoundToOddFloat(1.0), 1.0f);
  EXPECT_EQ(RoundToOddFloat(-0.0), -0.0f);
  EXPECT_TRUE(std::signbit(RoundToOddFloat(-0.0)));
  EXPECT_EQ(Bits(RoundToOddFloat(1.0 + 0x1p-30)), Bits(1.0f) | 1);
  EXPECT_EQ(Bits(RoundToOddFloat(1.0 + 0x1p-23 - 0x1p-40)), Bits(1.0f) | 1);
  EXPECT_EQ(Bits(RoundToOddFloat(-1e300)), 0xFF7FFFFFu);  // truncates to -FLT_MAX
  EXPECT_EQ(Bits(RoundToOddFloat(1e-300)), 1u);           // the smallest subnormal
  EXPECT_EQ(RoundToOddFloat(std::numeric_limits<double>::infinity()),
            std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(RoundToOddFloat(std::numeric_limits<double>::quiet_NaN())));
}

// Every bf16 code, and f32 values at and around the subnormal range, alone and
// placed in whole blocks and in the tail of an array.
TEST(FloatArraysTest, SubnormalsFoundAndFlushedToSignedZero) {
  auto check16 = [](uint16_t h) {
    const bool sub = (h & 0x7f80) == 0 && (h & 0x7fff) != 0;
    for (int64_t n : {int64_t{1}, int64_t{1024}, int64_t{3000}}) {
      std::vector<uint16_t> v(static_cast<size_t>(n), 0x3f80);  // ones
      v[static_cast<size_t>(n - 1)] = h;
      ASSERT_EQ(AnySubnormalBf16(v.data(), n), sub) << std::hex << h << " n " << n;
      FlushSubnormalBf16s(v.data(), n);
      ASSERT_EQ(v.back(), sub ? (h & 0x8000) : h) << std::hex << h;
      ASSERT_EQ(v.front(), n > 1 ? 0x3f80 : v.back());
    }
  };
  for (uint32_t h = 0; h <= 0xffff; ++h) check16(static_cast<uint16_t>(h));

  const uint32_t edges[] = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff,
                            0x807fffff, 0x00800000, 0x80800000, 0x7f800000, 0x7fc00000,
                            0x3f800000, 0x00400000};
  for (uint32_t b : edges) {
    const bool sub = (b & 0x7f800000) == 0 && (b & 0x7fffffff) != 0;
    std::vector<float> v(2500, 1.0f);
    v[1500] = F(b);  // in the second whole block
    EXPECT_EQ(AnySubnormalFloat(v.data(), 2500), sub) << std::hex << b;
    EXPECT_FALSE(AnySubnormalFloat(v.data(), 1024));  // the block before it
    FlushSubnormalFloats(v.data(), 2500);
    EXPECT_EQ(Bits(v[1500]), sub ? (b & 0x80000000) : b) << std::hex << b;
    EXPECT_EQ(v[1499], 1.0f);
    EXPECT_EQ(v[2499], 1.0f);
  }
  EXPECT_FALSE(AnySubnormalFloat(nullptr, 0));
}

}  // namespace
}  // namespace tpusim::numerics
