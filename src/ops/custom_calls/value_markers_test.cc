// The calls JAX wraps values in leave them as they are.
#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunMlir;
using testing::VerifyMlir;

TEST(ValueMarkers, LeaveValuesAsTheyAre) {
  auto r = RunMlir(R"(module @jit_f {
  func.func public @main() -> (tensor<2x2xf32>, tensor<3xi32>) {
    %x = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %0 = stablehlo.custom_call @LayoutConstraint(%x) {result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %1 = stablehlo.custom_call @InspectSharding(%0) {backend_config = "140234", has_side_effect = true} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %2 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%1) {has_side_effect = true} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    stablehlo.custom_call @dce_sink(%2) {has_side_effect = true} : (tensor<2x2xf32>) -> ()
    stablehlo.custom_call @xla.sdy.ShardingGroup(%2) {has_side_effect = true} : (tensor<2x2xf32>) -> ()
    %3 = stablehlo.custom_call @AllocateBuffer() : () -> tensor<3xi32>
    return %2, %3 : tensor<2x2xf32>, tensor<3xi32>
  }
})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<float>((*r)[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ((*r)[1].type().ToString(), "tensor<3xi32>");
}

TEST(ValueMarkers, ChangingTheTypeIsAnError) {
  Status s = VerifyMlir(R"(module @jit_f {
  func.func public @main(%x: tensor<4xf32>) -> tensor<2x2xf32> {
    %0 = stablehlo.custom_call @LayoutConstraint(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
    return %0 : tensor<2x2xf32>
  }
})");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(
      s.message().find("custom_call @LayoutConstraint: takes one value to one of the same type"),
      std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace tpusim::ops
