#include "tpusim/numerics/float_formats.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace tpusim::numerics {
namespace {

using ir::ElementType;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

float F(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(Bf16Test, RoundsToNearestEven) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBf16(1.0f + 0x1p-8f), 0x3F80);         // tie -> even
  EXPECT_EQ(FloatToBf16(1.0f + 3 * 0x1p-8f), 0x3F82);     // tie -> even (up)
  EXPECT_EQ(FloatToBf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);
  EXPECT_EQ(FloatToBf16(-2.0f), 0xC000);
  EXPECT_EQ(FloatToBf16(std::numeric_limits<float>::max()), 0x7F80);  // overflow
  EXPECT_EQ(FloatToBf16(F(0x00010000)), 0x0001);  // subnormals are kept
  EXPECT_EQ(FloatToBf16(F(0x7F800001)), 0x7FC0);  // signalling NaN made quiet
  EXPECT_EQ(FloatToBf16(F(0xFFC12345)), 0xFFC1);
  EXPECT_EQ(Bf16ToFloat(0x3FC0), 1.5f);
}

TEST(Bf16Test, AgreesWithGenericEncoder) {
  std::mt19937 rng(1);
  for (int i = 0; i < 200000; ++i) {
    float f = F(rng());
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToBf16(f), EncodeSmallFloat(ElementType::kBF16, f)) << f;
  }
}

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(1.0f / 3), 0x3555);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);  // halfway to 2^16 rounds to inf
  EXPECT_EQ(FloatToHalf(0x1p-24f), 0x0001);
  EXPECT_EQ(FloatToHalf(0x1p-25f), 0x0000);         // tie -> even (zero)
  EXPECT_EQ(FloatToHalf(-0x1.8p-25f), 0x8001);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(F(0x7F800000)), 0x7C00);
  EXPECT_EQ(FloatToHalf(F(0x7F800001)) & 0x7E00, 0x7E00);  // quiet NaN
  EXPECT_EQ(HalfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(HalfToFloat(0xFBFF), -65504.0f);
  // 1 + 2^-11 + 2^-30 is just above a tie: the double path must not round twice.
  EXPECT_EQ(DoubleToHalf(1.0 + 0x1p-11 + 0x1p-30), 0x3C01);
  EXPECT_EQ(DoubleToHalf(1.0 + 0x1p-11), 0x3C00);
}

TEST(HalfTest, EveryHalfRoundTripsAndAgreesWithGenericEncoder) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = HalfToFloat(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), b);
    ASSERT_EQ(EncodeSmallFloat(ElementType::kF16, f), b);
    ASSERT_EQ(DecodeSmallFloat(ElementType::kF16, static_cast<uint16_t>(b)), f);
  }
  std::mt19937 rng(2);
  for (int i = 0; i < 200000; ++i) {
    float f = F(rng());
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), EncodeSmallFloat(ElementType::kF16, f)) << f;
  }
}

struct Expect {
  ElementType type;
  double value;
  uint16_t bits;
};

