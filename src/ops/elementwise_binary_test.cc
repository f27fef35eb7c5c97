#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>

#include "ops/testing/elementwise_test_util.h"

namespace tpusim::ops {
namespace {

using E = ir::ElementType;
using testing::Read;
using testing::RunSame;
using testing::Vec;
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(DivideTest, IntegerEdgeCases) {
  auto r = RunSame("stablehlo.divide",
                   {Vec<int32_t>(E::kSI32, {7, -7, 7, kMin32, 5, 0, 17}),
                    Vec<int32_t>(E::kSI32, {2, 2, 0, -1, -1, 0, -3})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<int32_t>(*r), (std::vector<int32_t>{3, -3, -1, kMin32, -5, -1, -5}));
  auto u = RunSame("stablehlo.divide",
                   {Vec<uint8_t>(E::kUI8, {7, 200}), Vec<uint8_t>(E::kUI8, {0, 3})});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Read<uint8_t>(*u), (std::vector<uint8_t>{255, 66}));
  // si4: -8 / -1 wraps to -8; x / 0 is -1.
  auto n = RunSame("stablehlo.divide",
                   {Vec<int8_t>(E::kSI4, {-8, 7}), Vec<int8_t>(E::kSI4, {-1, 0})});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(Read<int8_t>(*n), (std::vector<int8_t>{-8, -1}));
}

TEST(RemainderTest, IntegerAndFloat) {
  auto r = RunSame("stablehlo.remainder",
                   {Vec<int32_t>(E::kSI32, {7, -7, 7, kMin32, 5, 17, -17}),
                    Vec<int32_t>(E::kSI32, {2, 2, 0, -1, -3, -3, 3})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<int32_t>(*r), (std::vector<int32_t>{1, -1, 7, 0, 2, 2, -2}));
  auto u = RunSame("stablehlo.remainder",
                   {Vec<uint64_t>(E::kUI64, {17, 9}), Vec<uint64_t>(E::kUI64, {0, 4})});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Read<uint64_t>(*u), (std::vector<uint64_t>{17, 1}));
  auto f = RunSame("stablehlo.remainder", {Vec<float>(E::kF32, {-7.5f, 7.5f, 1.0f}),
                                           Vec<float>(E::kF32, {2.0f, -2.0f, 0.0f})});
  ASSERT_TRUE(f.ok());
  auto fv = Read<float>(*f);
  EXPECT_EQ(fv[0], -1.5f);  // the dividend's sign
  EXPECT_EQ(fv[1], 1.5f);
  EXPECT_TRUE(std::isnan(fv[2]));
}

TEST(RemainderTest, ComplexIsUnimplemented) {
  auto t = ir::Type::Tensor(E::kC64, {2});
  EXPECT_EQ(testing::Verify("stablehlo.remainder", {t, t}, t).code(),
            StatusCode::kUnimplemented);
}

TEST(AddTest, IntegersWrapToTheirWidth) {
  auto s8 = RunSame("stablehlo.add", {Vec<int8_t>(E::kSI8, {127, -128}),
                                      Vec<int8_t>(E::kSI8, {1, -1})});
  ASSERT_TRUE(s8.ok());
  EXPECT_EQ(Read<int8_t>(*s8), (std::vector<int8_t>{-128, 127}));
  auto s4 = RunSame("stablehlo.add", {Vec<int8_t>(E::kSI4, {7, -8, 3}),
                                      Vec<int8_t>(E::kSI4, {1, -1, 2})});
  ASSERT_TRUE(s4.ok());
  EXPECT_EQ(Read<int8_t>(*s4), (std::vector<int8_t>{-8, 7, 5}));
  auto u4 = RunSame("stablehlo.add", {Vec<uint8_t>(E::kUI4, {15, 9}),
                                      Vec<uint8_t>(E::kUI4, {1, 9})});
  ASSERT_TRUE(u4.ok());
  EXPECT_EQ(Read<uint8_t>(*u4), (std::vector<uint8_t>{0, 2}));
  auto s2 = RunSame("stablehlo.add", {Vec<int8_t>(E::kSI2, {1, -2}),
                                      Vec<int8_t>(E::kSI2, {1, -1})});
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ(Read<int8_t>(*s2), (std::vector<int8_t>{-2, 1}));
  auto b = RunSame("stablehlo.add", {Vec<uint8_t>(E::kI1, {0, 0, 1, 1}),
                                     Vec<uint8_t>(E::kI1, {0, 1, 0, 1})});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Read<uint8_t>(*b), (std::vector<uint8_t>{0, 1, 1, 1}));
}

TEST(MultiplyTest, SmallUnsignedDoesNotOverflowInt) {
  auto r = RunSame("stablehlo.multiply", {Vec<uint16_t>(E::kUI16, {65535, 300}),
                                          Vec<uint16_t>(E::kUI16, {65535, 300})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<uint16_t>(*r), (std::vector<uint16_t>{1, 90000 % 65536}));
}

// bf16 sums are rounded to nearest even from the exact f32 sum.
TEST(AddTest, Bf16RoundsToNearestEven) {
  // 1 + 2^-8 is a tie that goes to 1; (1 + 2^-7) + 2^-8 goes up to 1 + 2^-6.
  auto r = RunSame("stablehlo.add", {Vec<uint16_t>(E::kBF16, {0x3F80, 0x3F81}),
                                     Vec<uint16_t>(E::kBF16, {0x3B80, 0x3B80})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<uint16_t>(*r), (std::vector<uint16_t>{0x3F80, 0x3F82}));
}

// f16 arithmetic rounds the exact result once; expected bits from numpy
// (np.float16 arithmetic) on random operands.
TEST(ArithmeticTest, F16MatchesNumpy) {
  Tensor a = Vec<uint16_t>(
      E::kF16, {0x2FDF, 0x4F78, 0xCEDA, 0xD591, 0xD1AF, 0xD633, 0x4604, 0x5830});
  Tensor b = Vec<uint16_t>(
      E::kF16, {0xBDE8, 0xBF72, 0x3DE1, 0x3C48, 0x350F, 0xC195, 0xAD9E, 0x402C});
  auto add = RunSame("stablehlo.add", {a, b});
  auto mul = RunSame("stablehlo.multiply", {a, b});
  auto div = RunSame("stablehlo.divide", {a, b});
  ASSERT_TRUE(add.ok() && mul.ok() && div.ok());
  EXPECT_EQ(Read<uint16_t>(*add), (std::vector<uint16_t>{0xBD6A, 0x4F01, 0xCE7C, 0xD580, 0xD1A5,
                                                         0xD660, 0x45EE, 0x5841}));
  EXPECT_EQ(Read<uint16_t>(*mul), (std::vector<uint16_t>{0xB1D0, 0xD2F3, 0xD109, 0xD5F5, 0xCB30,
                                                         0x5C53, 0xB839, 0x5C5E}));
  EXPECT_EQ(Read<uint16_t>(*div), (std::vector<uint16_t>{0xAD55, 0xCC03, 0xCCA9, 0xD533, 0xD87F,
                                                         0x5071, 0xD449, 0x5404}));
}

TEST(MaximumTest, NanAndSignedZero) {
  auto mx = RunSame("stablehlo.maximum", {Vec<float>(E::kF32, {kNaN, 1.0f, -0.0f, 0.0f, 2.0f}),
                                          Vec<float>(E::kF32, {1.0f, kNaN, 0.0f, -0.0f, 3.0f})});
  ASSERT_TRUE(mx.ok());
  auto m = Read<float>(*mx);
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_TRUE(std::isnan(m[1]));
  EXPECT_FALSE(std::signbit(m[2]));
  EXPECT_FALSE(std::signbit(m[3]));
  EXPECT_EQ(m[4], 3.0f);
  auto mn = RunSame("stablehlo.minimum", {Vec<float>(E::kF32, {kNaN, -0.0f, 0.0f}),
                                          Vec<float>(E::kF32, {1.0f, 0.0f, -0.0f})});
  ASSERT_TRUE(mn.ok());
  auto n = Read<float>(*mn);
  EXPECT_TRUE(std::isnan(n[0]));
  EXPECT_TRUE(std::signbit(n[1]));
  EXPECT_TRUE(std::signbit(n[2]));
}

TEST(MaximumTest, ComplexIsLexicographic) {
  using C = std::complex<float>;
  auto r = RunSame("stablehlo.maximum", {Vec<C>(E::kC64, {C(1, 5), C(2, 1), C(1, 1)}),
                                         Vec<C>(E::kC64, {C(2, 0), C(2, 3), C(0, 9)})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<C>(*r), (std::vector<C>{C(2, 0), C(2, 3), C(1, 1)}));
}

TEST(MultiplyTest, ComplexPartsAreFusedMultiplyAdds) {
  // (a + bi)(c + di) with a = c = 1 + 2^-12, b = 1, d = 1 + 2^-11: ac - bd
  // is exactly 2^-24, which a rounded ac (a tie, to 1 + 2^-11) would lose.
  // ad + bc = 2 + 2^-10 + 2^-23 rounds (a tie) to 2 + 2^-10.
  using C = std::complex<float>;
  const float a = 1 + std::ldexp(1.0f, -12), d = 1 + std::ldexp(1.0f, -11);
  auto r = RunSame("stablehlo.multiply", {Vec<C>(E::kC64, {C(a, 1)}), Vec<C>(E::kC64, {C(a, d)})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<C>(*r)[0], C(std::ldexp(1.0f, -24), 2 + std::ldexp(1.0f, -10)));
  // complex<f64> the same way: 2^-104 survives.
  using Z = std::complex<double>;
  const double a2 = 1 + std::ldexp(1.0, -53 + 1), d2 = 1 + std::ldexp(1.0, -52 + 1);
  auto z = RunSame("stablehlo.multiply",
                   {Vec<Z>(E::kC128, {Z(a2, 1)}), Vec<Z>(E::kC128, {Z(a2, d2)})});
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  EXPECT_EQ(Read<Z>(*z)[0].real(), std::ldexp(1.0, -104));
}

TEST(MaximumTest, UnsignedAndBool) {
  auto u = RunSame("stablehlo.maximum", {Vec<uint32_t>(E::kUI32, {0xFFFFFFFFu, 1}),
                                         Vec<uint32_t>(E::kUI32, {1, 2})});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Read<uint32_t>(*u), (std::vector<uint32_t>{0xFFFFFFFFu, 2}));
  auto b = RunSame("stablehlo.minimum", {Vec<uint8_t>(E::kI1, {0, 1, 1}),
                                         Vec<uint8_t>(E::kI1, {1, 0, 1})});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Read<uint8_t>(*b), (std::vector<uint8_t>{0, 0, 1}));
}

TEST(PowerTest, Integers) {
  auto r = RunSame("stablehlo.power", {Vec<int64_t>(E::kSI64, {-1, -1, -3, 1, -3, 0, -1, 2}),
                                       Vec<int64_t>(E::kSI64, {1, 0, -3, -3, 3, 2, -3, 62})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<int64_t>(*r),
            (std::vector<int64_t>{-1, 1, 0, 1, -27, 0, -1, int64_t{1} << 62}));
  auto u = RunSame("stablehlo.power",
                   {Vec<uint8_t>(E::kUI8, {3, 2, 0}), Vec<uint8_t>(E::kUI8, {5, 8, 0})});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Read<uint8_t>(*u), (std::vector<uint8_t>{243, 0, 1}));
}

TEST(PowerTest, Floats) {
  auto r = RunSame("stablehlo.power", {Vec<double>(E::kF64, {-2.0, 3.0, -36.0}),
                                       Vec<double>(E::kF64, {2.0, -1.0, 1.1})});
  ASSERT_TRUE(r.ok());
  auto v = Read<double>(*r);
  EXPECT_EQ(v[0], 4.0);
  EXPECT_DOUBLE_EQ(v[1], 1.0 / 3.0);
  EXPECT_TRUE(std::isnan(v[2]));
}

TEST(Atan2Test, Quadrants) {
  auto r = RunSame("stablehlo.atan2", {Vec<float>(E::kF32, {0.0f, 1.0f, -1.0f, 0.0f}),
                                       Vec<float>(E::kF32, {0.0f, 0.0f, 0.0f, -1.0f})});
  ASSERT_TRUE(r.ok());
  auto v = Read<float>(*r);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_FLOAT_EQ(v[1], static_cast<float>(M_PI / 2));
  EXPECT_FLOAT_EQ(v[2], static_cast<float>(-M_PI / 2));
  EXPECT_FLOAT_EQ(v[3], static_cast<float>(M_PI));
}

TEST(BinaryVerifyTest, TypeRules) {
  auto f = ir::Type::Tensor(E::kF32, {2});
  auto i = ir::Type::Tensor(E::kSI32, {2});
  auto b = ir::Type::Tensor(E::kI1, {2});
  EXPECT_TRUE(testing::Verify("stablehlo.add", {f, f}, f).ok());
  EXPECT_EQ(testing::Verify("stablehlo.add", {f, i}, f).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(testing::Verify("stablehlo.add", {f, f}, ir::Type::Tensor(E::kF32, {3})).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(testing::Verify("stablehlo.subtract", {b, b}, b).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(testing::Verify("stablehlo.atan2", {i, i}, i).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(testing::Verify("stablehlo.add", {f}, f).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
