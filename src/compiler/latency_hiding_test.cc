#include <gtest/gtest.h>

#include "compiler/simplify_test_util.h"
#include "tpusim/hw/chip.h"
#include "tpusim/pod/collective_cost.h"
#include "tpusim/timing/timing.h"

namespace tpusim::compiler {
namespace {

using testing::AfterPasses;
using testing::Printed;

constexpr const char* kAllReduce = R"(
    %s = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>)";

// An all_reduce, a use of its result, and a matmul that needs neither.
std::string Program(const std::string& body) {
  return R"(module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<1024x1024xf32>, %w: tensor<2048x2048xbf16>) -> (tensor<1024x1024xf32>, tensor<2048x2048xf32>) {)" +
         body + R"(
    return %e, %m : tensor<1024x1024xf32>, tensor<2048x2048xf32>
  }
})";
}

const std::string kInOrder = Program(std::string(kAllReduce) + R"(
    %e = stablehlo.exponential %s : tensor<1024x1024xf32>
    %m = stablehlo.dot_general %w, %w, contracting_dims = [1] x [0] : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xf32>)");

std::string Schedule(const std::string& text) {
  PassContext ctx;
  static const hw::ChipSpec chip = *hw::FindPreset("v5e");
  ctx.chip = &chip;
  return AfterPasses(text, {RunLatencyHidingScheduler}, ctx);
}

TEST(LatencyHiding, ComputeThatDoesNotWaitRunsWhileTheCollectiveIsInFlight) {
  EXPECT_EQ(Schedule(kInOrder), Printed(Program(std::string(kAllReduce) + R"(
    %m = stablehlo.dot_general %w, %w, contracting_dims = [1] x [0] : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xf32>
    %e = stablehlo.exponential %s : tensor<1024x1024xf32>)")));
}

TEST(LatencyHiding, CollectivesStartAsSoonAsTheirOperandsAllow) {
  const std::string late = Program(R"(
    %m = stablehlo.dot_general %w, %w, contracting_dims = [1] x [0] : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xf32>)" +
                                   std::string(kAllReduce) + R"(
    %e = stablehlo.exponential %s : tensor<1024x1024xf32>)");
  EXPECT_EQ(Schedule(late), Schedule(kInOrder));
}

TEST(LatencyHiding, OpsWithSideEffectsKeepTheirOrder) {
  // The second all_reduce is ready first (it needs only %x), but the first
  // one stays first: every device must meet its peers in the same order.
  const std::string two = Program(R"(
    %n = stablehlo.negate %x : tensor<1024x1024xf32>
    %s = "stablehlo.all_reduce"(%n) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %r = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %e = stablehlo.add %s, %r : tensor<1024x1024xf32>
    %m = stablehlo.dot_general %w, %w, contracting_dims = [1] x [0] : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xf32>)");
  const std::string scheduled = Schedule(two);
  const size_t first = scheduled.find("handle = 1"), second = scheduled.find("handle = 2");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(first, second) << scheduled;
  EXPECT_LT(scheduled.find("stablehlo.negate"), first) << scheduled;
}

// On v5e-8 the scheduled program hides the all_reduce behind the matmul.
TEST(LatencyHiding, TheTimelineHidesMoreOfTheCollective) {
  auto exposed = [](const std::string& text) {
    auto module = test::ParseVerified(text);
    auto slice = pod::FindSlice("v5e-8");
    auto pricer = pod::CollectivePricer::Create(*slice, 1, 8);
    timing::StaticOptions options{.pod = &*pricer, .overlap = true};
    auto t = timing::TimeStatically(*module, "main", slice->chip, options);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? t->exposed_communication_seconds() : -1.0;
  };
  const double before = exposed(kInOrder);
  const double after = exposed(Schedule(kInOrder));
  EXPECT_GT(before, 0);
  EXPECT_LT(after, 0.5 * before) << before << " -> " << after;
}

}  // namespace
}  // namespace tpusim::compiler
