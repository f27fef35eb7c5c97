#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::RunAndRead;
using testing::VerifyMlir;

// The spec's reduce_window example with `body` on %a, %b.
std::string ReduceWindowProgram(const std::string& body) {
  return R"(
    func.func @main() -> tensor<2x2xi64> {
      %x = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
      %c = stablehlo.constant dense<0> : tensor<i64>
      %r = "stablehlo.reduce_window"(%x, %c) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        )" + body + R"(
      }) {
        window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 4, 1>,
        base_dilations = array<i64: 2, 1>, window_dilations = array<i64: 3, 1>,
        padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>
      } : (tensor<3x2xi64>, tensor<i64>) -> tensor<2x2xi64>
      return %r : tensor<2x2xi64>
    })";
}

TEST(ReduceWindowTest, DilationsStridesAndPadding) {
  const std::vector<int64_t> expected = {0, 0, 3, 4};
  EXPECT_EQ(RunAndRead<int64_t>(ReduceWindowProgram(
                "%s = stablehlo.add %a, %b : tensor<i64>\nstablehlo.return %s : tensor<i64>")),
            expected);
  // Region path: a + b written as a - (-b).
  EXPECT_EQ(RunAndRead<int64_t>(ReduceWindowProgram(
                "%n = stablehlo.negate %b : tensor<i64>\n"
                "%s = stablehlo.subtract %a, %n : tensor<i64>\n"
                "stablehlo.return %s : tensor<i64>")),
            expected);
}

TEST(ReduceWindowTest, MaxPoolWithDefaults) {
  // 2x2 windows, stride 2 on a 4x4 input; absent strides etc. default.
  auto r = RunAndRead<float>(R"(
    func.func @main() -> tensor<3x3xf32> {
      %x = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]> : tensor<4x4xf32>
      %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %r = "stablehlo.reduce_window"(%x, %c) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %m = stablehlo.maximum %a, %b : tensor<f32>
        stablehlo.return %m : tensor<f32>
      }) {window_dimensions = array<i64: 2, 2>} : (tensor<4x4xf32>, tensor<f32>) -> tensor<3x3xf32>
      return %r : tensor<3x3xf32>
    })");
  EXPECT_EQ(r, (std::vector<float>{6, 7, 8, 10, 11, 12, 14, 15, 16}));
}

TEST(ReduceWindowTest, RejectsWrongResultShape) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<4xf32>, %c: tensor<f32>) -> tensor<4xf32> {
      %r = "stablehlo.reduce_window"(%x, %c) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %m = stablehlo.maximum %a, %b : tensor<f32>
        stablehlo.return %m : tensor<f32>
      }) {window_dimensions = array<i64: 2>} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
      return %r : tensor<4xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

// The spec's select_and_scatter example with select `cmp` on %a, %b.
std::string SelectAndScatterProgram(const std::string& select) {
  return R"(
    func.func @main() -> tensor<4x2xi64> {
      %x = stablehlo.constant dense<[[1, 5], [2, 5], [3, 6], [4, 4]]> : tensor<4x2xi64>
      %s = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi64>
      %c = stablehlo.constant dense<0> : tensor<i64>
      %r = "stablehlo.select_and_scatter"(%x, %s, %c) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        )" + select + R"(
      }, {
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %t = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %t : tensor<i64>
      }) {
        window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
        padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>
      } : (tensor<4x2xi64>, tensor<2x2xi64>, tensor<i64>) -> tensor<4x2xi64>
      return %r : tensor<4x2xi64>
    })";
}

TEST(SelectAndScatterTest, ScattersToSelectedElements) {
  const std::vector<int64_t> expected = {0, 0, 0, 0, 5, 14, 7, 0};
  EXPECT_EQ(RunAndRead<int64_t>(SelectAndScatterProgram(
                "%p = stablehlo.compare GE, %a, %b : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
                "stablehlo.return %p : tensor<i1>")),
            expected);
  // Region path: GE written as not(LT).
  EXPECT_EQ(RunAndRead<int64_t>(SelectAndScatterProgram(
                "%p = stablehlo.compare LT, %a, %b : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
                "%q = stablehlo.not %p : tensor<i1>\n"
                "stablehlo.return %q : tensor<i1>")),
            expected);
}

}  // namespace
}  // namespace tpusim::ops
