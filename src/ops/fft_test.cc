#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <string>
#include <thread>

#include "ops/testing/dense_test_util.h"

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

// Power-of-two and other lengths both match the definition, and IFFT
// inverts FFT.
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

// A 3-D transform over odd and even lengths on a batch of two, against the
// definition applied along each axis in turn.
TEST(FftTest, ThreeDimensionalMatchesDefinition) {
  const int64_t b = 2, n0 = 3, n1 = 4, n2 = 5, n = n0 * n1 * n2;
  std::vector<cd> x = RandomComplex(b * n, 11);
  const std::string t = "tensor<2x3x4x5xcomplex<f64>>";
  auto r = RunMain(FftProgram("FFT", t, t, "3, 4, 5"),
                   {MakeTensor(ElementType::kC128, {b, n0, n1, n2}, x)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<cd> want(x.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t k0 = 0; k0 < n0; ++k0)
      for (int64_t k1 = 0; k1 < n1; ++k1)
        for (int64_t k2 = 0; k2 < n2; ++k2) {
          cd s = 0;
          for (int64_t j0 = 0; j0 < n0; ++j0)
            for (int64_t j1 = 0; j1 < n1; ++j1)
              for (int64_t j2 = 0; j2 < n2; ++j2) {
                const double phase = double(j0 * k0) / n0 + double(j1 * k1) / n1 +
                                     double(j2 * k2) / n2;
                s += x[((i * n0 + j0) * n1 + j1) * n2 + j2] *
                     std::polar(1.0, -2 * std::numbers::pi * phase);
              }
          want[((i * n0 + k0) * n1 + k1) * n2 + k2] = s;
        }
  std::vector<cd> got = Values<cd>((*r)[0]);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_LT(std::abs(got[i] - want[i]), 1e-12) << i;
}

// FFTW plans are made under a lock: transforms on several threads at once
// all give the single-threaded result.
TEST(FftTest, ConcurrentTransformsAgree) {
  const std::string in = "tensor<4x17xf32>", out = "tensor<4x9xcomplex<f32>>";
  std::vector<float> x(4 * 17);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.3f * float(i));
  auto once = RunMain(FftProgram("RFFT", in, out, "17"), {MakeTensor(ElementType::kF32, {4, 17}, x)});
  ASSERT_TRUE(once.ok()) << once.status().ToString();
  const auto want = Values<std::complex<float>>((*once)[0]);
  std::vector<int> same(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        auto r = RunMain(FftProgram("RFFT", in, out, "17"),
                         {MakeTensor(ElementType::kF32, {4, 17}, x)});
        same[t] += r.ok() && Values<std::complex<float>>((*r)[0]) == want;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(same[t], 20) << t;
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
