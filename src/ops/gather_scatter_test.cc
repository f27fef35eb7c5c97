#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::RunAndRead;
using testing::RunMlir;
using testing::VerifyMlir;

TEST(GatherTest, BatchingDimsAndClampedStarts) {
  // The spec's example; start [0, 9] clamps to [0, 2].
  auto r = RunAndRead<int32_t>(R"(
    func.func @main() -> tensor<2x2x3x2x2xi32> {
      %operand = stablehlo.constant dense<[[[[1, 2], [3, 4], [5, 6], [7, 8]], [[9, 10],[11, 12], [13, 14], [15, 16]], [[17, 18], [19, 20], [21, 22], [23, 24]]], [[[25, 26], [27, 28], [29, 30], [31, 32]], [[33, 34], [35, 36], [37, 38], [39, 40]], [[41, 42], [43, 44], [45, 46], [47, 48]]]]> : tensor<2x3x4x2xi32>
      %start = stablehlo.constant dense<[[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]], [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]]> : tensor<2x2x3x2xi64>
      %r = "stablehlo.gather"(%operand, %start) {
        dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1],
          operand_batching_dims = [0], start_indices_batching_dims = [1],
          start_index_map = [2, 1], index_vector_dim = 3>,
        slice_sizes = array<i64: 1, 1, 2, 2>, indices_are_sorted = false
      } : (tensor<2x3x4x2xi32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xi32>
      return %r : tensor<2x2x3x2x2xi32>
    })");
  EXPECT_EQ(r, (std::vector<int32_t>{
                   1,  2,  3,  4,  3,  4,  5,  6,  13, 14, 15, 16,  //
                   33, 34, 35, 36, 35, 36, 37, 38, 41, 42, 43, 44,  //
                   1,  2,  3,  4,  13, 14, 15, 16, 21, 22, 23, 24,  //
                   43, 44, 45, 46, 33, 34, 35, 36, 27, 28, 29, 30}));
}

TEST(GatherTest, ScalarIndicesWithTrailingIndexVectorDim) {
  // x[idx] for idx = [2, 0, 2]: index_vector_dim = rank(indices).
  auto r = RunAndRead<float>(R"(
    func.func @main() -> tensor<3x2xf32> {
      %x = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
      %i = stablehlo.constant dense<[2, 0, 2]> : tensor<3xi32>
      %r = "stablehlo.gather"(%x, %i) {
        dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
          start_index_map = [0], index_vector_dim = 1>,
        slice_sizes = array<i64: 1, 2>
      } : (tensor<3x2xf32>, tensor<3xi32>) -> tensor<3x2xf32>
      return %r : tensor<3x2xf32>
    })");
  EXPECT_EQ(r, (std::vector<float>{5, 6, 1, 2, 5, 6}));
}

TEST(GatherTest, RejectsWrongResultShape) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<3x2xf32>, %i: tensor<3xi32>) -> tensor<3x3xf32> {
      %r = "stablehlo.gather"(%x, %i) {
        dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
          start_index_map = [0], index_vector_dim = 1>,
        slice_sizes = array<i64: 1, 2>
      } : (tensor<3x2xf32>, tensor<3xi32>) -> tensor<3x3xf32>
      return %r : tensor<3x3xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

TEST(GatherTest, EmptyOperandWithNonEmptyResultIsAnError) {
  auto r = RunMlir(R"(
    func.func @main() -> tensor<2x3xf32> {
      %x = stablehlo.constant dense<> : tensor<0x3xf32>
      %i = stablehlo.constant dense<[[0], [0]]> : tensor<2x1xi32>
      %r = "stablehlo.gather"(%x, %i) {
        dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
          start_index_map = [0], index_vector_dim = 1>,
        slice_sizes = array<i64: 0, 3>
      } : (tensor<0x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
      return %r : tensor<2x3xf32>
    })");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
}

TEST(DynamicGatherTest, ChecksRuntimeSliceSizes) {
  const char* program = R"(
    func.func @main() -> tensor<2x2xi64> {
      %x = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
      %i = stablehlo.constant dense<[1, 0]> : tensor<2xi64>
      %s = stablehlo.constant dense<[1, SIZE]> : tensor<2xi64>
      %r = "stablehlo.dynamic_gather"(%x, %i, %s) {
        dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
          start_index_map = [0], index_vector_dim = 1>
      } : (tensor<3x2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xi64>
      return %r : tensor<2x2xi64>
    })";
  std::string ok = program, bad = program;
  ok.replace(ok.find("SIZE"), 4, "2");
  bad.replace(bad.find("SIZE"), 4, "1");
  EXPECT_EQ(RunAndRead<int64_t>(ok), (std::vector<int64_t>{3, 4, 1, 2}));
  EXPECT_EQ(RunMlir(bad).status().code(), StatusCode::kInvalidArgument);
}

// scatter of updates [10, 20, 30] to rows [1, 1, 5] of a 3-vector: the
// out-of-bounds update is skipped.
std::string ScatterProgram(const std::string& body) {
  return R"(
    func.func @main() -> tensor<3xi32> {
      %x = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
      %i = stablehlo.constant dense<[[1], [1], [5]]> : tensor<3x1xi32>
      %u = stablehlo.constant dense<[10, 20, 30]> : tensor<3xi32>
      %r = "stablehlo.scatter"(%x, %i, %u) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        )" + body + R"(
      }) {
        scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],
          scatter_dims_to_operand_dims = [0], index_vector_dim = 1>
      } : (tensor<3xi32>, tensor<3x1xi32>, tensor<3xi32>) -> tensor<3xi32>
      return %r : tensor<3xi32>
    })";
}

