#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <random>
#include <string>

#include "ops/kernels/matmul.h"
#include "ops/testing/dense_test_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;
using numerics::MatmulPrecision;
using testing::MakeTensor;
using testing::RunMain;
using testing::Values;

// bf16 rounding written independently of numerics/: round to nearest even on
// the bits (normal finite inputs only).
float RoundBf16(float x) {
  uint32_t b = std::bit_cast<uint32_t>(x);
  b += 0x7FFF + ((b >> 16) & 1);
  return std::bit_cast<float>(b & 0xFFFF0000u);
}

std::vector<float> RandomFloats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::string MatmulProgram(int64_t m, int64_t k, int64_t n, const std::string& precision) {
  auto t = [](int64_t a, int64_t b) {
    return "tensor<" + std::to_string(a) + "x" + std::to_string(b) + "xf32>";
  };
  return "func.func @main(%a: " + t(m, k) + ", %b: " + t(k, n) + ") -> " + t(m, n) + " {\n" +
         "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [" +
         precision + "] : (" + t(m, k) + ", " + t(k, n) + ") -> " + t(m, n) + "\n" +
         "  return %0 : " + t(m, n) + "\n}\n";
}

float RunScalarProduct(float a, float b, const std::string& precision, EvalOptions opts) {
  auto r = RunMain(MatmulProgram(1, 1, 1, precision),
                   {MakeTensor<float>(ElementType::kF32, {1, 1}, {a}),
                    MakeTensor<float>(ElementType::kF32, {1, 1}, {b})},
                   opts);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? (*r)[0].data<float>()[0] : NAN;
}

// One product shows each pass scheme exactly: the passes' products of bf16
// parts are exact in f32 and are added smallest first.
TEST(DotGeneralTpuTest, PassSchemesOnOneProduct) {
  const float a = 1.2345678f, b = -2.7182817f;
  const float ah = RoundBf16(a), am = RoundBf16(a - ah), al3 = RoundBf16(a - ah - am);
  const float bh = RoundBf16(b), bm = RoundBf16(b - bh), bl3 = RoundBf16(b - bh - bm);
  const float want_default = ah * bh;
  const float want_high = ((am * bh) + (ah * bm)) + ah * bh;
  const float want_highest =
      (((((al3 * bh) + (ah * bl3)) + am * bm) + am * bh) + ah * bm) + ah * bh;
  EvalOptions tpu{.numerics = Numerics::kTpu};
  const float got_default = RunScalarProduct(a, b, "DEFAULT, DEFAULT", tpu);
  const float got_high = RunScalarProduct(a, b, "HIGH, DEFAULT", tpu);  // max of the two
  const float got_highest = RunScalarProduct(a, b, "DEFAULT, HIGHEST", tpu);
  EXPECT_EQ(got_default, want_default);
  EXPECT_EQ(got_high, want_high);
  EXPECT_EQ(got_highest, want_highest);
  EXPECT_NE(got_default, got_high);
  EXPECT_NE(got_high, got_highest);
  // The reference numerics ignore the precision: one f32 multiplication.
  EXPECT_EQ(RunScalarProduct(a, b, "DEFAULT, DEFAULT", {}), a * b);
  // The options' override wins over the attribute.
  EvalOptions forced{.numerics = Numerics::kTpu, .override_precision = true,
                     .precision = MatmulPrecision::kDefault};
  EXPECT_EQ(RunScalarProduct(a, b, "HIGHEST, HIGHEST", forced), want_default);
}

double MaxError(const std::vector<float>& got, const std::vector<double>& want) {
  double e = 0;
  for (size_t i = 0; i < got.size(); ++i) e = std::max(e, std::fabs(got[i] - want[i]));
  return e;
}

// On a real matmul each scheme is close to its own bf16 emulation, and the
// error against the exact product shrinks DEFAULT > HIGH > HIGHEST.
TEST(DotGeneralTpuTest, PrecisionsOrderByAccuracy) {
  const int64_t m = 17, k = 300, n = 23;
  std::vector<float> a = RandomFloats(m * k, 1), b = RandomFloats(k * n, 2);
  std::vector<double> exact(m * n), bf16_1pass(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t kk = 0; kk < k; ++kk) {
        exact[i * n + j] += double{a[i * k + kk]} * b[kk * n + j];
        bf16_1pass[i * n + j] += double{RoundBf16(a[i * k + kk])} * RoundBf16(b[kk * n + j]);
      }
    }
  }
  double err[3];
  const char* names[3] = {"DEFAULT, DEFAULT", "HIGH, HIGH", "HIGHEST, HIGHEST"};
  for (int p = 0; p < 3; ++p) {
    auto r = RunMain(MatmulProgram(m, k, n, names[p]),
                     {MakeTensor(ElementType::kF32, {m, k}, a),
                      MakeTensor(ElementType::kF32, {k, n}, b)},
                     {.numerics = Numerics::kTpu});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<float> got = Values<float>((*r)[0]);
    err[p] = MaxError(got, exact);
    // f32 accumulation of 300 terms of size <= 4 stays within ~1e-4 of the
    // same sum taken in double.
    if (p == 0) {
      EXPECT_LT(MaxError(got, bf16_1pass), 2e-4);
    }
  }
  EXPECT_GT(err[0], 1e-2);  // bf16 inputs: ~3 significant digits
  EXPECT_LT(err[1], err[0] / 50);
  EXPECT_LT(err[2], err[1]);
  EXPECT_LT(err[2], 1e-4);
}

