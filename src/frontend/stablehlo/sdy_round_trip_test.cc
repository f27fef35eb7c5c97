// Shardy's round-trip form (the sdy dialect as strings in
// mhlo.frontend_attributes) reads as the native form it stands for.
#include <gtest/gtest.h>

#include "testing/test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/printer.h"

namespace tpusim::frontend {
namespace {

// `text` parsed, verified and printed ("" on failure, with a test failure).
std::string Printed(std::string_view text) {
  std::unique_ptr<ir::Module> m = test::ParseVerified(text);
  return m == nullptr ? "" : ir::PrintModule(*m);
}

TEST(SdyRoundTrip, ReadsAsTheNativeForm) {
  const std::string exported =
      test::ReadFile(std::string(TPUSIM_SOURCE_DIR) + "/tests/jax_exports/shardy_round_trip.mlir");
  ASSERT_FALSE(exported.empty());
  EXPECT_EQ(Printed(exported), Printed(R"(
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2]>
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<8x4xf32> {jax.result_info = "", sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, tensor<8x4xf32> {jax.result_info = "", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {}]> : tensor<8x4xf32>
    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<4x4xf32>) {
      %3 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
      sdy.return %3 : tensor<4x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = stablehlo.multiply %1, %1 : tensor<8x4xf32>
    return %2, %1 : tensor<8x4xf32>, tensor<8x4xf32>
  }
})"));
}

// Before 2025-04 the shardings of a manual computation sat on its call.
TEST(SdyRoundTrip, ManualComputationShardingsOnTheCall) {
  const std::string text = R"(
module @m attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22a\22=2]>}"}} {
  func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%x) : (tensor<8xf32>) -> tensor<4xf32>
    %1 = call @xla.sdy.manual_computation_body(%0) {mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22a\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}]>]>"}} : (tensor<4xf32>) -> tensor<4xf32>
    %2 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%1) : (tensor<4xf32>) -> tensor<8xf32>
    stablehlo.custom_call @xla.sdy.ShardingGroup(%2) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding_group_id = "0 : i64"}} : (tensor<8xf32>) -> ()
    return %2 : tensor<8xf32>
  }
  func.func private @xla.sdy.manual_computation_body(%y: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %y : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})";
  const std::string printed = Printed(text);
  EXPECT_NE(printed.find("sdy.manual_computation"), std::string::npos) << printed;
  EXPECT_NE(printed.find(R"(manual_axes = #sdy<manual_axes{"a"}>)"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("xla.sdy"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("func.call"), std::string::npos) << printed;
}

// Exports of early 2025 escaped the embedded quotes twice.
TEST(SdyRoundTrip, DoublyEscapedQuotes) {
  const std::string printed = Printed(R"(
module @m attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\\\22a\\\22=2]>}"}} {
  func.func @main(%x: tensor<8xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\\\22a\\\22}]>"}}) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
})");
  EXPECT_NE(printed.find(R"(sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>)"), std::string::npos)
      << printed;
}

TEST(SdyRoundTrip, MalformedEmbeddedShardingsAreLocatedErrors) {
  auto m = ParseStableHlo(
      R"(module @m attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22a\22=2]>}"}} {
  func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @Sharding(%x) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}]"}} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
})",
      "bad.mlir");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().ToString(),
            "invalid argument: bad.mlir:3:5: xla.sdy.sharding "
            "\"#sdy.sharding_per_value<[<@mesh, [{\"a\"}]\" is not valid: expected '>', found "
            "end of input");

  m = ParseStableHlo(
      R"(module @m attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22a\22=2]>}"}} {
  func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%x) : (tensor<8xf32>) -> tensor<4xf32>
    return %x : tensor<8xf32>
  }
})",
      "lone.mlir");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("without its manual_computation_body call"),
            std::string::npos)
      << m.status().ToString();
}

}  // namespace
}  // namespace tpusim::frontend
