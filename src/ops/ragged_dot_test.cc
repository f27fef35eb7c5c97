#include <gtest/gtest.h>

#include <string>

#include "ops/testing/dense_test_util.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;
using testing::MakeTensor;
using testing::RunMain;
using testing::Values;

std::string RaggedProgram(const std::string& lhs, const std::string& rhs,
                          const std::string& sizes, const std::string& out,
                          const std::string& dims) {
  return "func.func @main(%a: " + lhs + ", %b: " + rhs + ", %g: " + sizes + ") -> " + out +
         " {\n  %0 = \"chlo.ragged_dot\"(%a, %b, %g) {ragged_dot_dimension_numbers = "
         "#chlo.ragged_dot<" + dims + ">} : (" + lhs + ", " + rhs + ", " + sizes + ") -> " + out +
         "\n  return %0 : " + out + "\n}\n";
}

std::vector<float> Iota(int n, float scale = 1) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1) * scale;
  return v;
}

// Mode 1: rows [0, 2) use rhs group 0, [2, 3) group 1, row 3 none (zero).
TEST(RaggedDotTest, RaggedRowsPickTheirGroup) {
  const std::string text = RaggedProgram(
      "tensor<4x2xf32>", "tensor<2x2x3xf32>", "tensor<2xi32>", "tensor<4x3xf32>",
      "lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
      "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], "
      "lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]");
  std::vector<float> a = Iota(8), b = Iota(12, 0.5f);
  auto r = RunMain(text, {MakeTensor(ElementType::kF32, {4, 2}, a),
                          MakeTensor(ElementType::kF32, {2, 2, 3}, b),
                          MakeTensor<int32_t>(ElementType::kSI32, {2}, {2, 1})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> got = Values<float>((*r)[0]);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) {
      const int g = i < 2 ? 0 : 1;
      const float want = i == 3 ? 0 : a[i * 2] * b[g * 6 + j] + a[i * 2 + 1] * b[g * 6 + 3 + j];
      EXPECT_EQ(got[i * 3 + j], want) << i << j;
    }
}

// Mode 1 with the ragged dimension after another free dimension: the
// result keeps the lhs's dimension order.
TEST(RaggedDotTest, RaggedDimensionNotOutermost) {
  const std::string text = RaggedProgram(
      "tensor<2x3x1xf32>", "tensor<3x1x2xf32>", "tensor<3xi64>", "tensor<2x3x2xf32>",
      "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1], "
      "lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]");
  std::vector<float> a = Iota(6), b = {1, 10, 2, 20, 3, 30};
  auto r = RunMain(text, {MakeTensor(ElementType::kF32, {2, 3, 1}, a),
                          MakeTensor(ElementType::kF32, {3, 1, 2}, b),
                          MakeTensor<int64_t>(ElementType::kSI64, {3}, {1, 1, 1})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> got = Values<float>((*r)[0]);
  for (int i = 0; i < 2; ++i)
    for (int g = 0; g < 3; ++g)
      for (int j = 0; j < 2; ++j) EXPECT_EQ(got[(i * 3 + g) * 2 + j], a[i * 3 + g] * b[g * 2 + j]);
}

// Mode 2: each group contracts its own slice of k, into a leading group dim.
TEST(RaggedDotTest, RaggedContractingDimension) {
  const std::string text = RaggedProgram(
      "tensor<2x4xf32>", "tensor<4x1xf32>", "tensor<2xi32>", "tensor<2x2x1xf32>",
      "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0], "
      "lhs_ragged_dimensions = [1]");
  auto r = RunMain(text, {MakeTensor(ElementType::kF32, {2, 4}, Iota(8)),
                          MakeTensor<float>(ElementType::kF32, {4, 1}, {1, 1, 1, 1}),
                          MakeTensor<int32_t>(ElementType::kSI32, {2}, {3, 1})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Group 0 sums k = 0..2, group 1 k = 3.
  EXPECT_EQ(Values<float>((*r)[0]), (std::vector<float>{1 + 2 + 3, 5 + 6 + 7, 4, 8}));
}

// Mode 3: a batched product; batches past the groups are zero.
TEST(RaggedDotTest, RaggedBatchDimension) {
  const std::string text = RaggedProgram(
      "tensor<3x1x2xf32>", "tensor<3x2x1xf32>", "tensor<2xi32>", "tensor<3x1x1xf32>",
      "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
      "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1], "
      "lhs_ragged_dimensions = [0]");
  auto r = RunMain(text, {MakeTensor(ElementType::kF32, {3, 1, 2}, Iota(6)),
                          MakeTensor<float>(ElementType::kF32, {3, 2, 1}, {1, 1, 1, 1, 1, 1}),
                          MakeTensor<int32_t>(ElementType::kSI32, {2}, {1, 1})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Values<float>((*r)[0]), (std::vector<float>{3, 7, 0}));
}

TEST(RaggedDotTest, Mode1NeedsAGroupDimension) {
  const std::string text = RaggedProgram(
      "tensor<4x2xf32>", "tensor<2x3xf32>", "tensor<2xi32>", "tensor<4x3xf32>",
      "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0], "
      "lhs_ragged_dimensions = [0]");
  EXPECT_EQ(testing::VerifyText(text).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