// The oneDNN passes and the portable loops compute the same thing.
TEST(MatmulTest, DnnlAndPortableLoopsAgree) {
  const int64_t batch = 3, m = 9, k = 40, n = 11;
  Tensor a = MakeTensor(ElementType::kF32, {batch, m, k}, RandomFloats(batch * m * k, 3));
  // rhs stored transposed: [batch, n, k] viewed as [batch, k, n].
  Tensor b = MakeTensor(ElementType::kF32, {batch, n, k}, RandomFloats(batch * n * k, 4));
  MatmulProblem p{.batch = batch, .m = m, .k = k, .n = n,
                  .lhs = {&a, 0, {m * k, k, 1}}, .rhs = {&b, 0, {n * k, 1, k}}};
  for (Numerics numerics : {Numerics::kReference, Numerics::kTpu}) {
    for (MatmulPrecision prec :
         {MatmulPrecision::kDefault, MatmulPrecision::kHigh, MatmulPrecision::kHighest}) {
      MatmulNumerics fast{numerics, prec, true}, slow{numerics, prec, false};
      auto x = BatchedMatmul(p, ElementType::kF32, fast);
      auto y = BatchedMatmul(p, ElementType::kF32, slow);
      ASSERT_TRUE(x.ok() && y.ok());
      std::vector<float> vx = Values<float>(*x), vy = Values<float>(*y);
      for (size_t i = 0; i < vx.size(); ++i) ASSERT_NEAR(vx[i], vy[i], 2e-5) << i;
    }
  }
}

// An f32 or bf16 tensor of `values` (bf16: their top halves, exact for the
// values used here).
Tensor FloatTensor(ElementType type, ir::Shape shape, const std::vector<float>& values) {
  if (type == ElementType::kF32) return MakeTensor(type, std::move(shape), values);
  std::vector<uint16_t> top(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    top[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(values[i]) >> 16);
  }
  return MakeTensor(type, std::move(shape), top);
}

// Subnormal f32 and bf16 operands count as zero in both numerics modes and on
// both paths, as on the TPU: the same result as with zeros in their place.
TEST(MatmulTest, SubnormalOperandsCountAsZero) {
  const int64_t m = 4, k = 64, n = 5;
  for (ElementType type : {ElementType::kF32, ElementType::kBF16}) {
    // Subnormals whose bits survive in bf16's top half, of both signs.
    auto subnormal = [](int64_t i) {
      uint32_t bits = static_cast<uint32_t>(1 + i % 127) << 16 | (i % 2 ? 0x80000000u : 0u);
      return std::bit_cast<float>(bits);
    };
    std::vector<float> a = RandomFloats(m * k, 5), b = RandomFloats(k * n, 6);
    for (float& x : a) x = RoundBf16(x);
    for (float& x : b) x = RoundBf16(x);
    std::vector<float> a0 = a, b0 = b;
    // Row 0 all subnormal: its products would be too, and would show.
    for (int64_t i = 0; i < m * k; i += i < k ? 1 : 7) a[i] = subnormal(i), a0[i] = 0.0f;
    b[3] = subnormal(126), b0[3] = 0.0f;
    // rhs stored transposed ([n, k]), so that its flushed copy must keep the layout.
    auto transposed = [&](const std::vector<float>& v) {
      std::vector<float> t(v.size());
      for (int64_t kk = 0; kk < k; ++kk) {
        for (int64_t j = 0; j < n; ++j) t[j * k + kk] = v[kk * n + j];
      }
      return t;
    };
    Tensor ta = FloatTensor(type, {m, k}, a), ta0 = FloatTensor(type, {m, k}, a0);
    Tensor tb = FloatTensor(type, {n, k}, transposed(b));
    Tensor tb0 = FloatTensor(type, {n, k}, transposed(b0));
    for (Numerics numerics : {Numerics::kReference, Numerics::kTpu}) {
      for (bool dnnl : {true, false}) {
        MatmulNumerics num{numerics, MatmulPrecision::kHighest, dnnl};
        auto run = [&](const Tensor& x, const Tensor& y) {
          MatmulProblem p{.batch = 1, .m = m, .k = k, .n = n,
                          .lhs = {&x, 0, {m * k, k, 1}}, .rhs = {&y, 0, {n * k, 1, k}}};
          return BatchedMatmul(p, ElementType::kF32, num);
        };
        auto got = run(ta, tb), want = run(ta0, tb0);
        ASSERT_TRUE(got.ok() && want.ok());
        EXPECT_TRUE(got->BitwiseEquals(*want)) << ir::ElementTypeName(type) << " numerics "
                                               << static_cast<int>(numerics) << " oneDNN " << dnnl;
      }
    }
  }
}

