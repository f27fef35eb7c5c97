#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>

#include "ops/testing/elementwise_test_util.h"

namespace tpusim::ops {
namespace {

using E = ir::ElementType;
using testing::Read;
using testing::Vec;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

StatusOr<Tensor> Unary(const std::string& name, const Tensor& x) {
  return testing::Run(name, {x}, x.type());
}

TEST(RoundTest, TiesAwayFromZeroAndToEven) {
  Tensor x = Vec<float>(E::kF32, {-2.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.4f, -0.4f});
  auto afz = Unary("stablehlo.round_nearest_afz", x);
  ASSERT_TRUE(afz.ok());
  EXPECT_EQ(Read<float>(*afz), (std::vector<float>{-3, -1, 1, 2, 3, 0, -0.0f}));
  auto even = Unary("stablehlo.round_nearest_even", x);
  ASSERT_TRUE(even.ok());
  auto v = Read<float>(*even);
  EXPECT_EQ(v, (std::vector<float>{-2, -0.0f, 0, 2, 2, 0, -0.0f}));
  EXPECT_TRUE(std::signbit(v[1]));
  EXPECT_TRUE(std::signbit(v[6]));
}

TEST(RoundTest, CeilAndFloorKeepNegativeZero) {
  Tensor x = Vec<double>(E::kF64, {-0.5, 0.5, -1.5});
  auto c = Unary("stablehlo.ceil", x);
  auto f = Unary("stablehlo.floor", x);
  ASSERT_TRUE(c.ok() && f.ok());
  auto cv = Read<double>(*c);
  EXPECT_TRUE(cv[0] == 0 && std::signbit(cv[0]));
  EXPECT_EQ(cv[1], 1.0);
  EXPECT_EQ(cv[2], -1.0);
  EXPECT_EQ(Read<double>(*f), (std::vector<double>{-1, 0, -2}));
}

TEST(SignTest, Floats) {
  auto r = Unary("stablehlo.sign", Vec<float>(E::kF32, {kNaN, -0.0f, 0.0f, -3.0f, 5.0f, -kInf}));
  ASSERT_TRUE(r.ok());
  auto v = Read<float>(*r);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_TRUE(v[1] == 0 && std::signbit(v[1]));
  EXPECT_TRUE(v[2] == 0 && !std::signbit(v[2]));
  EXPECT_EQ(v[3], -1.0f);
  EXPECT_EQ(v[4], 1.0f);
  EXPECT_EQ(v[5], -1.0f);
}

TEST(SignTest, IntegersAndComplex) {
  auto i = Unary("stablehlo.sign", Vec<int8_t>(E::kSI8, {-128, 0, 7}));
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(Read<int8_t>(*i), (std::vector<int8_t>{-1, 0, 1}));
  using C = std::complex<double>;
  auto c = Unary("stablehlo.sign", Vec<C>(E::kC128, {C(3, 4), C(0, 0), C(kNaN, 1)}));
  ASSERT_TRUE(c.ok());
  auto v = Read<C>(*c);
  EXPECT_DOUBLE_EQ(v[0].real(), 0.6);
  EXPECT_DOUBLE_EQ(v[0].imag(), 0.8);
  EXPECT_EQ(v[1], C(0, 0));
  EXPECT_TRUE(std::isnan(v[2].real()) && std::isnan(v[2].imag()));
}

TEST(AbsTest, IntMinAndComplex) {
  auto i = Unary("stablehlo.abs", Vec<int8_t>(E::kSI8, {-128, -5, 5}));
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(Read<int8_t>(*i), (std::vector<int8_t>{-128, 5, 5}));
  using C = std::complex<float>;
  auto c = testing::Run("stablehlo.abs", {Vec<C>(E::kC64, {C(3, 4), C(-5, 12)})},
                        ir::Type::Tensor(E::kF32, {2}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(Read<float>(*c), (std::vector<float>{5, 13}));
  // Complex abs must produce the part type.
  auto t = ir::Type::Tensor(E::kC64, {2});
  EXPECT_FALSE(testing::Verify("stablehlo.abs", {t}, t).ok());
  auto u = ir::Type::Tensor(E::kUI8, {2});
  EXPECT_FALSE(testing::Verify("stablehlo.abs", {u}, u).ok());
}

TEST(NegateTest, Wraps) {
  auto u = Unary("stablehlo.negate", Vec<uint8_t>(E::kUI8, {1, 0}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Read<uint8_t>(*u), (std::vector<uint8_t>{255, 0}));
  const int32_t min = std::numeric_limits<int32_t>::min();
  auto s = Unary("stablehlo.negate", Vec<int32_t>(E::kSI32, {min, 5}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Read<int32_t>(*s), (std::vector<int32_t>{min, -5}));
  auto s4 = Unary("stablehlo.negate", Vec<int8_t>(E::kSI4, {-8, 7}));
  ASSERT_TRUE(s4.ok());
  EXPECT_EQ(Read<int8_t>(*s4), (std::vector<int8_t>{-8, -7}));
}

TEST(IsFiniteTest, FloatsToBool) {
  auto r = testing::Run("stablehlo.is_finite",
                        {Vec<float>(E::kF32, {kInf, -kInf, kNaN, 1.0f, -0.0f})},
                        ir::Type::Tensor(E::kI1, {5}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<uint8_t>(*r), (std::vector<uint8_t>{0, 0, 0, 1, 1}));
  // bf16 +inf, NaN, 1.0.
  auto b = testing::Run("stablehlo.is_finite", {Vec<uint16_t>(E::kBF16, {0x7F80, 0x7FC0, 0x3F80})},
                        ir::Type::Tensor(E::kI1, {3}));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Read<uint8_t>(*b), (std::vector<uint8_t>{0, 0, 1}));
}

TEST(TranscendentalTest, KnownValuesAndPrecision) {
  auto expm1 = Unary("stablehlo.exponential_minus_one", Vec<float>(E::kF32, {1e-10f, 0.0f}));
  ASSERT_TRUE(expm1.ok());
  EXPECT_FLOAT_EQ(Read<float>(*expm1)[0], 1e-10f);  // exp(x) - 1 would give 0
  auto log1p = Unary("stablehlo.log_plus_one", Vec<float>(E::kF32, {1e-10f, -1.0f}));
  ASSERT_TRUE(log1p.ok());
  EXPECT_FLOAT_EQ(Read<float>(*log1p)[0], 1e-10f);
  EXPECT_EQ(Read<float>(*log1p)[1], -kInf);
  auto logistic = Unary("stablehlo.logistic", Vec<float>(E::kF32, {0.0f, -1000.0f, 1000.0f}));
  ASSERT_TRUE(logistic.ok());
  EXPECT_EQ(Read<float>(*logistic), (std::vector<float>{0.5f, 0.0f, 1.0f}));
  auto rsqrt = Unary("stablehlo.rsqrt", Vec<float>(E::kF32, {4.0f, 0.0f}));
  ASSERT_TRUE(rsqrt.ok());
  EXPECT_EQ(Read<float>(*rsqrt), (std::vector<float>{0.5f, kInf}));
  auto cbrt = Unary("stablehlo.cbrt", Vec<double>(E::kF64, {-27.0, 8.0}));
  ASSERT_TRUE(cbrt.ok());
  EXPECT_DOUBLE_EQ(Read<double>(*cbrt)[0], -3.0);  // glibc's cbrt is within an ulp
  EXPECT_DOUBLE_EQ(Read<double>(*cbrt)[1], 2.0);
  // f16 sqrt(2) rounds to 0x3DA8 (numpy: np.float16(np.sqrt(2))).
  auto sqrt = Unary("stablehlo.sqrt", Vec<uint16_t>(E::kF16, {0x4000}));
  ASSERT_TRUE(sqrt.ok());
  EXPECT_EQ(Read<uint16_t>(*sqrt)[0], 0x3DA8);
}

// Expected bits from numpy's np.exp on float16 operands.
TEST(TranscendentalTest, F16ExpMatchesNumpy) {
  auto r = Unary("stablehlo.exponential",
                 Vec<uint16_t>(E::kF16, {0xBDE8, 0xBF72, 0x3DE1, 0x3C48, 0x350F, 0xC195, 0xAD9E,
                                         0x402C}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<uint16_t>(*r), (std::vector<uint16_t>{0x334F, 0x30FA, 0x4459, 0x41D5, 0x3D7D,
                                                       0x2BDB, 0x3B54, 0x4807}));
}

TEST(TranscendentalTest, ComplexSmallArguments) {
  using C = std::complex<double>;
  auto expm1 = Unary("stablehlo.exponential_minus_one", Vec<C>(E::kC128, {C(1e-20, 1e-20)}));
  ASSERT_TRUE(expm1.ok());
  C e = Read<C>(*expm1)[0];
  EXPECT_DOUBLE_EQ(e.real(), 1e-20);
  EXPECT_DOUBLE_EQ(e.imag(), 1e-20);
  auto log1p = Unary("stablehlo.log_plus_one", Vec<C>(E::kC128, {C(1e-20, 0), C(1, 1)}));
  ASSERT_TRUE(log1p.ok());
  auto l = Read<C>(*log1p);
  EXPECT_DOUBLE_EQ(l[0].real(), 1e-20);
  EXPECT_DOUBLE_EQ(l[1].real(), std::log(std::hypot(2.0, 1.0)));
  EXPECT_DOUBLE_EQ(l[1].imag(), std::atan2(1.0, 2.0));
}

TEST(UnaryVerifyTest, TypeRules) {
  auto i = ir::Type::Tensor(E::kSI32, {2});
  auto f = ir::Type::Tensor(E::kF32, {2});
  EXPECT_FALSE(testing::Verify("stablehlo.exponential", {i}, i).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.floor", {ir::Type::Tensor(E::kC64, {2})},
                               ir::Type::Tensor(E::kC64, {2}))
                   .ok());
  EXPECT_FALSE(testing::Verify("stablehlo.is_finite", {f}, f).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.sign", {ir::Type::Tensor(E::kUI8, {2})},
                               ir::Type::Tensor(E::kUI8, {2}))
                   .ok());
  EXPECT_TRUE(testing::Verify("stablehlo.negate", {ir::Type::Tensor(E::kUI8, {2})},
                              ir::Type::Tensor(E::kUI8, {2}))
                  .ok());
}

}  // namespace
}  // namespace tpusim::ops