TEST(SmallFloatTest, EncodesKnownValues) {
  const Expect cases[] = {
      // f8E4M3FN: bias 7, no inf, S.1111.111 is NaN, max 448.
      {ElementType::kF8E4M3FN, 1.0, 0x38},
      {ElementType::kF8E4M3FN, 448, 0x7E},
      {ElementType::kF8E4M3FN, 464, 0x7E},  // tie with 480 -> even mantissa
      {ElementType::kF8E4M3FN, 465, 0x7F},  // rounds past max -> NaN
      {ElementType::kF8E4M3FN, kInf, 0x7F},
      {ElementType::kF8E4M3FN, -kInf, 0xFF},
      {ElementType::kF8E4M3FN, 0x1p-9, 0x01},  // smallest subnormal
      {ElementType::kF8E4M3FN, 0x1p-10, 0x00},  // tie -> zero
      {ElementType::kF8E4M3FN, -0.0, 0x80},
      // f8E5M2: IEEE, bias 15.
      {ElementType::kF8E5M2, 1.0, 0x3C},
      {ElementType::kF8E5M2, 57344, 0x7B},
      {ElementType::kF8E5M2, 61439, 0x7B},
      {ElementType::kF8E5M2, 61440, 0x7C},  // tie -> even -> 65536 -> inf
      {ElementType::kF8E5M2, kNaN, 0x7E},
      {ElementType::kF8E5M2, 0x1p-16, 0x01},
      // FNUZ: NaN is 0x80, no negative zero.
      {ElementType::kF8E4M3FNUZ, 1.0, 0x40},
      {ElementType::kF8E4M3FNUZ, 240, 0x7F},
      {ElementType::kF8E4M3FNUZ, 256, 0x80},
      {ElementType::kF8E4M3FNUZ, -0.0, 0x00},
      {ElementType::kF8E4M3FNUZ, -1e-9, 0x00},
      {ElementType::kF8E4M3FNUZ, kNaN, 0x80},
      {ElementType::kF8E4M3FNUZ, -kInf, 0x80},
      {ElementType::kF8E5M2FNUZ, 1.0, 0x40},
      {ElementType::kF8E5M2FNUZ, 57344, 0x7F},
      {ElementType::kF8E4M3B11FNUZ, 1.0, 0x58},
      {ElementType::kF8E4M3B11FNUZ, 30, 0x7F},
      {ElementType::kF8E4M3B11FNUZ, -0x1p-10, 0x88},
      // IEEE-like f8E4M3 (bias 7) and f8E3M4 (bias 3).
      {ElementType::kF8E4M3, 1.0, 0x38},
      {ElementType::kF8E4M3, 240, 0x77},
      {ElementType::kF8E4M3, 1000, 0x78},
      {ElementType::kF8E3M4, 1.0, 0x30},
      {ElementType::kF8E3M4, 15.5, 0x6F},
      {ElementType::kF8E3M4, -kInf, 0xF0},
      // f4E2M1FN: 0, 0.5, 1, 1.5, 2, 3, 4, 6; saturates.
      {ElementType::kF4E2M1FN, 1.0, 0x2},
      {ElementType::kF4E2M1FN, 6.0, 0x7},
      {ElementType::kF4E2M1FN, 100.0, 0x7},
      {ElementType::kF4E2M1FN, -kInf, 0xF},
      {ElementType::kF4E2M1FN, 5.0, 0x6},   // tie -> 4 (even)
      {ElementType::kF4E2M1FN, 0.25, 0x0},  // tie -> 0
      {ElementType::kF4E2M1FN, 0.75, 0x2},  // tie -> 1
      {ElementType::kF6E2M3FN, 1.0, 0x08},
      {ElementType::kF6E2M3FN, 7.5, 0x1F},
      {ElementType::kF6E2M3FN, -0.125, 0x21},
      {ElementType::kF6E3M2FN, 1.0, 0x0C},
      {ElementType::kF6E3M2FN, 28.0, 0x1F},
      {ElementType::kF6E3M2FN, 1e9, 0x1F},
      // f8E8M0FNU: powers of two 2^-127..2^127, 0xFF NaN.
      {ElementType::kF8E8M0FNU, 1.0, 0x7F},
      {ElementType::kF8E8M0FNU, 0x1p-127, 0x00},
      {ElementType::kF8E8M0FNU, 0x1p127, 0xFE},
      {ElementType::kF8E8M0FNU, 3.0, 0x80},  // tie -> even exponent (2)
      {ElementType::kF8E8M0FNU, 6.0, 0x82},  // tie -> even exponent (8)
      {ElementType::kF8E8M0FNU, 2.9, 0x80},
      {ElementType::kF8E8M0FNU, 3.1, 0x81},
      {ElementType::kF8E8M0FNU, -1.0, 0xFF},
      {ElementType::kF8E8M0FNU, kNaN, 0xFF},
  };
  for (const Expect& c : cases) {
    EXPECT_EQ(EncodeSmallFloat(c.type, c.value), c.bits)
        << ir::ElementTypeName(c.type) << " " << c.value;
  }
}

TEST(SmallFloatTest, DecodesSpecials) {
  EXPECT_TRUE(std::isnan(DecodeSmallFloat(ElementType::kF8E4M3FN, 0x7F)));
  EXPECT_EQ(DecodeSmallFloat(ElementType::kF8E4M3FN, 0xFE), -448);
  EXPECT_EQ(DecodeSmallFloat(ElementType::kF8E4M3FN, 0x78), 256);  // top exponent is finite
  EXPECT_TRUE(std::isnan(DecodeSmallFloat(ElementType::kF8E4M3FNUZ, 0x80)));
  EXPECT_TRUE(std::isnan(DecodeSmallFloat(ElementType::kF8E5M2FNUZ, 0x80)));
  EXPECT_EQ(DecodeSmallFloat(ElementType::kF8E5M2, 0xFC), -kInf);
  EXPECT_EQ(DecodeSmallFloat(ElementType::kF8E5M2, 0x01), 0x1p-16);
  EXPECT_EQ(DecodeSmallFloat(ElementType::kF8E4M3B11FNUZ, 0x01), 0x1p-13);
  EXPECT_EQ(DecodeSmallFloat(ElementType::kF4E2M1FN, 0x5), 3.0);
  EXPECT_EQ(DecodeSmallFloat(ElementType::kF4E2M1FN, 0x1), 0.5);
  EXPECT_EQ(DecodeSmallFloat(ElementType::kF8E8M0FNU, 0x00), 0x1p-127);
  EXPECT_TRUE(std::isnan(DecodeSmallFloat(ElementType::kF8E8M0FNU, 0xFF)));
}

