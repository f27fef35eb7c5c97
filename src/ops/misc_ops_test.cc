#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunAndRead;
using testing::RunMlir;
using testing::VerifyMlir;

TEST(TupleTest, BuildsAndTakesApart) {
  auto r = RunAndRead<int64_t>(R"(
    func.func @main() -> tensor<i64> {
      %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
      %b = stablehlo.constant dense<3> : tensor<i64>
      %inner = stablehlo.tuple %b : tuple<tensor<i64>>
      %t = stablehlo.tuple %a, %inner : tuple<tensor<2xf64>, tuple<tensor<i64>>>
      %e = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf64>, tuple<tensor<i64>>>) -> tuple<tensor<i64>>
      %r = stablehlo.get_tuple_element %e[0] : (tuple<tensor<i64>>) -> tensor<i64>
      return %r : tensor<i64>
    })");
  EXPECT_EQ(r, (std::vector<int64_t>{3}));
}

TEST(TupleTest, RejectsIndexOutOfRange) {
  Status st = VerifyMlir(R"(
    func.func @main(%t: tuple<tensor<i64>>) -> tensor<i64> {
      %r = stablehlo.get_tuple_element %t[1] : (tuple<tensor<i64>>) -> tensor<i64>
      return %r : tensor<i64>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

TEST(OptimizationBarrierTest, IsTheIdentity) {
  auto r = RunMlir(R"(
    func.func @main() -> (tensor<f32>, tensor<2xi8>) {
      %a = stablehlo.constant dense<1.5> : tensor<f32>
      %b = stablehlo.constant dense<[7, 8]> : tensor<2xi8>
      %r:2 = stablehlo.optimization_barrier %a, %b : tensor<f32>, tensor<2xi8>
      return %r#0, %r#1 : tensor<f32>, tensor<2xi8>
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<float>((*r)[0]), (std::vector<float>{1.5f}));
  EXPECT_EQ(Read<int8_t>((*r)[1]), (std::vector<int8_t>{7, 8}));
}

TEST(GetDimensionSizeTest, ReturnsDimAsI32) {
  EXPECT_EQ(RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<i32> {
      %x = stablehlo.constant dense<0.0> : tensor<2x5xf32>
      %r = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x5xf32>) -> tensor<i32>
      return %r : tensor<i32>
    })"),
            (std::vector<int32_t>{5}));
}

TEST(DynamicOpsTest, BroadcastChecksRuntimeShape) {
  const char* program = R"(
    func.func @main() -> tensor<2x3xi32> {
      %x = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
      %s = stablehlo.constant dense<[2, SIZE]> : tensor<2xi64>
      %r = "stablehlo.dynamic_broadcast_in_dim"(%x, %s) {broadcast_dimensions = array<i64: 1>} : (tensor<3xi32>, tensor<2xi64>) -> tensor<2x3xi32>
      return %r : tensor<2x3xi32>
    })";
  std::string ok = program, bad = program;
  ok.replace(ok.find("SIZE"), 4, "3");
  bad.replace(bad.find("SIZE"), 4, "4");
  EXPECT_EQ(RunAndRead<int32_t>(ok), (std::vector<int32_t>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(RunMlir(bad).status().code(), StatusCode::kInvalidArgument);
}

TEST(DynamicOpsTest, IotaPadAndReshape) {
  EXPECT_EQ(RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<2x2xi32> {
      %s = stablehlo.constant dense<[2, 2]> : tensor<2xi32>
      %r = stablehlo.dynamic_iota %s, dim = 0 : (tensor<2xi32>) -> tensor<2x2xi32>
      return %r : tensor<2x2xi32>
    })"),
            (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<4xi32> {
      %x = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
      %p = stablehlo.constant dense<0> : tensor<i32>
      %lo = stablehlo.constant dense<[1]> : tensor<1xi64>
      %hi = stablehlo.constant dense<[0]> : tensor<1xi64>
      %in = stablehlo.constant dense<[1]> : tensor<1xi64>
      %r = stablehlo.dynamic_pad %x, %p, %lo, %hi, %in : (tensor<2xi32>, tensor<i32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi32>
      return %r : tensor<4xi32>
    })"),
            (std::vector<int32_t>{0, 1, 0, 2}));
  EXPECT_EQ(RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<2x1xi32> {
      %x = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
      %s = stablehlo.constant dense<[2, 1]> : tensor<2xi32>
      %r = stablehlo.dynamic_reshape %x, %s : (tensor<2xi32>, tensor<2xi32>) -> tensor<2x1xi32>
      return %r : tensor<2x1xi32>
    })"),
            (std::vector<int32_t>{1, 2}));
}

}  // namespace
}  // namespace tpusim::ops
