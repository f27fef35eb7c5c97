#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>

#include "ops/kernels/elementwise_kernel.h"
#include "ops/testing/elementwise_test_util.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/numerics/tpu.h"

namespace tpusim::ops {
namespace {

using E = ir::ElementType;
using testing::Read;
using testing::Vec;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

StatusOr<Tensor> Convert(const Tensor& x, E to, EvalOptions options = {}) {
  return testing::Run("stablehlo.convert", {x}, x.type().WithElement(to), {}, options);
}

TEST(ConvertTest, FloatToIntSaturatesAndMapsNanToZero) {
  Tensor x = Vec<float>(E::kF32, {kNaN, kInf, -kInf, 3e9f, -3e9f, -1.9f, 1.9f});
  auto r = Convert(x, E::kSI32);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const int32_t max = std::numeric_limits<int32_t>::max();
  const int32_t min = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(Read<int32_t>(*r), (std::vector<int32_t>{0, max, min, max, min, -1, 1}));
  auto u = Convert(Vec<float>(E::kF32, {-1.5f, 300.0f, 255.9f}), E::kUI8);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Read<uint8_t>(*u), (std::vector<uint8_t>{0, 255, 255}));
  auto s4 = Convert(Vec<double>(E::kF64, {9.0, -9.0, -3.5}), E::kSI4);
  ASSERT_TRUE(s4.ok());
  EXPECT_EQ(Read<int8_t>(*s4), (std::vector<int8_t>{7, -8, -3}));
  auto s64 = Convert(Vec<double>(E::kF64, {9.3e18, -9.3e18}), E::kSI64);
  ASSERT_TRUE(s64.ok());
  EXPECT_EQ(Read<int64_t>(*s64), (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                                       std::numeric_limits<int64_t>::min()}));
}

TEST(ConvertTest, IntToIntWraps) {
  auto r = Convert(Vec<int32_t>(E::kSI32, {300, -1, 9}), E::kSI8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<int8_t>(*r), (std::vector<int8_t>{44, -1, 9}));
  auto u = Convert(Vec<int8_t>(E::kSI8, {-1}), E::kUI16);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Read<uint16_t>(*u), (std::vector<uint16_t>{65535}));
  auto s4 = Convert(Vec<int32_t>(E::kSI32, {9, 7, -9}), E::kSI4);
  ASSERT_TRUE(s4.ok());
  EXPECT_EQ(Read<int8_t>(*s4), (std::vector<int8_t>{-7, 7, 7}));
  auto wide = Convert(Vec<uint8_t>(E::kUI4, {15}), E::kSI64);
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(Read<int64_t>(*wide), (std::vector<int64_t>{15}));
}

TEST(ConvertTest, Int64ToBf16RoundsOnce) {
  // 2^62 + 2^54 + 1 lies just above the midpoint between two bf16 values;
  // rounding through double first would make it a tie and round down.
  const int64_t v = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;
  auto r = Convert(Vec<int64_t>(E::kSI64, {v, -v, 3}), E::kBF16);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<uint16_t>(*r), (std::vector<uint16_t>{0x5E81, 0xDE81, 0x4040}));
}

TEST(ConvertTest, F64ToBf16RoundsOnce) {
  // 1 + 2^-8 + 2^-30 is above the bf16 midpoint; through f32 it becomes
  // the midpoint 1 + 2^-8, a tie that would round to 1.
  const double v = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  auto r = Convert(Vec<double>(E::kF64, {v}), E::kBF16);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<uint16_t>(*r), (std::vector<uint16_t>{0x3F81}));
}

TEST(ConvertTest, F32ToBf16ReferenceAndTpu) {
  const float tie = 1.0f + std::ldexp(1.0f, -8);
  const float up = 1.0f + 3 * std::ldexp(1.0f, -8);
  const float subnormal = 1e-39f;
  Tensor x = Vec<float>(E::kF32, {tie, up, subnormal});
  auto ref = Convert(x, E::kBF16);
  ASSERT_TRUE(ref.ok());
  auto rv = Read<uint16_t>(*ref);
  EXPECT_EQ(rv[0], 0x3F80);
  EXPECT_EQ(rv[1], 0x3F82);
  EXPECT_NE(rv[2], 0);  // IEEE keeps subnormals
  auto tpu = Convert(x, E::kBF16, EvalOptions{.numerics = Numerics::kTpu});
  ASSERT_TRUE(tpu.ok());
  auto tv = Read<uint16_t>(*tpu);
  EXPECT_EQ(tv[0], 0x3F80);
  EXPECT_EQ(tv[1], 0x3F82);
  EXPECT_EQ(tv[2], 0);  // the TPU flushes them
}

