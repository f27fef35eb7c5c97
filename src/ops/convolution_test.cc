#include <gtest/gtest.h>

#include <random>
#include <string>

#include "ops/testing/dense_test_util.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;
using testing::MakeTensor;
using testing::RunMain;
using testing::Values;

struct Conv2d {
  int64_t n, h, w, c;          // input, NHWC
  int64_t kh, kw, o;           // kernel HWIO with I = c / feature_groups
  int64_t sy = 1, sx = 1;      // strides
  int64_t pt = 0, pb = 0, pl = 0, pr = 0;  // padding
  int64_t ly = 1, lx = 1;      // lhs dilation
  int64_t ry = 1, rx = 1;      // rhs dilation
  bool rev_y = false, rev_x = false;
  int64_t feature_groups = 1, batch_groups = 1;

  int64_t in_per_group() const { return c / feature_groups; }
  int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t lo, int64_t hi, int64_t l,
                   int64_t r) const {
    const int64_t padded = lo + (in - 1) * l + 1 + hi, window = (k - 1) * r + 1;
    return window > padded ? 0 : (padded - window) / s + 1;
  }
  int64_t oh() const { return out_size(h, kh, sy, pt, pb, ly, ry); }
  int64_t ow() const { return out_size(w, kw, sx, pl, pr, lx, rx); }
};

std::string Dims(std::initializer_list<int64_t> d, const char* e = "f32") {
  std::string s = "tensor<";
  for (int64_t x : d) s += std::to_string(x) + "x";
  return s + e + ">";
}

std::string Program(const Conv2d& c, const std::string& precision = "DEFAULT") {
  const std::string in = Dims({c.n, c.h, c.w, c.c});
  const std::string k = Dims({c.kh, c.kw, c.in_per_group(), c.o});
  const std::string out = Dims({c.n / c.batch_groups, c.oh(), c.ow(), c.o});
  auto b = [](bool v) { return v ? "true" : "false"; };
  return "func.func @main(%x: " + in + ", %k: " + k + ") -> " + out + " {\n" +
         "  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
         " window = {stride = [" + std::to_string(c.sy) + ", " + std::to_string(c.sx) +
         "], pad = [[" + std::to_string(c.pt) + ", " + std::to_string(c.pb) + "], [" +
         std::to_string(c.pl) + ", " + std::to_string(c.pr) + "]], lhs_dilate = [" +
         std::to_string(c.ly) + ", " + std::to_string(c.lx) + "], rhs_dilate = [" +
         std::to_string(c.ry) + ", " + std::to_string(c.rx) + "], reverse = [" + b(c.rev_y) +
         ", " + b(c.rev_x) + "]} {batch_group_count = " + std::to_string(c.batch_groups) +
         " : i64, feature_group_count = " + std::to_string(c.feature_groups) +
         " : i64, precision_config = [#stablehlo<precision " + precision +
         ">, #stablehlo<precision " + precision + ">]} : (" + in + ", " + k + ") -> " + out +
         "\n  return %0 : " + out + "\n}\n";
}

// The spec's definition, directly: every output element as a sum over the
// window of the padded, dilated input, in double.
std::vector<double> Naive(const Conv2d& c, const std::vector<float>& x,
                          const std::vector<float>& k) {
  const int64_t oh = c.oh(), ow = c.ow(), ipg = c.in_per_group();
  const int64_t groups = c.feature_groups * c.batch_groups, opg = c.o / groups;
  const int64_t nb = c.n / c.batch_groups;
  std::vector<double> out(nb * oh * ow * c.o, 0.0);
  auto coord = [](int64_t o, int64_t kk, int64_t size, int64_t s, int64_t lo, int64_t l,
                  int64_t r, int64_t kn, bool rev, int64_t* at) {
    const int64_t p = o * s + (rev ? kn - 1 - kk : kk) * r - lo;
    if (p < 0 || p % l != 0 || p / l >= size) return false;
    *at = p / l;
    return true;
  };
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx)
        for (int64_t o = 0; o < c.o; ++o) {
          const int64_t g = o / opg;
          const int64_t in_n = c.batch_groups > 1 ? g * nb + n : n;
          const int64_t in_c0 = c.feature_groups > 1 ? g * ipg : 0;
          double s = 0;
          for (int64_t ky = 0; ky < c.kh; ++ky)
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              int64_t iy, ix;
              if (!coord(y, ky, c.h, c.sy, c.pt, c.ly, c.ry, c.kh, c.rev_y, &iy) ||
                  !coord(xx, kx, c.w, c.sx, c.pl, c.lx, c.rx, c.kw, c.rev_x, &ix)) {
                continue;
              }
              for (int64_t i = 0; i < ipg; ++i) {
                s += double{x[((in_n * c.h + iy) * c.w + ix) * c.c + in_c0 + i]} *
                     k[((ky * c.kw + kx) * ipg + i) * c.o + o];
              }
            }
          out[((n * oh + y) * ow + xx) * c.o + o] = s;
        }
  return out;
}

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

