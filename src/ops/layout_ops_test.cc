#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::RunAndRead;
using testing::VerifyMlir;

TEST(BroadcastInDimTest, ExpandsAndPermutesDims) {
  // The spec's example: [[1, 2, 3]] into 2x3x2 along dims (2, 1).
  auto r = RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<2x3x2xi32> {
      %x = stablehlo.constant dense<[[1, 2, 3]]> : tensor<1x3xi32>
      %r = stablehlo.broadcast_in_dim %x, dims = [2, 1] : (tensor<1x3xi32>) -> tensor<2x3x2xi32>
      return %r : tensor<2x3x2xi32>
    })");
  EXPECT_EQ(r, (std::vector<int32_t>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST(BroadcastInDimTest, RejectsMismatchedDim) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<3x3xf32> {
      %r = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<2xf32>) -> tensor<3x3xf32>
      return %r : tensor<3x3xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
}

TEST(TransposeTest, PermutesAllDims) {
  auto r = RunAndRead<int16_t>(R"(
    func.func @main() -> tensor<2x3x2xi16> {
      %x = stablehlo.constant dense<[[[1,2],[3,4],[5,6]],[[7,8],[9,10],[11,12]]]> : tensor<2x3x2xi16>
      %r = stablehlo.transpose %x, dims = [2, 1, 0] : (tensor<2x3x2xi16>) -> tensor<2x3x2xi16>
      return %r : tensor<2x3x2xi16>
    })");
  EXPECT_EQ(r, (std::vector<int16_t>{1, 7, 3, 9, 5, 11, 2, 8, 4, 10, 6, 12}));
}

TEST(TransposeTest, MovesSixteenByteElements) {
  auto r = RunAndRead<double>(R"(
    func.func @main() -> tensor<2x2xcomplex<f64>> {
      %x = stablehlo.constant dense<[[(1.0, 2.0), (3.0, 4.0)], [(5.0, 6.0), (7.0, 8.0)]]> : tensor<2x2xcomplex<f64>>
      %r = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x2xcomplex<f64>>) -> tensor<2x2xcomplex<f64>>
      return %r : tensor<2x2xcomplex<f64>>
    })");
  EXPECT_EQ(r, (std::vector<double>{1, 2, 5, 6, 3, 4, 7, 8}));
}

TEST(TransposeTest, RejectsNonPermutation) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
      %r = stablehlo.transpose %x, dims = [1, 1] : (tensor<2x3xf32>) -> tensor<3x2xf32>
      return %r : tensor<3x2xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

TEST(ReverseTest, ReversesChosenDims) {
  auto r = RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<3x2xi32> {
      %x = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>
      %r = stablehlo.reverse %x, dims = [0, 1] : tensor<3x2xi32>
      return %r : tensor<3x2xi32>
    })");
  EXPECT_EQ(r, (std::vector<int32_t>{6, 5, 4, 3, 2, 1}));
}

