// The fused-kernel section lists each kernel a timeline executed, with the
// ops inside it, in text and JSON.
#include "report/fusion_section.h"

#include <gtest/gtest.h>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/hw/chip.h"
#include "tpusim/timing/timing.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::report {
namespace {

// A bias-and-tanh kernel run in a loop of three iterations, then a plain op.
const char* kProgram = R"(
func.func public @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<4x8xf32>
   cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare  LT, %i, %n,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %f = "tpusim.fusion"(%b, %acc) ({
    ^bb0(%bb: tensor<8xf32>, %a: tensor<4x8xf32>):
      %1 = stablehlo.broadcast_in_dim %bb, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
      %2 = stablehlo.add %a, %1 : tensor<4x8xf32>
      %3 = stablehlo.tanh %2 : tensor<4x8xf32>
      stablehlo.return %3 : tensor<4x8xf32>
    }) {kind = "kLoop", name = "fusion.7"} : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    stablehlo.return %next, %f : tensor<i32>, tensor<4x8xf32>
  }
  %4 = stablehlo.negate %0#1 : tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
})";

timing::Timeline TimeProgram(std::unique_ptr<ir::Module>* keep) {
  auto m = frontend::ParseStableHlo(kProgram, "t.mlir");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(verify::VerifyModule(**m).ok());
  *keep = std::move(m).value();
  auto timeline =
      timing::TimeStatically(**keep, "main", hw::FindPreset("v5e").value(), {});
  EXPECT_TRUE(timeline.ok()) << timeline.status().ToString();
  return std::move(timeline).value();
}

TEST(FusionSection, ListsEachKernelWithItsOps) {
  std::unique_ptr<ir::Module> m;
  timing::Timeline timeline = TimeProgram(&m);
  std::vector<FusedKernel> kernels = FusedKernels(timeline);
  ASSERT_EQ(kernels.size(), 1u);
  const FusedKernel& k = kernels[0];
  EXPECT_EQ(k.name, "fusion.7");
  EXPECT_EQ(k.value, "%f");  // as the program (and the rest of the report) names it
  EXPECT_EQ(k.kind, "kLoop");
  EXPECT_EQ(k.ops, (std::vector<std::string>{"broadcast_in_dim", "add", "tanh"}));
  EXPECT_EQ(k.count, 3);
  EXPECT_GT(k.seconds, 0);
  // Reads the bias (a padded row of 128) and the input, writes the result
  // (an (8, 128) tile each): no intermediate.
  EXPECT_EQ(k.hbm_bytes, 3 * (512 + 4096 + 4096));
  EXPECT_EQ(k.spill_bytes, 0);
  const std::string text = FusionSectionText(timeline);
  EXPECT_EQ(
      text.rfind("fused kernels (1):\n  fusion.7 %f (kLoop): broadcast_in_dim, add, tanh  ", 0), 0u)
      << text;
  EXPECT_NE(text.find("x3\n"), std::string::npos) << text;
}

TEST(FusionSection, JsonHasTheSameFields) {
  std::unique_ptr<ir::Module> m;
  timing::Timeline timeline = TimeProgram(&m);
  nlohmann::json j = FusionSectionJson(timeline);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["name"], "fusion.7");
  EXPECT_EQ(j[0]["kind"], "kLoop");
  EXPECT_EQ(j[0]["ops"], nlohmann::json({"broadcast_in_dim", "add", "tanh"}));
  EXPECT_EQ(j[0]["count"], 3);
  EXPECT_EQ(j[0]["hbm_bytes"], FusedKernels(timeline)[0].hbm_bytes);
  EXPECT_EQ(j[0]["spill_bytes"], 0);
  EXPECT_EQ(j[0]["location"], "t.mlir:12:5");
}

TEST(FusionSection, IsEmptyWithoutKernels) {
  timing::Timeline timeline(hw::FindPreset("v5e").value());
  EXPECT_EQ(FusionSectionText(timeline), "");
  EXPECT_TRUE(FusionSectionJson(timeline).empty());
}

}  // namespace
}  // namespace tpusim::report
