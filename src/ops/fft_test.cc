#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <string>

#include "ops/dense_test_util.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;
using testing::MakeTensor;
using testing::RunMain;
using testing::Values;
using cd = std::complex<double>;

std::vector<cd> RandomComplex(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<cd> v(n);
  for (cd& x : v) x = cd(d(rng), d(rng));
  return v;
}

// The DFT by its definition, along the last dimension of [rows, n].
std::vector<cd> NaiveDft(const std::vector<cd>& x, int64_t n, int sign) {
  std::vector<cd> out(x.size());
  for (size_t r = 0; r < x.size() / n; ++r)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j) {
        out[r * n + k] += x[r * n + j] *
                          std::polar(1.0, sign * 2 * std::numbers::pi * double(j * k) / double(n));
      }
  return out;
}

std::string FftProgram(const std::string& type, const std::string& in, const std::string& out,
                       const std::string& lengths) {
  return "func.func @main(%x: " + in + ") -> " + out + " {\n  %0 = stablehlo.fft %x, type = " +
         type + ", length = [" + lengths + "] : (" + in + ") -> " + out +
         "\n  return %0 : " + out + "\n}\n";
}

// Power-of-two (radix-2) and other lengths (direct DFT) both match the
// definition, and IFFT inverts FFT.
TEST(FftTest, ForwardMatchesDefinitionAndInverseInverts) {
  for (int64_t n : {8, 6}) {
    const std::string t = "tensor<3x" + std::to_string(n) + "xcomplex<f64>>";
    std::vector<cd> x = RandomComplex(3 * n, static_cast<uint32_t>(n));
    auto fwd = RunMain(FftProgram("FFT", t, t, std::to_string(n)),
                       {MakeTensor(ElementType::kC128, {3, n}, x)});
    ASSERT_TRUE(fwd.ok()) << fwd.status().ToString();
    std::vector<cd> got = Values<cd>((*fwd)[0]), want = NaiveDft(x, n, -1);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_LT(std::abs(got[i] - want[i]), 1e-12);
    auto inv = RunMain(FftProgram("IFFT", t, t, std::to_string(n)), {(*fwd)[0]});
    ASSERT_TRUE(inv.ok()) << inv.status().ToString();
    std::vector<cd> back = Values<cd>((*inv)[0]);
    for (size_t i = 0; i < back.size(); ++i) EXPECT_LT(std::abs(back[i] - x[i]), 1e-12);
  }
}

TEST(FftTest, TwoDimensionalIsRowsThenColumns) {
  // A 2-D DFT of a single impulse at (1, 2) is a plane wave.
  std::vector<cd> x(4 * 6, 0);
  x[1 * 6 + 2] = 1;
  const std::string t = "tensor<4x6xcomplex<f64>>";
  auto r = RunMain(FftProgram("FFT", t, t, "4, 6"), {MakeTensor(ElementType::kC128, {4, 6}, x)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<cd> got = Values<cd>((*r)[0]);
  for (int u = 0; u < 4; ++u)
    for (int v = 0; v < 6; ++v) {
      cd want = std::polar(1.0, -2 * std::numbers::pi * (u * 1 / 4.0 + v * 2 / 6.0));
      EXPECT_LT(std::abs(got[u * 6 + v] - want), 1e-12);
    }
}

TEST(FftTest, RealTransformsRoundTrip) {
  // Odd last length: RFFT keeps n / 2 + 1 = 3 of 5 frequencies.
  std::vector<float> x = {1.0f, -2.0f, 0.5f, 3.0f, -1.0f, 2.0f, 0.0f, 1.0f, -0.5f, 4.0f};
  auto r = RunMain(FftProgram("RFFT", "tensor<2x5xf32>", "tensor<2x3xcomplex<f32>>", "5"),
                   {MakeTensor(ElementType::kF32, {2, 5}, x)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::complex<float>> half = Values<std::complex<float>>((*r)[0]);
  std::vector<cd> full(x.begin(), x.end());
  std::vector<cd> want = NaiveDft(full, 5, -1);
  for (int row = 0; row < 2; ++row)
    for (int k = 0; k < 3; ++k) {
      EXPECT_LT(std::abs(cd(half[row * 3 + k]) - want[row * 5 + k]), 1e-5);
    }
  auto back = RunMain(FftProgram("IRFFT", "tensor<2x3xcomplex<f32>>", "tensor<2x5xf32>", "5"),
                      {(*r)[0]});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  std::vector<float> y = Values<float>((*back)[0]);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], 1e-5);
}

TEST(FftTest, TwoDimensionalRealRoundTrip) {
  std::vector<double> x(4 * 6);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7 * double(i)) + double(i % 3);
  auto r = RunMain(FftProgram("RFFT", "tensor<4x6xf64>", "tensor<4x4xcomplex<f64>>", "4, 6"),
                   {MakeTensor(ElementType::kF64, {4, 6}, x)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto back = RunMain(FftProgram("IRFFT", "tensor<4x4xcomplex<f64>>", "tensor<4x6xf64>", "4, 6"),
                      {(*r)[0]});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  std::vector<double> y = Values<double>((*back)[0]);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], 1e-12);
}

TEST(FftTest, ShapeRuleErrors) {
  EXPECT_EQ(testing::VerifyText(FftProgram("RFFT", "tensor<8xf32>", "tensor<8xcomplex<f32>>", "8"))
                .code(),
            StatusCode::kInvalidArgument);  // RFFT keeps 5
  EXPECT_EQ(testing::VerifyText(FftProgram("FFT", "tensor<8xcomplex<f32>>",
                                           "tensor<8xcomplex<f64>>", "8"))
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(testing::VerifyText(FftProgram("RFFT", "tensor<8xf32>", "tensor<5xcomplex<f32>>", "8"))
                  .ok());
}

}  // namespace
}  // namespace tpusim::ops
