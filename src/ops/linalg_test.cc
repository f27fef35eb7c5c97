#include <gtest/gtest.h>

#include <complex>
#include <random>
#include <string>

#include "ops/testing/dense_test_util.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;
using testing::MakeTensor;
using testing::RunMain;
using testing::Values;
using c64 = std::complex<float>;
using cd = std::complex<double>;

constexpr int64_t kN = 4;  // matrices are kN x kN, two of them in a batch
constexpr int64_t kCols = 3;

// Two random complex matrices whose lower triangle is well conditioned and
// whose upper triangle holds values the solver must not read when lower.
std::vector<c64> RandomTriangular(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<c64> a(2 * kN * kN);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < kN; ++i)
      for (int64_t j = 0; j < kN; ++j) {
        c64 v(d(rng), d(rng));
        if (i == j) v += c64(3, 0);
        a[(b * kN + i) * kN + j] = v;
      }
  return a;
}

struct Solve {
  bool left, lower, unit;
  std::string transpose;
};

// op(triangle of a) as a dense double matrix, as the spec defines it.
std::vector<cd> OpMatrix(const std::vector<c64>& a, int64_t b, const Solve& s) {
  std::vector<cd> m(kN * kN);
  for (int64_t i = 0; i < kN; ++i)
    for (int64_t j = 0; j < kN; ++j) {
      const bool in_triangle = s.lower ? j <= i : j >= i;
      cd v = in_triangle ? cd(a[(b * kN + i) * kN + j]) : cd(0);
      if (i == j && s.unit) v = 1;
      if (s.transpose == "NO_TRANSPOSE") {
        m[i * kN + j] += v;
      } else {
        m[j * kN + i] += s.transpose == "ADJOINT" ? std::conj(v) : v;
      }
    }
  return m;
}

TEST(TriangularSolveTest, EveryVariantSatisfiesItsEquation) {
  const std::vector<c64> a = RandomTriangular(1);
  std::vector<c64> rhs(2 * kN * kCols);
  for (size_t i = 0; i < rhs.size(); ++i) rhs[i] = c64(static_cast<float>(i % 5) - 2, 0.5f);
  for (bool left : {true, false})
    for (bool lower : {true, false})
      for (bool unit : {false, true})
        for (std::string tr : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
          const Solve s{left, lower, unit, tr};
          const int64_t rows = left ? kN : kCols, cols = left ? kCols : kN;
          const std::string at = "tensor<2x4x4xcomplex<f32>>";
          const std::string bt = "tensor<2x" + std::to_string(rows) + "x" + std::to_string(cols) +
                                 "xcomplex<f32>>";
          const std::string text =
              "func.func @main(%a: " + at + ", %b: " + bt + ") -> " + bt + " {\n" +
              "  %0 = \"stablehlo.triangular_solve\"(%a, %b) {left_side = " +
              (left ? "true" : "false") + ", lower = " + (lower ? "true" : "false") +
              ", unit_diagonal = " + (unit ? "true" : "false") +
              ", transpose_a = #stablehlo<transpose " + tr + ">} : (" + at + ", " + bt + ") -> " +
              bt + "\n  return %0 : " + bt + "\n}\n";
          auto r = RunMain(text, {MakeTensor(ElementType::kC64, {2, kN, kN}, a),
                                  MakeTensor(ElementType::kC64, {2, rows, cols}, rhs)});
          ASSERT_TRUE(r.ok()) << r.status().ToString();
          const std::vector<c64> x = Values<c64>((*r)[0]);
          for (int64_t b = 0; b < 2; ++b) {
            const std::vector<cd> m = OpMatrix(a, b, s);
            // Residual of op(A) X = B or X op(A) = B.
            for (int64_t i = 0; i < rows; ++i)
              for (int64_t j = 0; j < cols; ++j) {
                cd sum = 0;
                for (int64_t t = 0; t < kN; ++t) {
                  sum += left ? m[i * kN + t] * cd(x[(b * rows + t) * cols + j])
                              : cd(x[(b * rows + i) * cols + t]) * m[t * kN + j];
                }
                ASSERT_LT(std::abs(sum - cd(rhs[(b * rows + i) * cols + j])), 1e-4)
                    << left << lower << unit << tr;
              }
          }
        }
}

TEST(TriangularSolveTest, RejectsMismatchedShapes) {
  const char* text = R"(
func.func @main(%a: tensor<3x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
      transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
)";
  EXPECT_EQ(testing::VerifyText(text).code(), StatusCode::kInvalidArgument);
}

TEST(CholeskyTest, FactorsBothTriangles) {
  // A = L L^T for L = [[2, 0, 0], [1, 3, 0], [-1, 2, 4]].
  const std::vector<double> l = {2, 0, 0, 1, 3, 0, -1, 2, 4};
  std::vector<double> a(9, 0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) a[i * 3 + j] += l[i * 3 + k] * l[j * 3 + k];
  const char* text = R"(
func.func @main(%a: tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<3x3xf64>) {
  %0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<3x3xf64>) -> tensor<3x3xf64>
  %1 = "stablehlo.cholesky"(%a) {lower = false} : (tensor<3x3xf64>) -> tensor<3x3xf64>
  return %0, %1 : tensor<3x3xf64>, tensor<3x3xf64>
}
)";
  auto r = RunMain(text, {MakeTensor(ElementType::kF64, {3, 3}, a)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<double> lower = Values<double>((*r)[0]), upper = Values<double>((*r)[1]);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      EXPECT_NEAR(lower[i * 3 + j], l[i * 3 + j], 1e-12);
      EXPECT_NEAR(upper[i * 3 + j], l[j * 3 + i], 1e-12);
    }
}

TEST(CholeskyTest, ComplexHermitian) {
  // A = L L^H with L = [[2, 0], [1 - 1i, 1]]: [[4, 2 + 2i], [2 - 2i, 3]].
  const char* text = R"(
func.func @main(%a: tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>> {
  %0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  return %0 : tensor<2x2xcomplex<f32>>
}
)";
  auto r = RunMain(text, {MakeTensor<c64>(ElementType::kC64, {2, 2},
                                          {{4, 0}, {2, 2}, {2, -2}, {3, 0}})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Values<c64>((*r)[0]), (std::vector<c64>{{2, 0}, {0, 0}, {1, -1}, {1, 0}}));
}

}  // namespace
}  // namespace tpusim::ops