// The inline bf16 rounding of the kernels must match numerics::FloatToBf16.
TEST(ConvertTest, InlineBf16MatchesNumerics) {
  std::mt19937 rng(42);
  std::vector<uint32_t> bits = {0, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                0x7F800001u, 0xFFFFFFFFu, 0x7F7FFFFFu, 0x00000001u, 0x3F808000u,
                                0x3F818000u};
  for (int i = 0; i < 100000; ++i) bits.push_back(rng());
  for (uint32_t b : bits) {
    float f = std::bit_cast<float>(b);
    ASSERT_EQ(ew::FloatToBf16(f), numerics::FloatToBf16(f)) << std::hex << b;
    ASSERT_EQ(std::bit_cast<uint32_t>(ew::Bf16ToFloat(static_cast<uint16_t>(b >> 16))),
              std::bit_cast<uint32_t>(numerics::Bf16ToFloat(static_cast<uint16_t>(b >> 16))));
  }
}

// stablehlo.convert between float types goes through numerics' array
// loops; each element must be what the codecs give one at a time.
std::vector<uint8_t> ConvertPerElement(const Tensor& x, E to) {
  const int in_w = ir::StorageBytes(x.element()), out_w = ir::StorageBytes(to);
  std::vector<uint8_t> out(x.num_elements() * out_w);
  ew::VisitCodec(x.element(), [&](auto ci) {
    ew::VisitCodec(to, [&](auto co) {
      using CI = decltype(ci);
      using CO = decltype(co);
      using In = typename CI::Compute;
      using Out = typename CO::Compute;
      if constexpr (std::is_floating_point_v<In> && std::is_floating_point_v<Out>) {
        for (int64_t i = 0; i < x.num_elements(); ++i) {
          typename CI::Storage s;
          std::memcpy(&s, x.raw() + i * in_w, sizeof s);
          In v = ci.Load(s);
          typename CO::Storage r;
          if constexpr (std::is_same_v<In, double> && !std::is_same_v<Out, double>) {
            r = ew::StoreFromDouble(co, v);
          } else {
            r = co.Store(static_cast<Out>(v));
          }
          std::memcpy(out.data() + i * out_w, &r, sizeof r);
        }
      }
    });
  });
  return out;
}

TEST(ConvertTest, FloatToFloatArraysEqualThePerElementCodecs) {
  std::vector<E> floats;
  for (int i = 0; i < ir::kNumElementTypes; ++i) {
    if (ir::IsFloat(static_cast<E>(i))) floats.push_back(static_cast<E>(i));
  }
  std::mt19937_64 rng(9);
  for (E from : floats) {
    // Every code of the narrow types (both 16-bit ones whole), random bits
    // of the wide ones; an odd count.
    const int w = ir::StorageBytes(from);
    const int64_t n = w == 1 ? 256 + 3 : w == 2 ? 65536 + 3 : 100003;
    Tensor x = Tensor::Allocate(ir::Type::Tensor(from, {n})).value();
    for (int64_t i = 0; i < n; ++i) {
      uint64_t bits = w <= 2 ? static_cast<uint64_t>(i) : rng();
      if (w == 1) bits &= (1u << ir::BitWidth(from)) - 1;
      std::memcpy(x.mutable_raw() + i * w, &bits, w);
    }
    for (E to : floats) {
      SCOPED_TRACE(std::string(ir::ElementTypeName(from)) + " -> " +
                   std::string(ir::ElementTypeName(to)));
      auto r = Convert(x, to);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      std::vector<uint8_t> got(r->raw(), r->raw() + r->size_bytes());
      ASSERT_EQ(got, ConvertPerElement(x, to));
    }
  }
}

TEST(ConvertTest, TpuF32ToBf16ArrayFlushesSubnormals) {
  std::vector<float> v = {1.0f, 1e-40f, -1e-40f, kNaN, -kInf, 3.0e38f, 1.0f + 0x1p-8f};
  std::mt19937 rng(2);
  for (int i = 0; i < 5000; ++i) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  auto r = Convert(Vec<float>(E::kF32, v), E::kBF16, EvalOptions{.numerics = Numerics::kTpu});
  ASSERT_TRUE(r.ok());
  std::vector<uint16_t> got = Read<uint16_t>(*r);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(got[i], numerics::TpuFloatToBf16(v[i])) << i;
}

