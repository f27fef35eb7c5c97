#include "tpusim/numerics/tpu.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tpusim/numerics/float_formats.h"

namespace tpusim::numerics {
namespace {

float F(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(TpuBf16Test, FlushesSubnormalsKeepsSpecials) {
  EXPECT_EQ(TpuFloatToBf16(F(0x00400000)), 0x0000);  // subnormal
  EXPECT_EQ(TpuFloatToBf16(F(0x80010000)), 0x8000);  // keeps the sign
  EXPECT_EQ(FloatToBf16(F(0x00010000)), 0x0001);     // IEEE keeps it
  EXPECT_EQ(TpuFloatToBf16(F(0x00800000)), 0x0080);  // smallest normal stays
  EXPECT_EQ(TpuFloatToBf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(TpuFloatToBf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_TRUE(std::isnan(TpuRoundToBf16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(TpuRoundToBf16(1.0f + 0x1p-8f), 1.0f);  // ties to even
  EXPECT_EQ(TpuRoundToBf16(1.0f + 0x1.8p-8f), 1.0f + 0x1p-7f);
}

TEST(TpuBf16Test, MatchesIeeeOnNormals) {
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i) {
    float f = F(rng());
    if (!std::isfinite(f) || std::fabs(f) < std::numeric_limits<float>::min()) continue;
    ASSERT_EQ(TpuFloatToBf16(f), FloatToBf16(f));
  }
}

TEST(SplitBf16Test, PartsAreBf16AndShrink) {
  float p[3];
  SplitBf16(1.0f + 0x1p-10f + 0x1p-20f, 3, p);
  EXPECT_EQ(p[0], 1.0f);
  EXPECT_EQ(p[1], 0x1p-10f);
  EXPECT_EQ(p[2], 0x1p-20f);
  SplitBf16(std::numeric_limits<float>::infinity(), 3, p);
  EXPECT_EQ(p[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(p[1], 0.0f);
  EXPECT_EQ(p[2], 0.0f);
}

// Three bf16 parts hold all 24 significant bits of a normal f32 (as long as
// no part is flushed); two parts hold about 16.
TEST(SplitBf16Test, ThreePartsAreExactTwoAreClose) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  for (int i = 0; i < 100000; ++i) {
    float x = dist(rng);
    float p[3];
    SplitBf16(x, 3, p);
    for (float part : p) ASSERT_EQ(TpuRoundToBf16(part), part);
    ASSERT_EQ(double{p[0]} + p[1] + p[2], double{x});
    SplitBf16(x, 2, p);
    ASSERT_LE(std::fabs(double{p[0]} + p[1] - x), std::ldexp(std::fabs(x), -16));
  }
}

// The array form gives SplitBf16's parts as bf16 bits, for every kind of
// input (every exponent, signs, subnormals, inf, NaN payloads), in blocks and
// a tail.
TEST(SplitBf16Test, ArrayFormHasTheSameBits) {
  std::vector<float> in;
  for (uint64_t b = 0; b <= 0xFFFFFFFFu; b += 65521) in.push_back(F(static_cast<uint32_t>(b)));
  for (uint32_t b : {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00001u, 0x7F800001u,
                     0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu, 0x3F808000u}) {
    in.push_back(F(b));
  }
  const int64_t n = static_cast<int64_t>(in.size());
  for (int parts = 1; parts <= 3; ++parts) {
    std::vector<uint16_t> planes(static_cast<size_t>(parts * n));
    SplitBf16Array(in.data(), n, parts, planes.data(), n);
    for (int64_t j = 0; j < n; ++j) {
      float p[3];
      SplitBf16(in[j], parts, p);
      for (int i = 0; i < parts; ++i) {
        ASSERT_EQ(planes[i * n + j], FloatToBf16(p[i]))
            << "part " << i << " of " << std::hex << std::bit_cast<uint32_t>(in[j]);
      }
    }
  }
}

TEST(MatmulPrecisionTest, Passes) {
  EXPECT_EQ(NumPasses(MatmulPrecision::kDefault), 1);
  EXPECT_EQ(NumPasses(MatmulPrecision::kHigh), 3);
  EXPECT_EQ(NumPasses(MatmulPrecision::kHighest), 6);
  EXPECT_STREQ(MatmulPrecisionName(MatmulPrecision::kHigh), "HIGH");
}

}  // namespace
}  // namespace tpusim::numerics
