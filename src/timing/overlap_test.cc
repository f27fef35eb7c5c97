// Collectives beside compute: what overlap hides and what it cannot.
#include <gtest/gtest.h>

#include "testing/test_util.h"
#include "tpusim/pod/collective_cost.h"
#include "tpusim/timing/timing.h"

namespace tpusim::timing {
namespace {

// An all_reduce of %x, a matmul that does not need it, and an add that
// needs both.
constexpr const char* kIndependent = R"(
module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<1024x1024xf32>, %w: tensor<2048x2048xbf16>) -> tensor<2048x2048xf32> {
    %s = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %m = stablehlo.dot_general %w, %w, contracting_dims = [1] x [0] : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xf32>
    %r = stablehlo.reshape %s : (tensor<1024x1024xf32>) -> tensor<2048x512xf32>
    %c = stablehlo.concatenate %r, %r, %r, %r, dim = 1 : (tensor<2048x512xf32>, tensor<2048x512xf32>, tensor<2048x512xf32>, tensor<2048x512xf32>) -> tensor<2048x2048xf32>
    %y = stablehlo.add %m, %c : tensor<2048x2048xf32>
    return %y : tensor<2048x2048xf32>
  }
})";

struct Times {
  double total, collective, matmul, exposed;
};

Times TimeIt(bool overlap) {
  auto module = test::ParseVerified(kIndependent);
  auto slice = pod::FindSlice("v5e-8");
  auto pricer = pod::CollectivePricer::Create(*slice, 1, 8);
  StaticOptions options{.pod = &*pricer, .overlap = overlap};
  auto t = TimeStatically(*module, "main", slice->chip, options);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  Times out{t->total_seconds(), 0, 0, t->exposed_communication_seconds()};
  for (const OpEvent& e : t->events()) {
    if (e.op->name_str() == "stablehlo.all_reduce") out.collective = e.seconds();
    if (e.op->name_str() == "stablehlo.dot_general") out.matmul = e.seconds();
  }
  return out;
}

TEST(OverlapTest, IndependentComputeHidesTheCollective) {
  Times sync = TimeIt(false), async = TimeIt(true);
  ASSERT_GT(sync.collective, 0);
  ASSERT_GT(sync.matmul, 0);
  // Without overlap, the collective adds all its time; with it, the matmul
  // runs meanwhile and only the longer of the two counts.
  EXPECT_DOUBLE_EQ(sync.exposed, sync.collective);
  EXPECT_NEAR(sync.total - async.total, std::min(sync.collective, sync.matmul), 1e-12);
  EXPECT_NEAR(async.exposed, std::max(0.0, sync.collective - sync.matmul), 1e-12);
}

// A loop body timed as blocks of 32 executions per op (timing-only mode)
// overlaps as each iteration would: collective 3 beside matmul 2, then three
// ops of 1 after the collective's result: 32 x (max(3, 2) + 3).
TEST(OverlapTest, ALoopBodyOverlapsAsEachIterationWould) {
  auto module = test::ParseVerified(kIndependent);
  auto slice = pod::FindSlice("v5e-8");
  Timeline t(slice->chip, /*overlap=*/true, &*slice);
  for (const auto& op : module->Lookup("main")->entry().ops()) {
    if (op->name_str() == "func.return") continue;
    hw::OpCost cost;
    const bool collective = op->name_str() == "stablehlo.all_reduce";
    cost.seconds = collective ? 3 : op->name_str() == "stablehlo.dot_general" ? 2 : 1;
    cost.bound = collective ? hw::Bound::kIci : hw::Bound::kMxu;
    t.Append(*op, cost, true, 32);
  }
  EXPECT_DOUBLE_EQ(t.total_seconds(), 32 * 6);
  EXPECT_DOUBLE_EQ(t.exposed_communication_seconds(), 32 * 1);
}

// A device-to-device send/recv with pairs is a collective_permute split in
// two: the recv, whose result waits for the data, carries its price; the
// send only reads its operand. Without pairs the route is unknown.
TEST(SendRecvTiming, TheRecvIsPricedAsAPermuteOverItsPairs) {
  auto module = test::ParseVerified(R"(
module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
    %t = stablehlo.after_all : !stablehlo.token
    %s = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = false, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : (tensor<1024x1024xf32>, !stablehlo.token) -> !stablehlo.token
    %r, %u = "stablehlo.recv"(%s) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = false, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : (!stablehlo.token) -> (tensor<1024x1024xf32>, !stablehlo.token)
    %h, %v = "stablehlo.recv"(%u) {channel_handle = #stablehlo.channel_handle<handle = 2, type = 3>, is_host_transfer = true} : (!stablehlo.token) -> (tensor<1024x1024xf32>, !stablehlo.token)
    %y = stablehlo.add %r, %h : tensor<1024x1024xf32>
    return %y : tensor<1024x1024xf32>
  }
})");
  auto slice = pod::FindSlice("v5e-8");
  auto pricer = pod::CollectivePricer::Create(*slice, 1, 8);
  ASSERT_TRUE(pricer->Prepare(*module).ok());
  StaticOptions options{.pod = &*pricer};
  auto t = TimeStatically(*module, "main", slice->chip, options);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const auto& e = t->events();
  ASSERT_EQ(e.size(), 5u);  // after_all, send, recv, recv, add
  EXPECT_TRUE(e[1].priced);
  EXPECT_NE(e[1].cost.bound, hw::Bound::kIci);  // send
  EXPECT_EQ(e[2].cost.bound, hw::Bound::kIci);  // recv
  const double permute = pod::PriceCollective(*slice, ops::CollectiveKind::kPermute, 4 << 20,
                                              {{0, 1}, {1, 2}, {2, 3}, {3, 0}})
                             .seconds;
  EXPECT_GT(permute, 0);
  EXPECT_GE(e[2].cost.seconds, permute);
  // From the host: 4 MiB over the host link.
  EXPECT_TRUE(e[3].priced);
  EXPECT_EQ(e[3].cost.bound, hw::Bound::kHost);
  EXPECT_NEAR(e[3].cost.unit_seconds[static_cast<int>(hw::Unit::kHost)],
              (4 << 20) / slice->chip.host.bytes_per_s + slice->chip.host.latency_s, 1e-12);
}

}  // namespace
}  // namespace tpusim::timing
