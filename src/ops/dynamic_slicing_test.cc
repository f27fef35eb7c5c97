#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::RunAndRead;
using testing::VerifyMlir;

TEST(DynamicSliceTest, ClampsStartIndices) {
  // Starts (-1, 3) clamp to (0, 2) so that the 2x2 box fits.
  auto r = RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<2x2xi32> {
      %x = stablehlo.constant dense<[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]]> : tensor<4x4xi32>
      %i = stablehlo.constant dense<-1> : tensor<i64>
      %j = stablehlo.constant dense<3> : tensor<i64>
      %r = stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 2] : (tensor<4x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>
      return %r : tensor<2x2xi32>
    })");
  EXPECT_EQ(r, (std::vector<int32_t>{1, 1, 1, 1}));
}

TEST(DynamicSliceTest, UnsignedStartsPastInt64MaxClampToTheEnd) {
  auto r = RunAndRead<int8_t>(R"(
    func.func @main() -> tensor<2xi8> {
      %x = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi8>
      %i = stablehlo.constant dense<18446744073709551615> : tensor<ui64>
      %r = stablehlo.dynamic_slice %x, %i, sizes = [2] : (tensor<4xi8>, tensor<ui64>) -> tensor<2xi8>
      return %r : tensor<2xi8>
    })");
  EXPECT_EQ(r, (std::vector<int8_t>{3, 4}));
}

TEST(DynamicSliceTest, RejectsWrongIndexCount) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<4x4xf32>, %i: tensor<i32>) -> tensor<2x2xf32> {
      %r = "stablehlo.dynamic_slice"(%x, %i) {slice_sizes = array<i64: 2, 2>} : (tensor<4x4xf32>, tensor<i32>) -> tensor<2x2xf32>
      return %r : tensor<2x2xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

TEST(DynamicUpdateSliceTest, ClampsAndKeepsTheRest) {
  auto r = RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<3x3xi32> {
      %x = stablehlo.constant dense<0> : tensor<3x3xi32>
      %u = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
      %i = stablehlo.constant dense<5> : tensor<i32>
      %j = stablehlo.constant dense<0> : tensor<i32>
      %r = stablehlo.dynamic_update_slice %x, %u, %i, %j : (tensor<3x3xi32>, tensor<2x2xi32>, tensor<i32>, tensor<i32>) -> tensor<3x3xi32>
      return %r : tensor<3x3xi32>
    })");
  EXPECT_EQ(r, (std::vector<int32_t>{0, 0, 0, 1, 2, 0, 3, 4, 0}));
}

TEST(DynamicUpdateSliceTest, RejectsUpdateLargerThanOperand) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<2xf32>, %u: tensor<3xf32>, %i: tensor<i32>) -> tensor<2xf32> {
      %r = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<2xf32>, tensor<3xf32>, tensor<i32>) -> tensor<2xf32>
      return %r : tensor<2xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
