#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>

#include "ops/kernels/special_functions.h"
#include "ops/testing/mlir_test_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using testing::RunAndRead;
using testing::RunMlir;
using testing::VerifyMlir;
using E = ir::ElementType;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kInfF = std::numeric_limits<float>::infinity();

// @main() applying `op` to the constant `values` of `type`, returning `result`.
std::string UnaryProgram(const std::string& op, const std::string& type, const std::string& values,
                         const std::string& result = "") {
  const std::string out = result.empty() ? type : result;
  return "func.func @main() -> " + out + " {\n  %x = stablehlo.constant dense<" + values +
         "> : " + type + "\n  %r = " + op + " %x : " + type + " -> " + out +
         "\n  return %r : " + out + "\n}\n";
}

// The same with two operands (pretty form `op %x, %y : t, t -> t`).
std::string BinaryProgram(const std::string& op, const std::string& type, const std::string& x,
                          const std::string& y) {
  return "func.func @main() -> " + type + " {\n  %x = stablehlo.constant dense<" + x +
         "> : " + type + "\n  %y = stablehlo.constant dense<" + y + "> : " + type +
         "\n  %r = " + op + " %x, %y : " + type + ", " + type + " -> " + type +
         "\n  return %r : " + type + "\n}\n";
}

TEST(ChloMathTest, F32IsComputedInDoubleAndRoundedOnce) {
  auto v = RunAndRead<float>(
      UnaryProgram("chlo.lgamma", "tensor<5xf32>", "[1.0, 3.0, 0.5, 1.0001, 20.5]"));
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], static_cast<float>(std::log(2.0)));
  EXPECT_EQ(v[2], static_cast<float>(0.5723649429247001));
  EXPECT_EQ(v[3], static_cast<float>(special::Lgamma(static_cast<float>(1.0001))));
  EXPECT_EQ(v[4], static_cast<float>(special::Lgamma(20.5)));
}

TEST(ChloMathTest, NarrowFloatsRoundOnceFromDouble) {
  // erf(0.5) = 0.5205..., bf16 and f16 get the nearest value of their own.
  auto b = RunAndRead<uint16_t>(UnaryProgram("chlo.erf", "tensor<1xbf16>", "[0.5]"));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], numerics::EncodeSmallFloat(E::kBF16, std::erf(0.5)));
  auto h = RunAndRead<uint16_t>(UnaryProgram("chlo.erf_inv", "tensor<1xf16>", "[0.75]"));
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0], numerics::DoubleToHalf(special::ErfInv(0.75)));
}

TEST(ChloMathTest, F64SpecialValuesFollowXla) {
  auto lg = RunAndRead<double>(
      UnaryProgram("chlo.lgamma", "tensor<3xf64>", "[0.0, -2.0, 0xFFF0000000000000]"));
  EXPECT_EQ(lg, (std::vector<double>{kInf, kInf, kInf}));
  auto dg = RunAndRead<double>(UnaryProgram("chlo.digamma", "tensor<3xf64>", "[0.0, -3.0, 1.0]"));
  ASSERT_EQ(dg.size(), 3u);
  EXPECT_TRUE(std::isnan(dg[0]) && std::isnan(dg[1]));
  EXPECT_DOUBLE_EQ(dg[2], -0.5772156649015329);
  auto ei = RunAndRead<double>(UnaryProgram("chlo.erf_inv", "tensor<3xf64>", "[1.0, -1.0, 2.0]"));
  ASSERT_EQ(ei.size(), 3u);
  EXPECT_EQ(ei[0], kInf);
  EXPECT_EQ(ei[1], -kInf);
  EXPECT_TRUE(std::isnan(ei[2]));
  auto at = RunAndRead<double>(UnaryProgram("chlo.atanh", "tensor<3xf64>", "[1.0, 2.0, 0.5]"));
  ASSERT_EQ(at.size(), 3u);
  EXPECT_EQ(at[0], kInf);
  EXPECT_TRUE(std::isnan(at[1]));
  EXPECT_DOUBLE_EQ(at[2], std::atanh(0.5));
  auto ac = RunAndRead<double>(UnaryProgram("chlo.acosh", "tensor<2xf64>", "[0.5, 1.0]"));
  ASSERT_EQ(ac.size(), 2u);
  EXPECT_TRUE(std::isnan(ac[0]));
  EXPECT_EQ(ac[1], 0.0);
}

