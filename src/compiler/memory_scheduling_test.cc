#include <gtest/gtest.h>

#include "compiler/simplify_test_util.h"
#include "tpusim/compiler/buffer_assignment.h"
#include "tpusim/hw/chip.h"
#include "testing/test_util.h"

namespace tpusim::compiler {
namespace {

using testing::AfterPasses;
using testing::Printed;

// Two large gradients, each shrunk by a reduce-scatter: as an FSDP layer's
// backward pass writes them, and as memory scheduling orders them.
std::string Program(const std::string& body) {
  return R"(module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<1024x1024xbf16>, %y: tensor<1024x1024xbf16>) -> (tensor<256x1024xf32>, tensor<256x1024xf32>) {)" +
         body + R"(
    return %sa, %sb : tensor<256x1024xf32>, tensor<256x1024xf32>
  }
})";
}

std::string ReduceScatter(const char* result, const char* operand, int channel) {
  return std::string("\n    %") + result + " = \"stablehlo.reduce_scatter\"(%" + operand +
         ") <{channel_handle = #stablehlo.channel_handle<handle = " + std::to_string(channel) +
         R"(, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %t = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<1024x1024xf32>) -> tensor<256x1024xf32>)";
}

constexpr const char* kGradA = R"(
    %ga = stablehlo.dot_general %x, %x, contracting_dims = [0] x [0] : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<1024x1024xf32>)";
constexpr const char* kGradB = R"(
    %gb = stablehlo.dot_general %y, %y, contracting_dims = [0] x [0] : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<1024x1024xf32>)";

const std::string kAsWritten =
    Program(std::string(kGradA) + kGradB + ReduceScatter("sa", "ga", 1) + ReduceScatter("sb", "gb", 2));
const std::string kScheduled =
    Program(std::string(kGradA) + ReduceScatter("sa", "ga", 1) + kGradB + ReduceScatter("sb", "gb", 2));

std::string Schedule(const std::string& text) {
  PassContext ctx;
  return AfterPasses(text, {RunMemoryScheduling}, ctx);
}

TEST(MemoryScheduling, EachReduceScatterFollowsTheGradientItShrinks) {
  EXPECT_EQ(Schedule(kAsWritten), Printed(kScheduled));
  EXPECT_EQ(Schedule(kScheduled), Printed(kScheduled));
}

TEST(MemoryScheduling, OneWholeGradientLivesAtATime) {
  const hw::ChipSpec chip = test::V5e();
  auto peak = [&](const std::string& text) {
    std::unique_ptr<ir::Module> m = test::ParseVerified(text);
    if (m == nullptr) return int64_t{0};
    m->Lookup("main")->Renumber();
    auto plan = PlanMemory(*m, *m->Lookup("main"), chip);
    return plan.ok() ? plan->peak_bytes : 0;
  };
  constexpr int64_t kMiB = 1 << 20;
  // Arguments 2 x 2 MiB; results 2 x 1 MiB; gradients 4 MiB each.
  EXPECT_EQ(peak(kAsWritten), 4 * kMiB + 1 * kMiB + 8 * kMiB);
  EXPECT_EQ(peak(Schedule(kAsWritten)), 4 * kMiB + 2 * kMiB + 4 * kMiB);
}

TEST(MemoryScheduling, NoOpMovesAboveWhatItReads) {
  // %n shrinks nothing it does not need: the negate must come first.
  const std::string chain = Program(std::string(kGradA) + R"(
    %n = stablehlo.negate %ga : tensor<1024x1024xf32>)" + ReduceScatter("sa", "n", 1) + kGradB +
                                    ReduceScatter("sb", "gb", 2));
  EXPECT_EQ(Schedule(chain), Printed(chain));
}

TEST(MemoryScheduling, SideEffectsOtherThanCollectivesKeepTheirPlace) {
  // A custom call with side effects between the gradients and their
  // reduce-scatters: neither passes it, though the second passes the first
  // (collectives may pass collectives) to end its gradient's life sooner.
  constexpr const char* kEffect = R"(
    stablehlo.custom_call @effect() {has_side_effect = true} : () -> ())";
  const std::string fenced = Program(std::string(kGradA) + kGradB + kEffect +
                                     ReduceScatter("sa", "ga", 1) + ReduceScatter("sb", "gb", 2));
  EXPECT_EQ(Schedule(fenced), Printed(Program(std::string(kGradA) + kGradB + kEffect +
                                              ReduceScatter("sb", "gb", 2) +
                                              ReduceScatter("sa", "ga", 1))));
}

}  // namespace
}  // namespace tpusim::compiler
