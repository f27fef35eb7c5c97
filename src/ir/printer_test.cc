#include "tpusim/ir/printer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tpusim/frontend/stablehlo/parser.h"

namespace tpusim::ir {
namespace {

std::string Print(std::string_view text) {
  auto m = frontend::ParseStableHlo(text, "p.mlir");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? PrintModule(**m) : "";
}

TEST(PrinterTest, GenericFormWithPositionalNames) {
  EXPECT_EQ(Print(R"(module @m attributes {mhlo.num_replicas = 1 : i32} {
  func.func private @f(%x: tensor<2xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<2xf32> {jax.result_info = ""}) {
    %0:2 = "test.pair"(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    %1 = stablehlo.add %0#0, %0#1 : tensor<2xf32>
    return %1 : tensor<2xf32>
  }
})"),
            R"(module @m attributes {mhlo.num_replicas = 1 : i32} {
  func.func private @f(%arg0: tensor<2xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<2xf32> {jax.result_info = ""}) {
    %1:2 = "test.pair"(%arg0) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    %3 = "stablehlo.add"(%1#0, %1#1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%3) : (tensor<2xf32>) -> ()
  }
}
)");
}

TEST(PrinterTest, RegionsSortedAttributesAndQuotedSymbols) {
  std::string printed = Print(R"(func.func @"<lambda>"(%x: tensor<3xf32>, %c: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.reduce(%x init: %c) applies stablehlo.maximum across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    %1 = stablehlo.constant dense<7> : tensor<1000000000xi32>
    return %0 : tensor<f32>
  })");
  EXPECT_EQ(printed, R"(module {
  func.func @"<lambda>"(%arg0: tensor<3xf32>, %arg1: tensor<f32>) -> (tensor<f32>) {
    %2 = "stablehlo.reduce"(%arg0, %arg1) ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %5 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%5) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    %6 = "stablehlo.constant"() {value = dense<7> : tensor<1000000000xi32>} : () -> tensor<1000000000xi32>
    "func.return"(%2) : (tensor<f32>) -> ()
  }
}
)");
}

TEST(PrinterTest, MeshesAndShardingsPrintBackReadably) {
  const char* text = R"(module @m {
  sdy.mesh @mesh = <["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
  func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}], replicated={"y"}>}) {
    func.return
  }
})";
  std::string once = Print(text);
  EXPECT_NE(once.find(R"(sdy.mesh @mesh = <["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>)"),
            std::string::npos)
      << once;
  EXPECT_NE(once.find(R"({sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}], replicated={"y"}>})"),
            std::string::npos)
      << once;
  EXPECT_EQ(Print(once), once);
}

TEST(PrinterTest, FloatAttributesRoundTripExactly) {
  const char* text = R"(func.func @f(%x: tensor<f32>) {
    "check.expect_almost_eq"(%x, %x) {tolerance = 0.1 : f64, big = 1.0e+300 : f64, inf = 0x7F800000 : f32, n = 0.30000001192092896 : f32} : (tensor<f32>, tensor<f32>) -> ()
    func.return
  })";
  std::string once = Print(text);
  EXPECT_EQ(Print(once), once);
  auto m = frontend::ParseStableHlo(once, "again.mlir");
  ASSERT_TRUE(m.ok());
  const Operation& op = *(*m)->functions()[0]->entry().ops()[0];
  EXPECT_EQ(op.attr("tolerance").float_value(), 0.1);
  EXPECT_EQ(op.attr("big").float_value(), 1.0e300);
  EXPECT_EQ(op.attr("inf").float_value(), INFINITY);
}

}  // namespace
}  // namespace tpusim::ir