TEST(ConvertTest, BoolComplexAndF8) {
  auto b = Convert(Vec<float>(E::kF32, {kNaN, -0.0f, 2.0f}), E::kI1);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Read<uint8_t>(*b), (std::vector<uint8_t>{1, 0, 1}));
  auto f = Convert(Vec<uint8_t>(E::kI1, {1, 0}), E::kF64);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(Read<double>(*f), (std::vector<double>{1.0, 0.0}));
  using C64 = std::complex<float>;
  using C128 = std::complex<double>;
  auto re = Convert(Vec<C64>(E::kC64, {C64(1.5f, 2.0f)}), E::kF32);
  ASSERT_TRUE(re.ok());
  EXPECT_EQ(Read<float>(*re), (std::vector<float>{1.5f}));
  auto to_c = Convert(Vec<int64_t>(E::kSI64, {-1}), E::kC128);
  ASSERT_TRUE(to_c.ok());
  EXPECT_EQ(Read<C128>(*to_c), (std::vector<C128>{C128(-1, 0)}));
  auto narrow = Convert(Vec<C128>(E::kC128, {C128(0.5, -0.25)}), E::kC64);
  ASSERT_TRUE(narrow.ok());
  EXPECT_EQ(Read<C64>(*narrow), (std::vector<C64>{C64(0.5f, -0.25f)}));
  auto c_to_int = Convert(Vec<C64>(E::kC64, {C64(-2.7f, 9.0f)}), E::kSI32);
  ASSERT_TRUE(c_to_int.ok());
  EXPECT_EQ(Read<int32_t>(*c_to_int), (std::vector<int32_t>{-2}));
  auto f8 = Convert(Vec<float>(E::kF32, {1.0f, -2.5f, 0.125f}), E::kF8E4M3FN);
  ASSERT_TRUE(f8.ok());
  EXPECT_EQ(Read<uint8_t>(*f8), (std::vector<uint8_t>{0x38, 0xC2, 0x20}));
  auto back = Convert(*f8, E::kBF16);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(Read<uint16_t>(*back), (std::vector<uint16_t>{0x3F80, 0xC020, 0x3E00}));
}

StatusOr<Tensor> Bitcast(const Tensor& x, const ir::Type& to) {
  return testing::Run("stablehlo.bitcast_convert", {x}, to);
}

TEST(BitcastConvertTest, SameAndChangingWidths) {
  auto i = Bitcast(Vec<float>(E::kF32, {1.0f}), ir::Type::Tensor(E::kSI32, {1}));
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(Read<int32_t>(*i), (std::vector<int32_t>{0x3F800000}));
  // The spec's example: f64 0x0123456789ABCDEF -> 4 x f16, little-endian.
  auto h = Bitcast(testing::Make<uint64_t>(E::kF64, {}, {0x0123456789ABCDEFull}),
                   ir::Type::Tensor(E::kF16, {4}));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(Read<uint16_t>(*h), (std::vector<uint16_t>{0xCDEF, 0x89AB, 0x4567, 0x0123}));
  auto w = Bitcast(testing::Make<uint16_t>(E::kSI16, {2, 2}, {1, 2, 3, 4}),
                   ir::Type::Tensor(E::kUI32, {2}));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(Read<uint32_t>(*w), (std::vector<uint32_t>{0x00020001u, 0x00040003u}));
  using C = std::complex<float>;
  auto c = Bitcast(testing::Make<std::complex<double>>(E::kC128, {}, {{1.0, 2.0}}),
                   ir::Type::Tensor(E::kC64, {2}));
  ASSERT_TRUE(c.ok());
  auto cv = Read<C>(*c);
  EXPECT_EQ(std::bit_cast<uint64_t>(cv[0]), std::bit_cast<uint64_t>(1.0));
}

TEST(BitcastConvertTest, SubByteTypes) {
  // Bits go least significant first: 0xEF = 1110 1111.
  auto b = Bitcast(testing::Make<uint8_t>(E::kUI8, {}, {0xEF}), ir::Type::Tensor(E::kI1, {8}));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Read<uint8_t>(*b), (std::vector<uint8_t>{1, 1, 1, 1, 0, 1, 1, 1}));
  auto back = Bitcast(*b, ir::Type::Tensor(E::kUI8, {}));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(Read<uint8_t>(*back), (std::vector<uint8_t>{0xEF}));
  auto nibbles = Bitcast(testing::Make<uint8_t>(E::kSI8, {1}, {0xEF}),
                         ir::Type::Tensor(E::kSI4, {1, 2}));
  ASSERT_TRUE(nibbles.ok());
  EXPECT_EQ(Read<int8_t>(*nibbles), (std::vector<int8_t>{-1, -2}));
  auto same = Bitcast(Vec<int8_t>(E::kSI4, {-1, 7}), ir::Type::Tensor(E::kUI4, {2}));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(Read<uint8_t>(*same), (std::vector<uint8_t>{15, 7}));
}