TEST(ScatterTest, AddSkipsOutOfBounds) {
  // The typed fast path (one add) and the region path (add written as
  // subtract of a negation) agree.
  EXPECT_EQ(RunAndRead<int32_t>(ScatterProgram(R"(
        %s = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %s : tensor<i32>)")),
            (std::vector<int32_t>{1, 32, 3}));
  EXPECT_EQ(RunAndRead<int32_t>(ScatterProgram(R"(
        %n = stablehlo.negate %b : tensor<i32>
        %s = stablehlo.subtract %a, %n : tensor<i32>
        stablehlo.return %s : tensor<i32>)")),
            (std::vector<int32_t>{1, 32, 3}));
}

TEST(ScatterTest, ReplaceKeepsLastUpdate) {
  EXPECT_EQ(RunAndRead<int32_t>(ScatterProgram("stablehlo.return %b : tensor<i32>")),
            (std::vector<int32_t>{1, 20, 3}));
}

TEST(ScatterTest, BatchingDimsAndWindows) {
  // The spec's example.
  auto r = RunAndRead<int64_t>(R"(
    func.func @main() -> tensor<2x3x4x2xi64> {
      %input = stablehlo.constant dense<[[[[1, 2], [3, 4], [5, 6], [7, 8]], [[9, 10],[11, 12], [13, 14], [15, 16]], [[17, 18], [19, 20], [21, 22], [23, 24]]], [[[25, 26], [27, 28], [29, 30], [31, 32]], [[33, 34], [35, 36], [37, 38], [39, 40]], [[41, 42], [43, 44], [45, 46], [47, 48]]]]> : tensor<2x3x4x2xi64>
      %idx = stablehlo.constant dense<[[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]], [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]]> : tensor<2x2x3x2xi64>
      %upd = stablehlo.constant dense<1> : tensor<2x2x3x2x2xi64>
      %r = "stablehlo.scatter"(%input, %idx, %upd) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %s : tensor<i64>
      }) {
        scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4],
          inserted_window_dims = [1], input_batching_dims = [0],
          scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [2, 1],
          index_vector_dim = 3>,
        indices_are_sorted = false, unique_indices = false
      } : (tensor<2x3x4x2xi64>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xi64>) -> tensor<2x3x4x2xi64>
      return %r : tensor<2x3x4x2xi64>
    })");
  EXPECT_EQ(r, (std::vector<int64_t>{3,  4,  6,  7,  6,  7,  7,  8,  9,  10, 11, 12,
                                     15, 16, 17, 18, 17, 18, 19, 20, 22, 23, 24, 25,
                                     25, 26, 28, 29, 30, 31, 31, 32, 35, 36, 38, 39,
                                     38, 39, 39, 40, 41, 42, 44, 45, 46, 47, 47, 48}));
}

TEST(ScatterTest, VariadicRunsTheRegion) {
  // Two inputs updated together: keeps the pair with the larger key.
  auto r = RunMlir(R"(
    func.func @main() -> (tensor<2xi32>, tensor<2xf32>) {
      %k = stablehlo.constant dense<[5, 1]> : tensor<2xi32>
      %v = stablehlo.constant dense<[0.5, 1.5]> : tensor<2xf32>
      %i = stablehlo.constant dense<[[0], [1]]> : tensor<2x1xi32>
      %uk = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
      %uv = stablehlo.constant dense<[2.5, 3.5]> : tensor<2xf32>
      %r:2 = "stablehlo.scatter"(%k, %v, %i, %uk, %uv) ({
      ^bb0(%a: tensor<i32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<f32>):
        %gt = stablehlo.compare GT, %c, %a : (tensor<i32>, tensor<i32>) -> tensor<i1>
        %nk = stablehlo.select %gt, %c, %a : tensor<i1>, tensor<i32>
        %nv = stablehlo.select %gt, %d, %b : tensor<i1>, tensor<f32>
        stablehlo.return %nk, %nv : tensor<i32>, tensor<f32>
      }) {
        scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],
          scatter_dims_to_operand_dims = [0], index_vector_dim = 1>
      } : (tensor<2xi32>, tensor<2xf32>, tensor<2x1xi32>, tensor<2xi32>, tensor<2xf32>) -> (tensor<2xi32>, tensor<2xf32>)
      return %r#0, %r#1 : tensor<2xi32>, tensor<2xf32>
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(testing::Read<int32_t>((*r)[0]), (std::vector<int32_t>{5, 4}));
  EXPECT_EQ(testing::Read<float>((*r)[1]), (std::vector<float>{0.5f, 3.5f}));
}

TEST(ScatterTest, RejectsUpdatesOfWrongShape) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<3xi32>, %i: tensor<2x1xi32>, %u: tensor<3xi32>) -> tensor<3xi32> {
      %r = "stablehlo.scatter"(%x, %i, %u) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        stablehlo.return %b : tensor<i32>
      }) {
        scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],
          scatter_dims_to_operand_dims = [0], index_vector_dim = 1>
      } : (tensor<3xi32>, tensor<2x1xi32>, tensor<3xi32>) -> tensor<3xi32>
      return %r : tensor<3xi32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