void ExpectMatchesNaive(const Conv2d& c) {
  std::vector<float> x = Random(c.n * c.h * c.w * c.c, 5);
  std::vector<float> k = Random(c.kh * c.kw * c.in_per_group() * c.o, 6);
  auto r = RunMain(Program(c), {MakeTensor(ElementType::kF32, {c.n, c.h, c.w, c.c}, x),
                                MakeTensor(ElementType::kF32, {c.kh, c.kw, c.in_per_group(), c.o}, k)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> got = Values<float>((*r)[0]);
  std::vector<double> want = Naive(c, x, k);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
}

TEST(ConvolutionTest, StridesPaddingAndDilations) {
  ExpectMatchesNaive({.n = 2, .h = 7, .w = 6, .c = 3, .kh = 3, .kw = 2, .o = 4, .sy = 2,
                      .sx = 1, .pt = 1, .pb = 2, .pl = 0, .pr = 1, .ry = 2});
}

TEST(ConvolutionTest, LhsDilationNegativePaddingAndReversal) {
  ExpectMatchesNaive({.n = 1, .h = 5, .w = 5, .c = 2, .kh = 3, .kw = 3, .o = 3, .pt = -1,
                      .pb = 2, .pl = 2, .pr = 0, .ly = 2, .lx = 3, .rev_y = true});
}

TEST(ConvolutionTest, FeatureAndBatchGroups) {
  ExpectMatchesNaive({.n = 2, .h = 4, .w = 5, .c = 6, .kh = 2, .kw = 2, .o = 9,
                      .feature_groups = 3});
  ExpectMatchesNaive({.n = 4, .h = 4, .w = 3, .c = 3, .kh = 2, .kw = 1, .o = 4,
                      .batch_groups = 2});
}

// The same convolution in NCHW / OIHW / NCHW layout gives the transposed
// result of the NHWC one.
TEST(ConvolutionTest, DimensionNumbersPermuteLayouts) {
  const char* text = R"(
func.func @main(%x: tensor<1x2x3x3xf32>, %k: tensor<2x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1],
      window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
      : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
)";
  std::vector<float> x(18), k(16);
  for (int i = 0; i < 18; ++i) x[i] = static_cast<float>(i);
  for (int i = 0; i < 16; ++i) k[i] = static_cast<float>(i % 3 - 1);
  auto r = RunMain(text, {MakeTensor(ElementType::kF32, {1, 2, 3, 3}, x),
                          MakeTensor(ElementType::kF32, {2, 2, 2, 2}, k)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> got = Values<float>((*r)[0]);
  for (int o = 0; o < 2; ++o)
    for (int y = 0; y < 2; ++y)
      for (int xx = 0; xx < 2; ++xx) {
        float want = 0;
        for (int i = 0; i < 2; ++i)
          for (int ky = 0; ky < 2; ++ky)
            for (int kx = 0; kx < 2; ++kx)
              want += x[(i * 3 + y + ky) * 3 + xx + kx] * k[((o * 2 + i) * 2 + ky) * 2 + kx];
        EXPECT_EQ(got[(o * 2 + y) * 2 + xx], want);
      }
}

TEST(ConvolutionTest, TpuPrecisionChangesF32Results) {
  Conv2d c{.n = 1, .h = 6, .w = 6, .c = 8, .kh = 3, .kw = 3, .o = 4};
  std::vector<float> x = Random(c.n * c.h * c.w * c.c, 7);
  std::vector<float> k = Random(c.kh * c.kw * c.c * c.o, 8);
  std::vector<double> want = Naive(c, x, k);
  double err[2];
  const char* precision[2] = {"DEFAULT", "HIGHEST"};
  for (int p = 0; p < 2; ++p) {
    auto r = RunMain(Program(c, precision[p]),
                     {MakeTensor(ElementType::kF32, {c.n, c.h, c.w, c.c}, x),
                      MakeTensor(ElementType::kF32, {c.kh, c.kw, c.c, c.o}, k)},
                     {.numerics = Numerics::kTpu});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<float> got = Values<float>((*r)[0]);
    err[p] = 0;
    for (size_t i = 0; i < got.size(); ++i) err[p] = std::max(err[p], std::fabs(got[i] - want[i]));
  }
  EXPECT_GT(err[0], 1e-3);  // bf16 inputs
  EXPECT_LT(err[1], 1e-5);  // ~f32
}

TEST(ConvolutionTest, ShapeRuleErrors) {
  Conv2d c{.n = 1, .h = 4, .w = 4, .c = 3, .kh = 2, .kw = 2, .o = 2};
  EXPECT_TRUE(testing::VerifyText(Program(c)).ok());
  std::string bad = Program(c);
  bad.replace(bad.find("2x2x3x2xf32"), 11, "2x2x4x2xf32");  // input features 3 vs 4
  EXPECT_EQ(testing::VerifyText(bad).code(), StatusCode::kInvalidArgument);
  std::string wrong_result = Program(c);
  for (size_t at; (at = wrong_result.find("1x3x3x2xf32")) != std::string::npos;) {
    wrong_result.replace(at, 11, "1x4x4x2xf32");
  }
  EXPECT_EQ(testing::VerifyText(wrong_result).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
