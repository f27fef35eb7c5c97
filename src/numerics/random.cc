// The normals must be the same bits on every machine: no fused multiply-add
// (which GCC would otherwise form where the target has one).
// (Neither FP exceptions nor errno are ever looked at here; without them
// GCC can if-convert, and so vectorise, the loops below.)
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off", "no-trapping-math", "no-math-errno")
#endif

#include "tpusim/numerics/random.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "numerics/vector_clones.h"

namespace tpusim::numerics {
namespace {

constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // multipliers
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // key schedule (golden ratio, sqrt 3)

struct Block {
  uint32_t c0, c1, c2, c3;
};

[[gnu::always_inline]] inline Block Philox(Block c, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t{kM0} * c.c0;
    uint64_t p1 = uint64_t{kM1} * c.c2;
    c = {static_cast<uint32_t>(p1 >> 32) ^ c.c1 ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c.c3 ^ k1, static_cast<uint32_t>(p0)};
    k0 += kW0;
    k1 += kW1;
  }
  return c;
}

// Blocks per batch: their words are made in one vectorisable loop.
constexpr int64_t kBatch = 256;

// The 4 * kBatch words of blocks [block, block + kBatch).
TPUSIM_VECTOR_CLONES void WordsOfBatch(uint64_t seed, uint64_t stream, uint64_t block,
                                       uint32_t* __restrict out) {
  const auto k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  const auto s0 = static_cast<uint32_t>(stream), s1 = static_cast<uint32_t>(stream >> 32);
  for (int64_t j = 0; j < kBatch; ++j) {
    uint64_t b = block + static_cast<uint64_t>(j);
    Block r = Philox({static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), s0, s1}, k0, k1);
    out[4 * j] = r.c0;
    out[4 * j + 1] = r.c1;
    out[4 * j + 2] = r.c2;
    out[4 * j + 3] = r.c3;
  }
}

// ln(y) for a normal double y > 0, to about 1e-11 relative: y = 2^e * r with
// r in [sqrt(1/2), sqrt(2)), and ln(r) = 2 atanh(s) for s = (r - 1) / (r + 1)
// by its series (|s| < 0.172, so seven terms are plenty for a float result).
[[gnu::always_inline]] inline double Ln(double y) {
  uint64_t bits = std::bit_cast<uint64_t>(y);
  // Subtracting sqrt(1/2)'s bits puts r's range in one exponent.
  uint64_t shifted = bits - 0x3FE6A09E667F3BCDull;
  int64_t e = static_cast<int64_t>(shifted) >> 52;
  double r = std::bit_cast<double>(bits - (static_cast<uint64_t>(e) << 52));
  double s = (r - 1) / (r + 1);
  double z = s * s;
  double series =
      1 + z * (1.0 / 3 + z * (1.0 / 5 + z * (1.0 / 7 + z * (1.0 / 9 + z * (1.0 / 11 + z / 13)))));
  constexpr double kLn2 = 0x1.62e42fefa39efp-1;
  return static_cast<double>(e) * kLn2 + 2 * s * series;
}

// u = (2k + 1) / 2^24 - 1 for the word's top 24 bits k, exactly.
[[gnu::always_inline]] inline float UniformOfWord(uint32_t word) {
  auto k = static_cast<int32_t>(word >> 8);
  return static_cast<float>(2 * k + 1 - (1 << 24)) * 0x1p-24f;
}

// sqrt(2) erfinv(x) by Giles' central branch, right where w = -ln(1 - x^2)
// (set in *w) is below 5: for all but 0.4% of words.
[[gnu::always_inline]] inline float CentralNormal(uint32_t word, float* w_out) {
  float x = UniformOfWord(word);
  // 1 - x^2 as (1 - x)(1 + x) is exact in double.
  double y = (1.0 - static_cast<double>(x)) * (1.0 + static_cast<double>(x));
  auto w = static_cast<float>(-Ln(y));
  *w_out = w;
  float a = w - 2.5f;
  float p = 2.81022636e-08f;
  p = 3.43273939e-07f + p * a;
  p = -3.5233877e-06f + p * a;
  p = -4.39150654e-06f + p * a;
  p = 0.00021858087f + p * a;
  p = -0.00125372503f + p * a;
  p = -0.00417768164f + p * a;
  p = 0.246640727f + p * a;
  p = 1.50140941f + p * a;
  return 1.41421356f * (p * x);
}

// Giles' tail branch, for w >= 5 (a square root, which keeps a loop from
// vectorising: GCC guards it for errno).
float TailNormal(uint32_t word, float w) {
  float b = std::sqrt(w) - 3.0f;
  float q = -0.000200214257f;
  q = 0.000100950558f + q * b;
  q = 0.00134934322f + q * b;
  q = -0.00367342844f + q * b;
  q = 0.00573950773f + q * b;
  q = -0.0076224613f + q * b;
  q = 0.00943887047f + q * b;
  q = 1.00167406f + q * b;
  q = 2.83297682f + q * b;
  return 1.41421356f * (q * UniformOfWord(word));
}

float NormalOfWord(uint32_t word) {
  float w;
  float central = CentralNormal(word, &w);
  return w < 5.0f ? central : TailNormal(word, w);
}

// NormalOfWord of each word of a batch: the central branch in a vector
// loop, then the few tails.
TPUSIM_VECTOR_CLONES void NormalsOfWords(const uint32_t* __restrict words, float* __restrict out) {
  alignas(64) float w[4 * kBatch];
  for (int64_t j = 0; j < 4 * kBatch; ++j) out[j] = CentralNormal(words[j], &w[j]);
  for (int64_t j = 0; j < 4 * kBatch; ++j) {
    if (w[j] >= 5.0f) out[j] = TailNormal(words[j], w[j]);
  }
}

// Calls fn(words, skip, done, count) for the words [first, first + n) of a
// stream, a batch at a time: `words` is a batch's, of which words[skip] is
// word first + done and `count` from there are wanted.
template <class Fn>
void ForEachBatch(uint64_t seed, uint64_t stream, int64_t first, int64_t n, const Fn& fn) {
  alignas(64) uint32_t words[4 * kBatch];
  constexpr int64_t kWords = 4 * kBatch;
  int64_t done = 0;
  while (done < n) {
    int64_t word = first + done;
    int64_t batch_start = word / kWords * kWords;
    WordsOfBatch(seed, stream, static_cast<uint64_t>(batch_start / 4), words);
    int64_t skip = word - batch_start;
    int64_t count = std::min(kWords - skip, n - done);
    fn(words, skip, done, count);
    done += count;
  }
}

}  // namespace

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key) {
  Block r = Philox({counter[0], counter[1], counter[2], counter[3]}, key[0], key[1]);
  return {r.c0, r.c1, r.c2, r.c3};
}

void RandomWords(uint64_t seed, uint64_t stream, int64_t first, uint32_t* out, int64_t n) {
  ForEachBatch(seed, stream, first, n,
               [out](const uint32_t* words, int64_t skip, int64_t done, int64_t count) {
                 std::copy(words + skip, words + skip + count, out + done);
               });
}

float NormalFromWord(uint32_t word) { return NormalOfWord(word); }

void RandomNormals(uint64_t seed, uint64_t stream, int64_t first, float* out, int64_t n) {
  alignas(64) float normals[4 * kBatch];
  ForEachBatch(seed, stream, first, n,
               [&](const uint32_t* words, int64_t skip, int64_t done, int64_t count) {
                 NormalsOfWords(words, normals);
                 std::copy(normals + skip, normals + skip + count, out + done);
               });
}

}  // namespace tpusim::numerics
