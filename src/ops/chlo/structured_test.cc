#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunMlir;
using testing::VerifyMlir;

TEST(TopKTest, LargestFirstTiesByLowerIndex) {
  auto r = RunMlir(R"(
    func.func @main() -> (tensor<2x3xf32>, tensor<2x3xi32>) {
      %x = stablehlo.constant dense<[[1.0, 5.0, 5.0, -2.0], [0x7FC00000, 0.0, -0.0, 3.0]]> : tensor<2x4xf32>
      %v, %i = chlo.top_k(%x, k = 3) : tensor<2x4xf32> -> (tensor<2x3xf32>, tensor<2x3xi32>)
      return %v, %i : tensor<2x3xf32>, tensor<2x3xi32>
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // NaN ranks above everything, +0 above -0.
  std::vector<uint32_t> values = Read<uint32_t>((*r)[0]);
  EXPECT_EQ(values, (std::vector<uint32_t>{0x40A00000, 0x40A00000, 0x3F800000, 0x7FC00000,
                                           0x40400000, 0x00000000}));
  EXPECT_EQ(Read<int32_t>((*r)[1]), (std::vector<int32_t>{1, 2, 0, 0, 3, 1}));
}

TEST(TopKTest, RejectsKPastRow) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<3xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
      %v, %i = chlo.top_k(%x, k = 4) : tensor<3xf32> -> (tensor<4xf32>, tensor<4xi32>)
      return %v, %i : tensor<4xf32>, tensor<4xi32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

TEST(ScanTest, CumulativeSumWithCarry) {
  auto r = RunMlir(R"(
    func.func @main() -> (tensor<2x3xi32>, tensor<2xi32>) {
      %x = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
      %c = stablehlo.constant dense<0> : tensor<2xi32>
      %r:2 = chlo.scan(%x) inits(%c) dimension=1 {
      ^bb0(%a: tensor<2xi32>, %b: tensor<2xi32>):
        %s = stablehlo.add %a, %b : tensor<2xi32>
        stablehlo.return %s, %s : tensor<2xi32>, tensor<2xi32>
      } : (tensor<2x3xi32>, tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2xi32>)
      return %r#0, %r#1 : tensor<2x3xi32>, tensor<2xi32>
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<int32_t>((*r)[0]), (std::vector<int32_t>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(Read<int32_t>((*r)[1]), (std::vector<int32_t>{6, 15}));
}

TEST(ScanTest, RejectsBodyOfWrongType) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<3xi32>, %c: tensor<i32>) -> (tensor<3xi32>, tensor<i32>) {
      %r:2 = chlo.scan(%x) inits(%c) dimension=0 {
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        stablehlo.return %a : tensor<i32>
      } : (tensor<3xi32>, tensor<i32>) -> (tensor<3xi32>, tensor<i32>)
      return %r#0, %r#1 : tensor<3xi32>, tensor<i32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