TEST(ChloMathTest, ElementaryFunctionsOnF32) {
  const float x = 0.3f;
  const struct {
    const char* op;
    double (*fn)(double);
  } cases[] = {
      {"chlo.acos", std::acos},   {"chlo.asin", std::asin},   {"chlo.atan", std::atan},
      {"chlo.atanh", std::atanh}, {"chlo.asinh", std::asinh}, {"chlo.cosh", std::cosh},
      {"chlo.sinh", std::sinh},   {"chlo.tan", std::tan},     {"chlo.erfc", std::erfc},
  };
  for (const auto& c : cases) {
    auto v = RunAndRead<float>(UnaryProgram(c.op, "tensor<1xf32>", "[0.3]"));
    ASSERT_EQ(v.size(), 1u) << c.op;
    EXPECT_EQ(v[0], static_cast<float>(c.fn(x))) << c.op;
  }
}

TEST(ChloMathTest, ComplexFunctions) {
  using C = std::complex<double>;
  auto acos = RunAndRead<C>(
      UnaryProgram("chlo.acos", "tensor<2xcomplex<f64>>", "[(0.5, 0.25), (-2.0, 3.0)]"));
  ASSERT_EQ(acos.size(), 2u);
  EXPECT_EQ(acos[0], special::Acos(C(0.5, 0.25)));
  EXPECT_EQ(acos[1], special::Acos(C(-2, 3)));
  // square: exact zero real part when |x| == |y|; imag 2xy.
  auto sq = RunAndRead<std::complex<float>>(
      UnaryProgram("chlo.square", "tensor<2xcomplex<f32>>", "[(3.0, -3.0), (1.0, 2.0)]"));
  ASSERT_EQ(sq.size(), 2u);
  EXPECT_EQ(sq[0], std::complex<float>(0, -18));
  EXPECT_EQ(sq[1], std::complex<float>(-3, 4));
  auto conj = RunAndRead<std::complex<float>>(
      UnaryProgram("chlo.conj", "tensor<1xcomplex<f32>>", "[(1.5, 2.5)]"));
  ASSERT_EQ(conj.size(), 1u);
  EXPECT_EQ(conj[0], std::complex<float>(1.5f, -2.5f));
}

