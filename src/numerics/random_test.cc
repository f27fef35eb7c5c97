#include "tpusim/numerics/random.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <vector>

namespace tpusim::numerics {
namespace {

// Random123's known answers for philox4x32 10 (its tests/kat_vectors).
TEST(PhiloxTest, MatchesRandom123KnownAnswers) {
  using Words = std::array<uint32_t, 4>;
  EXPECT_EQ(Philox4x32({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(RandomWordsTest, WordIIsTheBlockWordOfItsCounter) {
  const uint64_t seed = 0x0123456789ABCDEFull, stream = 0x5000000007ull;
  std::vector<uint32_t> words(10);
  const int64_t first = (int64_t{1} << 34) + 2;  // a block index above 2^32
  RandomWords(seed, stream, first, words.data(), 10);
  for (int64_t j = 0; j < 10; ++j) {
    uint64_t i = static_cast<uint64_t>(first + j), block = i / 4;
    auto r = Philox4x32({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                         static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)},
                        {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
    EXPECT_EQ(words[j], r[i % 4]) << j;
  }
}

// Any window of a stream has the values of the same indices of the whole.
TEST(RandomNormalsTest, ValuesDependOnlyOnTheirIndex) {
  const int64_t n = 10000;
  std::vector<float> whole(n);
  RandomNormals(7, 3, 0, whole.data(), n);
  for (int64_t first : {1, 1023, 1024, 1025, 4095, 5000}) {
    for (int64_t count : {1, 3, 1024, 3001}) {
      if (first + count > n) continue;
      std::vector<float> part(count);
      RandomNormals(7, 3, first, part.data(), count);
      for (int64_t j = 0; j < count; ++j) {
        ASSERT_EQ(part[j], whole[first + j]) << first << "+" << j;
      }
    }
  }
  std::vector<float> other(n);
  RandomNormals(7, 4, 0, other.data(), n);  // another stream
  EXPECT_NE(other, whole);
  RandomNormals(8, 3, 0, other.data(), n);  // another seed
  EXPECT_NE(other, whole);
}

// The values this generator gives are part of its contract: the same bits on
// every machine and build. A change here changes every --random-inputs run.
TEST(RandomNormalsTest, GivesFixedValues) {
  auto bits = [](uint64_t seed, uint64_t stream, int64_t first, int64_t n) {
    std::vector<float> v(n);
    RandomNormals(seed, stream, first, v.data(), n);
    std::vector<uint32_t> b;
    for (float x : v) b.push_back(std::bit_cast<uint32_t>(x));
    return b;
  };
  // The first is Random123's zero word 0x6627e8d5: u = -0.2019..., and
  // sqrt(2) erfinv(u) = -0.25582 (-0.255816042 here).
  EXPECT_EQ(bits(0, 0, 0, 8), (std::vector<uint32_t>{0xbe82fa52, 0x3f96bb50, 0x3f2153b8,
                                                     0x3e88fdea, 0x3ff51845, 0xbeb4ac08,
                                                     0x3f01cc4f, 0xbfe489a8}));
  EXPECT_EQ(bits(123456789, 7, (int64_t{1} << 33) + 5, 4),
            (std::vector<uint32_t>{0xbf9db851, 0xc03069b5, 0xbf51b208, 0xbf366831}));
}

TEST(RandomNormalsTest, LookStandardNormal) {
  const int64_t n = 1 << 20;
  std::vector<float> v(n);
  RandomNormals(42, 1, 0, v.data(), n);
  double sum = 0, sum2 = 0, sum4 = 0, max = 0;
  int64_t within1 = 0, within2 = 0;
  for (float x : v) {
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sum2 += double{x} * x;
    sum4 += double{x} * x * x * x;
    max = std::max(max, std::fabs(double{x}));
    within1 += std::fabs(x) < 1;
    within2 += std::fabs(x) < 2;
  }
  double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, 0, 5e-3);
  EXPECT_NEAR(var, 1, 5e-3);
  EXPECT_NEAR(sum4 / n, 3, 0.05);  // kurtosis of a normal
  EXPECT_NEAR(static_cast<double>(within1) / n, 0.682689, 2e-3);
  EXPECT_NEAR(static_cast<double>(within2) / n, 0.954500, 1e-3);
  EXPECT_GT(max, 4.0);  // the tails are there
  EXPECT_LT(max, 5.6);
}

TEST(RandomNormalsTest, ExtremeWordsGiveSymmetricFiniteTails) {
  // The top 24 bits all ones or all zeros: u = +-(1 - 2^-24).
  float hi = NormalFromWord(0xFFFFFFFFu), lo = NormalFromWord(0x000000FFu);
  EXPECT_EQ(hi, -lo);
  EXPECT_GT(hi, 5.0f);
  EXPECT_LT(hi, 5.6f);
  // Beside zero: u = +-2^-24, and the value is its odd function.
  float up = NormalFromWord(0x80000000u), down = NormalFromWord(0x7FFFFF00u);
  EXPECT_EQ(up, -down);
  EXPECT_GT(up, 0.0f);
  EXPECT_NEAR(up, 0x1p-24 * std::sqrt(2 * std::acos(-1.0)) / 2 * 1.0, 1e-12);
  // Only the top 24 bits count.
  EXPECT_EQ(NormalFromWord(0x12345600u), NormalFromWord(0x123456FFu));
}

}  // namespace
}  // namespace tpusim::numerics
