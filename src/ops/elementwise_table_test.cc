// Transcendental functions of bf16 and f16 tensors run as lookups in a table
// of every input's result (Table16) once a tensor is large; the table gives
// exactly the bits of the per-element path small tensors take. Checked on
// every 16-bit input: NaNs, infinities, zeros and subnormals included.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ops/kernels/elementwise_kernel.h"
#include "ops/testing/elementwise_test_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;
using testing::Read;
using testing::RunSame;
using testing::Vec;

// Every bit pattern of a 16-bit type, then `extra` more (an odd length).
std::vector<uint16_t> AllBits(int extra) {
  std::vector<uint16_t> v(65536 + extra);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint16_t>(i * 40503u);
  for (uint32_t b = 0; b < 65536; ++b) v[b] = static_cast<uint16_t>(b);
  return v;
}

// `op` on all of `bits` at once (the table) and in pieces below the table's
// threshold (one element at a time): the same bits.
void ExpectTableMatchesLoop(const std::string& op, ElementType e) {
  const std::vector<uint16_t> bits = AllBits(333);
  ASSERT_GE(static_cast<int64_t>(bits.size()), ew::kTableElements);
  auto whole = RunSame("stablehlo." + op, {Vec(e, bits)});
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const std::vector<uint16_t> table = Read<uint16_t>(*whole);
  constexpr size_t kPiece = 4000;
  static_assert(kPiece < ew::kTableElements);
  for (size_t start = 0; start < bits.size(); start += kPiece) {
    const size_t end = std::min(bits.size(), start + kPiece);
    std::vector<uint16_t> piece(bits.begin() + start, bits.begin() + end);
    auto loop = RunSame("stablehlo." + op, {Vec(e, piece)});
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    const std::vector<uint16_t> got = Read<uint16_t>(*loop);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(table[start + i], got[i])
          << op << " " << ir::ElementTypeName(e) << " of bits 0x" << std::hex << piece[i];
    }
  }
}

TEST(ElementwiseTableTest, Bf16AndF16TablesGiveTheLoopsBits) {
  for (const char* op : {"exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
                         "sine", "cosine", "tan", "tanh", "sqrt", "rsqrt", "cbrt"}) {
    ExpectTableMatchesLoop(op, ElementType::kBF16);
    ExpectTableMatchesLoop(op, ElementType::kF16);
  }
}

// The formula itself, independently: bf16 -> f32 -> f64, exp, then rounded
// to f32 and to bf16 (nearest even; NaNs quiet).
TEST(ElementwiseTableTest, Bf16ExpIsExpInDoubleRoundedTwice) {
  const std::vector<uint16_t> bits = AllBits(0);
  auto r = RunSame("stablehlo.exponential", {Vec(ElementType::kBF16, bits)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<uint16_t> got = Read<uint16_t>(*r);
  for (uint32_t b = 0; b < 65536; ++b) {
    const float x = std::bit_cast<float>(b << 16);
    const float y = static_cast<float>(std::exp(static_cast<double>(x)));
    ASSERT_EQ(got[b], numerics::FloatToBf16(y)) << std::hex << b;
  }
}

// f32 sqrt runs in float: the bits of the square root in double rounded to
// float, on every 257th f32 bit pattern (all exponents, both signs, NaNs,
// infinities and subnormals) and the special values.
TEST(ElementwiseTableTest, F32SqrtIsSqrtInDoubleRounded) {
  constexpr uint64_t kStep = 257;
  std::vector<uint32_t> bits;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += kStep)
    bits.push_back(static_cast<uint32_t>(b));
  for (uint32_t special : {0x00000000u, 0x80000000u, 0x00000001u, 0x007fffffu, 0x7f800000u,
                           0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffc00001u, 0x3f800000u}) {
    bits.push_back(special);
  }
  auto r = RunSame("stablehlo.sqrt", {Vec(ElementType::kF32, bits)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<uint32_t> got = Read<uint32_t>(*r);
  for (size_t i = 0; i < bits.size(); ++i) {
    const double x = static_cast<double>(std::bit_cast<float>(bits[i]));
    const uint32_t want = std::bit_cast<uint32_t>(static_cast<float>(std::sqrt(x)));
    ASSERT_EQ(got[i], want) << std::hex << bits[i];
  }
}

// Below the threshold, and for empty tensors, the loop runs without a table.
TEST(ElementwiseTableTest, SmallTensorsAndEmptyOnesTakeTheLoop) {
  auto empty = RunSame("stablehlo.exponential", {Vec<uint16_t>(ElementType::kBF16, {})});
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->num_elements(), 0);
  auto one = RunSame("stablehlo.exponential", {Vec<uint16_t>(ElementType::kBF16, {0x3f80})});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Read<uint16_t>(*one)[0], 0x402e);  // e = 2.71875 in bf16
}

}  // namespace
}  // namespace tpusim::ops