TEST(ChloMathTest, InfinityPredicates) {
  const std::string values = "[0x7C00, 0xFC00, 0x7E00, 0x3C00]";  // +inf, -inf, nan, 1 (f16)
  auto any =
      RunAndRead<uint8_t>(UnaryProgram("chlo.is_inf", "tensor<4xf16>", values, "tensor<4xi1>"));
  auto pos =
      RunAndRead<uint8_t>(UnaryProgram("chlo.is_pos_inf", "tensor<4xf16>", values, "tensor<4xi1>"));
  auto neg =
      RunAndRead<uint8_t>(UnaryProgram("chlo.is_neg_inf", "tensor<4xf16>", values, "tensor<4xi1>"));
  EXPECT_EQ(any, (std::vector<uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(pos, (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(neg, (std::vector<uint8_t>{0, 1, 0, 0}));
}

TEST(ChloMathTest, NextAfter) {
  auto f = RunAndRead<float>(BinaryProgram("chlo.next_after", "tensor<5xf32>",
                                           "[1.0, 0.0, -0.0, 2.0, 3.0]",
                                           "[2.0, -1.0, 0.0, 2.0, 0xFFC00000]"));
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[0], std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(f[1], -std::numeric_limits<float>::denorm_min());
  EXPECT_TRUE(f[2] == 0 && !std::signbit(f[2]));  // x == y gives y
  EXPECT_EQ(f[3], 2.0f);
  EXPECT_TRUE(std::isnan(f[4]));
  auto b = RunAndRead<uint16_t>(
      BinaryProgram("chlo.next_after", "tensor<3xbf16>", "[1.0, 1.0, -1.0]", "[2.0, 0.0, -2.0]"));
  EXPECT_EQ(b, (std::vector<uint16_t>{0x3F81, 0x3F7F, 0xBF81}));
  auto d = RunAndRead<double>(BinaryProgram("chlo.next_after", "tensor<1xf64>",
                                            "[0x7FEFFFFFFFFFFFFF]", "[0x7FF0000000000000]"));
  EXPECT_EQ(d, (std::vector<double>{kInf}));
}

TEST(ChloMathTest, PolygammaAndZeta) {
  auto p = RunAndRead<double>(
      BinaryProgram("chlo.polygamma", "tensor<3xf64>", "[1.0, 0.0, 1.5]", "[1.0, 2.0, 2.0]"));
  ASSERT_EQ(p.size(), 3u);
  EXPECT_DOUBLE_EQ(p[0], M_PI * M_PI / 6);
  EXPECT_EQ(p[1], special::Digamma(2.0));
  EXPECT_TRUE(std::isnan(p[2]));
  auto z =
      RunAndRead<float>(BinaryProgram("chlo.zeta", "tensor<2xf32>", "[2.0, 0.5]", "[1.0, 1.0]"));
  ASSERT_EQ(z.size(), 2u);
  EXPECT_EQ(z[0], static_cast<float>(M_PI * M_PI / 6));
  EXPECT_TRUE(std::isnan(z[1]));
}

TEST(ChloMathTest, MulhiKeepsTheHighHalf) {
  EXPECT_EQ(RunAndRead<int8_t>(
                BinaryProgram("chlo.mulhi", "tensor<3xi8>", "[64, -64, -128]", "[4, 4, -128]")),
            (std::vector<int8_t>{1, -1, 64}));
  EXPECT_EQ(RunAndRead<uint64_t>(BinaryProgram("chlo.mulhi", "tensor<2xui64>",
                                               "[18446744073709551615, 4294967296]",
                                               "[18446744073709551615, 4294967296]")),
            (std::vector<uint64_t>{18446744073709551614u, 1}));
  EXPECT_EQ(
      RunAndRead<int64_t>(BinaryProgram("chlo.mulhi", "tensor<2xi64>",
                                        "[-9223372036854775808, 4611686018427387904]", "[2, 4]")),
      (std::vector<int64_t>{-1, 1}));
  // 4-bit: 7 * 7 = 49 = 0x31 -> 3; -8 * 7 = -56 -> floor(-56 / 16) = -4.
  EXPECT_EQ(RunAndRead<int8_t>(BinaryProgram("chlo.mulhi", "tensor<2xi4>", "[7, -8]", "[7, 7]")),
            (std::vector<int8_t>{3, -4}));
}

TEST(ChloMathTest, Constant) {
  EXPECT_EQ(RunAndRead<int32_t>(R"(
func.func @main() -> tensor<2xi32> {
  %c = "chlo.constant"() {value = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  return %c : tensor<2xi32>
})"),
            (std::vector<int32_t>{1, 2}));
}

TEST(ChloMathTest, ConstantLikeSplatsTheValue) {
  Tensor x = Tensor::Allocate(ir::Type::Tensor(E::kF32, {2, 2})).value();
  auto r = RunMlir(R"(
func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xi16> {
  %c = "chlo.constant_like"(%x) {value = -3 : i16} : (tensor<2x2xf32>) -> tensor<2x2xi16>
  return %c : tensor<2x2xi16>
})",
                   {x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(testing::Read<int16_t>((*r)[0]), (std::vector<int16_t>{-3, -3, -3, -3}));
}

TEST(ChloMathTest, ShapeRulesRejectBadTypes) {
  EXPECT_EQ(VerifyMlir(UnaryProgram("chlo.lgamma", "tensor<2xcomplex<f32>>", "(1.0, 0.0)")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyMlir(BinaryProgram("chlo.mulhi", "tensor<2xf32>", "1.0", "2.0")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyMlir(UnaryProgram("chlo.is_inf", "tensor<2xf32>", "1.0")).code(),
            StatusCode::kInvalidArgument);  // result must be i1
  EXPECT_EQ(VerifyMlir(BinaryProgram("chlo.next_after", "tensor<2xf8E4M3FN>", "1.0", "2.0")).code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(VerifyMlir(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
  %c = "chlo.constant_like"(%x) {value = 1.0 : f32} : (tensor<2xf32>) -> tensor<3xf32>
  return %c : tensor<3xf32>
})")
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