const ElementType kNarrowTypes[] = {
    ElementType::kF4E2M1FN,   ElementType::kF6E2M3FN,       ElementType::kF6E3M2FN,
    ElementType::kF8E3M4,     ElementType::kF8E4M3,         ElementType::kF8E4M3FN,
    ElementType::kF8E4M3FNUZ, ElementType::kF8E4M3B11FNUZ,  ElementType::kF8E5M2,
    ElementType::kF8E5M2FNUZ, ElementType::kF8E8M0FNU};

// Every code decodes to a value that encodes back to the same code, and the
// extremes the decoder finds are MaxFinite and MinNormal.
TEST(SmallFloatTest, EveryCodeRoundTrips) {
  for (ElementType t : kNarrowTypes) {
    int codes = 1 << ir::BitWidth(t);
    double max_seen = 0;
    for (int b = 0; b < codes; ++b) {
      double v = DecodeSmallFloat(t, static_cast<uint16_t>(b));
      if (std::isnan(v)) continue;
      EXPECT_EQ(EncodeSmallFloat(t, v), b) << ir::ElementTypeName(t) << " code " << b;
      if (std::isfinite(v)) max_seen = std::max(max_seen, v);
    }
    EXPECT_EQ(MaxFinite(t), max_seen) << ir::ElementTypeName(t);
    uint16_t min_normal = EncodeSmallFloat(t, MinNormal(t));
    EXPECT_EQ(DecodeSmallFloat(t, min_normal), MinNormal(t)) << ir::ElementTypeName(t);
    // Codes below the smallest normal are the subnormals: evenly spaced.
    if (min_normal > 1) {
      EXPECT_EQ(DecodeSmallFloat(t, min_normal - 1), MinNormal(t) - DecodeSmallFloat(t, 1))
          << ir::ElementTypeName(t);
    }
  }
  EXPECT_EQ(MaxFinite(ElementType::kF8E4M3FN), 448);
  EXPECT_EQ(MaxFinite(ElementType::kF8E5M2FNUZ), 57344);
  EXPECT_EQ(MaxFinite(ElementType::kBF16), 0x1.FEp127);
  EXPECT_EQ(MinNormal(ElementType::kF8E4M3B11FNUZ), 0x1p-10);
  EXPECT_EQ(MinNormal(ElementType::kF16), 0x1p-14);
}

TEST(LoadStoreTest, IntegersWrapAndExtend) {
  uint8_t b[8] = {};
  StoreInt64(ElementType::kSI4, 9, b);
  EXPECT_EQ(LoadAsInt64(ElementType::kSI4, b), -7);
  EXPECT_EQ(b[0], 0xF9);  // sign-extended in its byte
  StoreInt64(ElementType::kUI4, -1, b);
  EXPECT_EQ(b[0], 0x0F);
  StoreInt64(ElementType::kSI2, 2, b);
  EXPECT_EQ(LoadAsInt64(ElementType::kSI2, b), -2);
  StoreInt64(ElementType::kSI16, 70000, b);
  EXPECT_EQ(LoadAsInt64(ElementType::kSI16, b), 70000 - 65536);
  StoreInt64(ElementType::kUI64, -1, b);
  EXPECT_EQ(LoadAsUint64(ElementType::kUI64, b), ~uint64_t{0});
  StoreDouble(ElementType::kSI32, -3.7, b);
  EXPECT_EQ(LoadAsInt64(ElementType::kSI32, b), -3);
  StoreDouble(ElementType::kI1, 0.5, b);
  EXPECT_EQ(LoadAsInt64(ElementType::kI1, b), 1);
}

TEST(LoadStoreTest, FloatsRoundOnce) {
  uint8_t b[16] = {};
  // Just above a bf16 tie: rounding through a plain double would see a tie.
  StoreInt64(ElementType::kBF16, (int64_t{1} << 60) + (int64_t{1} << 52) + 1, b);
  EXPECT_EQ(LoadAsDouble(ElementType::kBF16, b), 0x1p60 + 0x1p53);
  StoreDouble(ElementType::kF8E4M3FN, 3.3, b);
  EXPECT_EQ(LoadAsDouble(ElementType::kF8E4M3FN, b), 3.25);
  StoreDouble(ElementType::kC64, 2.5, b);
  EXPECT_EQ(LoadAsDouble(ElementType::kC64, b), 2.5);
  StoreDouble(ElementType::kF32, 1e300, b);
  EXPECT_EQ(LoadAsDouble(ElementType::kF32, b), kInf);
  StoreDouble(ElementType::kBF16, -1e300, b);
  EXPECT_EQ(LoadAsInt64(ElementType::kBF16, b), std::numeric_limits<int64_t>::min());
  StoreDouble(ElementType::kF16, kNaN, b);
  EXPECT_EQ(LoadAsInt64(ElementType::kF16, b), 0);
}

}  // namespace
}  // namespace tpusim::numerics