// A transposed lhs (a weight gradient's x^T dy) gives the same bits on one
// thread as on several: oneDNN's kernels for that layout split the sum
// over K between threads on some hosts (AMX), so it is packed first.
TEST(MatmulTest, TransposedLhsIsThreadCountIndependent) {
  const int64_t m = 512, k = 1024, n = 2048;
  std::vector<float> a = RandomFloats(k * m, 7), b = RandomFloats(k * n, 8);
  for (ElementType type : {ElementType::kF32, ElementType::kBF16}) {
    Tensor ta = FloatTensor(type, {k, m}, a), tb = FloatTensor(type, {k, n}, b);
    MatmulProblem p{.batch = 1, .m = m, .k = k, .n = n,
                    .lhs = {&ta, 0, {m * k, 1, m}}, .rhs = {&tb, 0, {k * n, n, 1}}};
    MatmulNumerics num{Numerics::kReference, MatmulPrecision::kDefault, true};
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    auto one = BatchedMatmul(p, ElementType::kF32, num);
    omp_set_num_threads(std::max(threads, 2));
    auto several = BatchedMatmul(p, ElementType::kF32, num);
    omp_set_num_threads(threads);
    ASSERT_TRUE(one.ok() && several.ok());
    EXPECT_TRUE(one->BitwiseEquals(*several)) << ir::ElementTypeName(type);
  }
}

TEST(DotGeneralTest, BatchAndTransposedLayouts) {
  // lhs [k=3, b=2, m=2] (contracting first, batch in the middle: copied),
  // rhs [b=2, n=2, k=3] (contracting last: viewed in place).
  const char* text = R"(
func.func @main(%a: tensor<3x2x2xf32>, %b: tensor<2x2x3xf32>) -> tensor<2x2x2xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [1] x [0], contracting_dims = [0] x [2]
      : (tensor<3x2x2xf32>, tensor<2x2x3xf32>) -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}
)";
  std::vector<float> a(12), b(12);
  for (int i = 0; i < 12; ++i) a[i] = static_cast<float>(i + 1), b[i] = static_cast<float>(i % 5);
  auto r = RunMain(text, {MakeTensor(ElementType::kF32, {3, 2, 2}, a),
                          MakeTensor(ElementType::kF32, {2, 2, 3}, b)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> got = Values<float>((*r)[0]);
  for (int bb = 0; bb < 2; ++bb) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        float want = 0;
        for (int kk = 0; kk < 3; ++kk) want += a[kk * 4 + bb * 2 + i] * b[bb * 6 + j * 3 + kk];
        EXPECT_EQ(got[bb * 4 + i * 2 + j], want) << bb << i << j;
      }
    }
  }
}