TEST(ReshapeTest, KeepsRowMajorOrder) {
  auto r = RunAndRead<uint8_t>(R"(
    func.func @main() -> tensor<3x2xui8> {
      %x = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xui8>
      %r = stablehlo.reshape %x : (tensor<2x3xui8>) -> tensor<3x2xui8>
      return %r : tensor<3x2xui8>
    })");
  EXPECT_EQ(r, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(VerifyMlir(R"(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<5xf32> {
      %r = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<5xf32>
      return %r : tensor<5xf32>
    })").code(), StatusCode::kInvalidArgument);
}

TEST(ConcatenateTest, JoinsAlongInnerDim) {
  auto r = RunAndRead<int64_t>(R"(
    func.func @main() -> tensor<2x3xi64> {
      %a = stablehlo.constant dense<[[1], [4]]> : tensor<2x1xi64>
      %b = stablehlo.constant dense<[[2, 3], [5, 6]]> : tensor<2x2xi64>
      %r = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x1xi64>, tensor<2x2xi64>) -> tensor<2x3xi64>
      return %r : tensor<2x3xi64>
    })");
  EXPECT_EQ(r, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(ConcatenateTest, RejectsMismatchOutsideDim) {
  Status st = VerifyMlir(R"(
    func.func @main(%a: tensor<2x1xf32>, %b: tensor<3x1xf32>) -> tensor<2x2xf32> {
      %r = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x1xf32>, tensor<3x1xf32>) -> tensor<2x2xf32>
      return %r : tensor<2x2xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

TEST(SliceTest, TakesStridedBox) {
  auto r = RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<2x2xi32> {
      %x = stablehlo.constant dense<[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14]]> : tensor<3x5xi32>
      %r = stablehlo.slice %x [0:3:2, 1:5:2] : (tensor<3x5xi32>) -> tensor<2x2xi32>
      return %r : tensor<2x2xi32>
    })");
  EXPECT_EQ(r, (std::vector<int32_t>{1, 3, 11, 13}));
}

TEST(SliceTest, RejectsLimitPastEnd) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<3xf32>) -> tensor<2xf32> {
      %r = stablehlo.slice %x [2:4] : (tensor<3xf32>) -> tensor<2xf32>
      return %r : tensor<2xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

TEST(PadTest, EdgeAndInteriorPadding) {
  // The spec's example.
  auto r = RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<5x9xi32> {
      %x = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
      %p = stablehlo.constant dense<0> : tensor<i32>
      %r = stablehlo.pad %x, %p, low = [0, 1], high = [2, 1], interior = [1, 2] : (tensor<2x3xi32>, tensor<i32>) -> tensor<5x9xi32>
      return %r : tensor<5x9xi32>
    })");
  EXPECT_EQ(r, (std::vector<int32_t>{0, 1, 0, 0, 2, 0, 0, 3, 0,  //
                                     0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                     0, 4, 0, 0, 5, 0, 0, 6, 0,  //
                                     0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                     0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(PadTest, NegativeEdgesCutTheInteriorPaddedOperand) {
  // Interior-padded [1, p, 2, p, 3] (p = 9), then one element cut from the
  // low end and two from the high end: [p, 2].
  auto r = RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<2xi32> {
      %x = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
      %p = stablehlo.constant dense<9> : tensor<i32>
      %r = stablehlo.pad %x, %p, low = [-1], high = [-2], interior = [1] : (tensor<3xi32>, tensor<i32>) -> tensor<2xi32>
      return %r : tensor<2xi32>
    })");
  EXPECT_EQ(r, (std::vector<int32_t>{9, 2}));
}

TEST(PadTest, RejectsWrongResultShape) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<3xf32>, %p: tensor<f32>) -> tensor<4xf32> {
      %r = stablehlo.pad %x, %p, low = [1], high = [1], interior = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<4xf32>
      return %r : tensor<4xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

TEST(IotaTest, CountsAlongDimension) {
  auto r = RunAndRead<uint16_t>(R"(
    func.func @main() -> tensor<2x3xbf16> {
      %r = stablehlo.iota dim = 1 : tensor<2x3xbf16>
      return %r : tensor<2x3xbf16>
    })");
  // bf16 bits of 0, 1, 2.
  EXPECT_EQ(r, (std::vector<uint16_t>{0x0000, 0x3F80, 0x4000, 0x0000, 0x3F80, 0x4000}));
  auto c = RunAndRead<float>(R"(
    func.func @main() -> tensor<3xcomplex<f32>> {
      %r = stablehlo.iota dim = 0 : tensor<3xcomplex<f32>>
      return %r : tensor<3xcomplex<f32>>
    })");
  EXPECT_EQ(c, (std::vector<float>{0, 0, 1, 0, 2, 0}));
}

TEST(IotaTest, WrapsNarrowIntegers) {
  // si4 wraps: 0..7, then -8.
  auto r = RunAndRead<int8_t>(R"(
    func.func @main() -> tensor<9xi4> {
      %r = stablehlo.iota dim = 0 : tensor<9xi4>
      return %r : tensor<9xi4>
    })");
  EXPECT_EQ(r, (std::vector<int8_t>{0, 1, 2, 3, 4, 5, 6, 7, -8}));
}

TEST(IotaTest, RejectsBooleanAndBadDimension) {
  EXPECT_EQ(VerifyMlir(R"(
    func.func @main() -> tensor<3xi1> {
      %r = stablehlo.iota dim = 0 : tensor<3xi1>
      return %r : tensor<3xi1>
    })").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyMlir(R"(
    func.func @main() -> tensor<3xf32> {
      %r = stablehlo.iota dim = 1 : tensor<3xf32>
      return %r : tensor<3xf32>
    })").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