TEST(BitcastConvertTest, VerifyRules) {
  auto f64 = ir::Type::Tensor(E::kF64, {});
  EXPECT_FALSE(testing::Verify("stablehlo.bitcast_convert", {f64}, ir::Type::Tensor(E::kC64, {}))
                   .ok());
  EXPECT_FALSE(
      testing::Verify("stablehlo.bitcast_convert", {f64}, ir::Type::Tensor(E::kF16, {2})).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.bitcast_convert", {ir::Type::Tensor(E::kF16, {3})},
                               ir::Type::Tensor(E::kF64, {}))
                   .ok());
  EXPECT_TRUE(
      testing::Verify("stablehlo.bitcast_convert", {f64}, ir::Type::Tensor(E::kI1, {64})).ok());
}

std::vector<ir::NamedAttribute> Format(int e, int m) {
  return {{"exponent_bits", ir::Attribute::Int(e, E::kSI32)},
          {"mantissa_bits", ir::Attribute::Int(m, E::kSI32)}};
}

TEST(ReducePrecisionTest, SpecExample) {
  const double nan = std::bit_cast<double>(0x7FFFFFFFFFFFFFFFull);
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = Vec<double>(E::kF64, {inf, nan, std::bit_cast<double>(uint64_t{1}), 0.0, 65505.0,
                                   65520.0});
  auto r = testing::Run("stablehlo.reduce_precision", {x}, x.type(), Format(5, 10));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto v = Read<double>(*r);
  EXPECT_EQ(v[0], inf);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 0.0);
  EXPECT_EQ(v[3], 0.0);
  EXPECT_EQ(v[4], 65504.0);
  EXPECT_EQ(v[5], inf);
  // With no mantissa bits NaN has no encoding and becomes infinity.
  auto z = testing::Run("stablehlo.reduce_precision", {Vec<double>(E::kF64, {nan})},
                        ir::Type::Tensor(E::kF64, {1}), Format(5, 0));
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(Read<double>(*z)[0], inf);
}

TEST(ReducePrecisionTest, ToBf16FormatRoundsToNearestEven) {
  const float tie = 1.0f + std::ldexp(1.0f, -8);
  const float up = 1.0f + 3 * std::ldexp(1.0f, -8);
  Tensor x = Vec<float>(E::kF32, {tie, up, 3.0e38f});
  auto r = testing::Run("stablehlo.reduce_precision", {x}, x.type(), Format(8, 7));
  ASSERT_TRUE(r.ok());
  auto v = Read<float>(*r);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(v[2], numerics::Bf16ToFloat(numerics::FloatToBf16(3.0e38f)));
  EXPECT_FALSE(testing::Verify("stablehlo.reduce_precision", {x.type()}, x.type(), Format(0, 7))
                   .ok());
}

TEST(ComplexPartsTest, ComplexRealImag) {
  auto c = testing::Run("stablehlo.complex",
                        {Vec<float>(E::kF32, {1.0f, 3.0f}), Vec<float>(E::kF32, {2.0f, 4.0f})},
                        ir::Type::Tensor(E::kC64, {2}));
  ASSERT_TRUE(c.ok());
  using C = std::complex<float>;
  EXPECT_EQ(Read<C>(*c), (std::vector<C>{C(1, 2), C(3, 4)}));
  auto re = testing::Run("stablehlo.real", {*c}, ir::Type::Tensor(E::kF32, {2}));
  auto im = testing::Run("stablehlo.imag", {*c}, ir::Type::Tensor(E::kF32, {2}));
  ASSERT_TRUE(re.ok() && im.ok());
  EXPECT_EQ(Read<float>(*re), (std::vector<float>{1, 3}));
  EXPECT_EQ(Read<float>(*im), (std::vector<float>{2, 4}));
  auto im_real = testing::Run("stablehlo.imag", {Vec<double>(E::kF64, {5.0})},
                              ir::Type::Tensor(E::kF64, {1}));
  ASSERT_TRUE(im_real.ok());
  EXPECT_EQ(Read<double>(*im_real), (std::vector<double>{0.0}));
  EXPECT_FALSE(testing::Verify("stablehlo.complex",
                               {ir::Type::Tensor(E::kF16, {2}), ir::Type::Tensor(E::kF16, {2})},
                               ir::Type::Tensor(E::kC64, {2}))
                   .ok());
}

}  // namespace
}  // namespace tpusim::ops