TEST(DotGeneralTest, Bf16ProductsAccumulateInF32) {
  // 256 + 1 + ... : a bf16 accumulator would lose the ones (ulp 2 at 256);
  // the f32 accumulator keeps them and rounds once at the end.
  const int64_t k = 8;
  std::vector<uint16_t> a(k), b(k);
  for (int64_t i = 0; i < k; ++i) {
    a[i] = numerics::FloatToBf16(i == 0 ? 256.0f : 1.0f);
    b[i] = numerics::FloatToBf16(1.0f);
  }
  const char* text = R"(
func.func @main(%a: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<bf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0]
      : (tensor<8xbf16>, tensor<8xbf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}
)";
  auto r = RunMain(text, {MakeTensor(ElementType::kBF16, {k}, a),
                          MakeTensor(ElementType::kBF16, {k}, b)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(numerics::Bf16ToFloat((*r)[0].data<uint16_t>()[0]), 264.0f);
}

TEST(DotGeneralTest, IntegersWrapAndBoolsAreOrOfAnds) {
  const char* text = R"(
func.func @main(%a: tensor<2x2xi8>, %p: tensor<2x2xi1>) -> (tensor<2x2xi8>, tensor<2x2xi1>) {
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0]
      : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
  %1 = stablehlo.dot_general %p, %p, contracting_dims = [1] x [0]
      : (tensor<2x2xi1>, tensor<2x2xi1>) -> tensor<2x2xi1>
  return %0, %1 : tensor<2x2xi8>, tensor<2x2xi1>
}
)";
  auto r = RunMain(text, {MakeTensor<int8_t>(ElementType::kSI8, {2, 2}, {100, -3, 2, 7}),
                          MakeTensor<uint8_t>(ElementType::kI1, {2, 2}, {1, 0, 1, 1})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // [[100*100 + -3*2, 100*-3 + -3*7], [2*100 + 7*2, 2*-3 + 7*7]] mod 2^8.
  EXPECT_EQ(Values<int8_t>((*r)[0]), (std::vector<int8_t>{static_cast<int8_t>(9994 & 0xFF),
                                                          static_cast<int8_t>(-321 + 512),
                                                          static_cast<int8_t>(214 - 256), 43}));
  EXPECT_EQ(Values<uint8_t>((*r)[1]), (std::vector<uint8_t>{1, 0, 1, 1}));
}

TEST(DotGeneralTest, ComplexAndEmptyContraction) {
  const char* text = R"(
func.func @main(%a: tensor<2xcomplex<f32>>, %z: tensor<2x0xf32>) -> (tensor<complex<f32>>, tensor<2x2xf32>) {
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0]
      : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<complex<f32>>
  %1 = stablehlo.dot_general %z, %z, contracting_dims = [1] x [1]
      : (tensor<2x0xf32>, tensor<2x0xf32>) -> tensor<2x2xf32>
  return %0, %1 : tensor<complex<f32>>, tensor<2x2xf32>
}
)";
  using c64 = std::complex<float>;
  auto r = RunMain(text, {MakeTensor<c64>(ElementType::kC64, {2}, {{1, 2}, {3, -1}}),
                          MakeTensor<float>(ElementType::kF32, {2, 0}, {})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].data<c64>()[0], c64(1, 2) * c64(1, 2) + c64(3, -1) * c64(3, -1));
  EXPECT_EQ(Values<float>((*r)[1]), (std::vector<float>{0, 0, 0, 0}));
}

TEST(DotGeneralTest, LegacyDot) {
  const char* text = R"(
func.func @main(%a: tensor<2x3xf32>, %v: tensor<3xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.dot"(%a, %v) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
)";
  auto r = RunMain(text, {MakeTensor<float>(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                          MakeTensor<float>(ElementType::kF32, {3}, {1, 0, -1})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Values<float>((*r)[0]), (std::vector<float>{-2, -2}));
}

TEST(DotGeneralTest, ShapeRuleErrors) {
  auto program = [](const std::string& dims, const std::string& result) {
    return "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> " + result + " {\n" +
           "  %0 = stablehlo.dot_general %a, %b, " + dims +
           " : (tensor<2x3xf32>, tensor<3x4xf32>) -> " + result + "\n  return %0 : " + result +
           "\n}\n";
  };
  EXPECT_TRUE(testing::VerifyText(program("contracting_dims = [1] x [0]", "tensor<2x4xf32>")).ok());
  EXPECT_EQ(testing::VerifyText(program("contracting_dims = [0] x [0]", "tensor<3x4xf32>")).code(),
            StatusCode::kInvalidArgument);  // sizes 2 vs 3
  EXPECT_EQ(testing::VerifyText(program("contracting_dims = [2] x [0]", "tensor<2x4xf32>")).code(),
            StatusCode::kInvalidArgument);  // out of range
  EXPECT_EQ(testing::VerifyText(program("contracting_dims = [1] x [0]", "tensor<4x2xf32>")).code(),
            StatusCode::kInvalidArgument);  // wrong result shape
  EXPECT_EQ(testing::VerifyText(program("contracting_dims = [1] x [0]", "tensor<2x4xi32>")).code(),
            StatusCode::kInvalidArgument);  // float operands, integer result
}

TEST(DotGeneralTest, UnsupportedAlgorithmInTpuMode) {
  const char* text = R"(
func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0],
      algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32,
                   lhs_component_count = 1, rhs_component_count = 1,
                   num_primitive_operations = 1, allow_imprecise_accumulation = false>
      : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
)";
  Tensor a = MakeTensor<float>(ElementType::kF32, {2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(RunMain(text, {a}).ok());
  EXPECT_EQ(RunMain(text, {a}, {.numerics = Numerics::kTpu}).status().code(),
            StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tpusim::ops
