// ApproxTopK as JAX lowers approx_max_k / approx_min_k for TPU: the exact
// top k, in the comparator's order, with indices from the iota operand.
#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunMlir;
using testing::VerifyMlir;

// approx_{max,min}_k over dimension 1 of a 2x8 input (k = 3).
std::string Program(const std::string& direction, const std::string& config,
                    const std::string& out = "2x3") {
  return R"(module @jit_f {
  func.func private @top_k_cmp(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> tensor<i1> {
    %0 = stablehlo.compare  )" +
         direction + R"(, %arg0, %arg1 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %0 : tensor<i1>
  }
  func.func public @main() -> (tensor<)" +
         out + "xf32>, tensor<" + out + R"(xi32>) {
    %x = stablehlo.constant dense<[[3.0, 9.0, 1.0, 7.0, 5.0, 9.0, 0.0, 2.0], [-1.0, -2.0, 8.0, 4.0, 6.0, 0.5, 1.5, 2.5]]> : tensor<2x8xf32>
    %iota = stablehlo.iota dim = 1 : tensor<2x8xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<-1> : tensor<i32>
    %0:2 = stablehlo.custom_call @ApproxTopK(%x, %iota, %cst, %c) {called_computations = [@top_k_cmp], mhlo.backend_config = {)" +
         config +
         R"(}} : (tensor<2x8xf32>, tensor<2x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<)" + out +
         "xf32>, tensor<" + out + R"(xi32>)
    return %0#0, %0#1 : tensor<)" +
         out + "xf32>, tensor<" + out + R"(xi32>
  }
})";
}

constexpr const char* kConfig =
    "aggregate_to_topk = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, "
    "reduction_input_size_override = -1 : i64, top_k = 3 : i64";

TEST(ApproxTopK, MaxKIsTheExactTopKWithItsIndices) {
  auto r = RunMlir(Program("GT", kConfig));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Ties keep the lower index first.
  EXPECT_EQ(Read<float>((*r)[0]), (std::vector<float>{9, 9, 7, 8, 6, 4}));
  EXPECT_EQ(Read<int32_t>((*r)[1]), (std::vector<int32_t>{1, 5, 3, 2, 4, 3}));
}

TEST(ApproxTopK, MinKFollowsTheComparator) {
  auto r = RunMlir(Program("LT", kConfig));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<float>((*r)[0]), (std::vector<float>{0, 1, 2, -2, -1, 0.5}));
  EXPECT_EQ(Read<int32_t>((*r)[1]), (std::vector<int32_t>{6, 2, 7, 1, 0, 5}));
}

TEST(ApproxTopK, WithoutAggregationAShortRowIsKeptWhole) {
  // A row no longer than a vector pass (128 lanes) is not reduced: all 8
  // come back, best first.
  auto r = RunMlir(Program("GT",
                           "aggregate_to_topk = false, recall_target = 0.95 : f32, "
                           "reduction_dim = 1 : i64, top_k = 3 : i64",
                           "2x8"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<float>((*r)[0])[0], 9);
  EXPECT_EQ(Read<float>((*r)[0])[7], 0);
}

TEST(ApproxTopK, BadShapesAndConfigsAreErrors) {
  Status wrong_k = VerifyMlir(Program("GT", kConfig, "2x4"));
  EXPECT_EQ(wrong_k.code(), StatusCode::kInvalidArgument) << wrong_k.ToString();
  Status no_k = VerifyMlir(Program("GT", "reduction_dim = 1 : i64"));
  EXPECT_NE(no_k.ToString().find("top_k"), std::string::npos) << no_k.ToString();
  Status bad_dim = VerifyMlir(Program("GT", "reduction_dim = 2 : i64, top_k = 3 : i64"));
  EXPECT_NE(bad_dim.ToString().find("reduction_dim 2"), std::string::npos) << bad_dim.ToString();
}

// The TPU's pass: 4096 elements per row into bins for recall 0.95 at k =
// 10: (1 - 10) / ln 0.95 = 175 bins wanted, so the 32 windows of 128 lanes
// halve floor(log2(4096 / 175)) = 4 times, to 2 windows: 256 bins.
TEST(ApproxTopK, WorkIsAPassAndASortOfTheBins) {
  const std::string text = R"(module @m {
  func.func private @cmp(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>) -> tensor<i1> {
    %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %0 : tensor<i1>
  }
  func.func @main(%x: tensor<4x4096xf32>, %i: tensor<4x4096xi32>, %v: tensor<f32>, %j: tensor<i32>) -> tensor<4x10xf32> {
    %0:2 = stablehlo.custom_call @ApproxTopK(%x, %i, %v, %j) {called_computations = [@cmp], mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.95 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 10 : i64}} : (tensor<4x4096xf32>, tensor<4x4096xi32>, tensor<f32>, tensor<i32>) -> (tensor<4x10xf32>, tensor<4x10xi32>)
    return %0#0 : tensor<4x10xf32>
  }
})";
  auto module = frontend::ParseStableHlo(text, "t.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation& op = *(*module)->Lookup("main")->entry().ops().front();
  Work w = OpRegistry::Lookup(op.name())->work(op);
  const int64_t pass = 3 * 4 * 4096;             // compare + 2 selects per element
  const int64_t sort = 3 * 4 * 256 * 8 * 9 / 2;  // bitonic over 256 bins
  EXPECT_EQ(w.vector_ops[static_cast<int>(VectorClass::kAlu)], pass + sort);
  EXPECT_NE(w.priced_as.find("into 256 bins"), std::string::npos) << w.priced_as;
}

}  // namespace
}  // namespace tpusim::ops
