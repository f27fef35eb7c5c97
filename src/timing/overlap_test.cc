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

// kIndependent's ops (in `module`) as a loop body of 32 iterations, each
// op's executions one block (timing-only mode): the collective takes 3, the
// matmul 2, the other ops 1; `pipelined`: the collective is pipelined
// across iterations.
Timeline LoopBlocks(const ir::Module& module, bool pipelined) {
  auto slice = pod::FindSlice("v5e-8");
  Timeline t(slice->chip, /*overlap=*/true, &*slice);
  for (const auto& op : module.Lookup("main")->entry().ops()) {
    if (op->name_str() == "func.return") continue;
    hw::OpCost cost;
    const bool collective = op->name_str() == "stablehlo.all_reduce";
    cost.seconds = collective ? 3 : op->name_str() == "stablehlo.dot_general" ? 2 : 1;
    cost.bound = collective ? hw::Bound::kIci : hw::Bound::kMxu;
    t.Append(*op, cost, true, 32, pipelined && collective);
  }
  return t;
}

// Overlapped as each iteration would: collective 3 beside matmul 2, then
// three ops of 1 after the collective's result: 32 x (max(3, 2) + 3).
TEST(OverlapTest, ALoopBodyOverlapsAsEachIterationWould) {
  auto module = test::ParseVerified(kIndependent);
  const Timeline t = LoopBlocks(*module, /*pipelined=*/false);
  EXPECT_DOUBLE_EQ(t.total_seconds(), 32 * 6);
  EXPECT_DOUBLE_EQ(t.exposed_communication_seconds(), 32 * 1);
}

// The same body where the collective is pipelined across iterations (XLA's
// collective pipeliner: its operands do not depend on the iteration before):
// the add waits for its first execution alone, so the 32 matmuls and adds
// run beside the 32 collectives, and only the first one is exposed.
TEST(OverlapTest, APipelinedCollectiveExposesOneIteration) {
  auto module = test::ParseVerified(kIndependent);
  const Timeline t = LoopBlocks(*module, /*pipelined=*/true);
  // The matmuls take 64; the first collective is done at 3, so the three
  // ops of 1 follow at once: 32 x (2 + 3), the 96 of links beside them.
  EXPECT_DOUBLE_EQ(t.total_seconds(), 32 * 5);
  EXPECT_DOUBLE_EQ(t.exposed_communication_seconds(), 0);
}

// In a timed program: a layer loop all-gathers each layer's slice of its
// weights (the body passes the stack through unchanged) and multiplies by
// it. The gather does not depend on the iteration before, so each runs
// during the last one's matmul: a fraction of the 16 is exposed.
TEST(OverlapTest, ALayerLoopsWeightGatherIsPipelined) {
  auto module = test::ParseVerified(R"(
module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%w: tensor<16x256x2048xbf16>, %x: tensor<4096x2048xbf16>) -> tensor<4096x2048xbf16> {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %r:3 = stablehlo.while(%i = %c0, %ws = %w, %h = %x) : tensor<i32>, tensor<16x256x2048xbf16>, tensor<4096x2048xbf16>
    cond {
      %n = stablehlo.constant dense<16> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %z = stablehlo.constant dense<0> : tensor<i32>
      %s = stablehlo.dynamic_slice %ws, %i, %z, %z, sizes = [1, 256, 2048] : (tensor<16x256x2048xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x256x2048xbf16>
      %l = stablehlo.reshape %s : (tensor<1x256x2048xbf16>) -> tensor<256x2048xbf16>
      %g = "stablehlo.all_gather"(%l) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> : (tensor<256x2048xbf16>) -> tensor<2048x2048xbf16>
      %m = stablehlo.dot_general %h, %g, contracting_dims = [1] x [0] : (tensor<4096x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<4096x2048xbf16>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %ws, %m : tensor<i32>, tensor<16x256x2048xbf16>, tensor<4096x2048xbf16>
    }
    return %r#2 : tensor<4096x2048xbf16>
  }
})");
  ASSERT_NE(module, nullptr);
  auto slice = pod::FindSlice("v5e-8");
  auto pricer = pod::CollectivePricer::Create(*slice, 1, 8);
  ASSERT_TRUE(pricer->Prepare(*module).ok());
  StaticOptions options{.pod = &*pricer, .overlap = true};
  auto t = TimeStatically(*module, "main", slice->chip, options);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  double gather = 0, matmul = 0;
  for (const OpEvent& e : t->events()) {
    if (e.op->name_str() == "stablehlo.all_gather") gather = e.seconds();
    if (e.op->name_str() == "stablehlo.dot_general") matmul = e.seconds();
  }
  ASSERT_GT(gather, 0);
  ASSERT_GT(matmul, gather);  // the matmul can hide the gathers
  // Only the first iteration's gather waits.
  EXPECT_NEAR(t->exposed_communication_seconds(), gather / 16, gather * 1e-9);
}

// %x moved to host memory and back while a matmul that does not need it
// runs; an add needs both.
constexpr const char* kOffload = R"(
  func.func @main(%x: tensor<1024x1024xf32>, %w: tensor<2048x2048xbf16>) -> tensor<2048x2048xf32> {
    %h = stablehlo.custom_call @annotate_device_placement(%x) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %m = stablehlo.dot_general %w, %w, contracting_dims = [1] x [0] : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xf32>
    %d = stablehlo.custom_call @annotate_device_placement(%h) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "device"}} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %r = stablehlo.reshape %d : (tensor<1024x1024xf32>) -> tensor<2048x512xf32>
    %c = stablehlo.concatenate %r, %r, %r, %r, dim = 1 : (tensor<2048x512xf32>, tensor<2048x512xf32>, tensor<2048x512xf32>, tensor<2048x512xf32>) -> tensor<2048x2048xf32>
    %y = stablehlo.add %m, %c : tensor<2048x2048xf32>
    return %y : tensor<2048x2048xf32>
  })";

// Moves to and from host memory run on the host link's lane beside the
// compute, each priced as its bytes over the link.
TEST(OverlapTest, HostTransfersRunBesideCompute) {
  auto module = test::ParseVerified(kOffload);
  const hw::ChipSpec chip = test::V5e();
  ASSERT_GT(chip.host.bytes_per_s, 0);
  double total[2], exposed[2], moves = 0, matmul = 0;
  for (bool overlap : {false, true}) {
    auto t = TimeStatically(*module, "main", chip, StaticOptions{.overlap = overlap});
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    total[overlap] = t->total_seconds();
    exposed[overlap] = t->exposed_communication_seconds();
    moves = matmul = 0;
    for (const OpEvent& e : t->events()) {
      if (e.op->name_str() == "stablehlo.dot_general") matmul = e.seconds();
      if (e.op->name_str() != "stablehlo.custom_call") continue;
      EXPECT_EQ(e.cost.bound, hw::Bound::kHost);
      EXPECT_NEAR(e.cost.unit_seconds[static_cast<int>(hw::Unit::kHost)],
                  (4 << 20) / chip.host.bytes_per_s + chip.host.latency_s, 1e-12);
      moves += e.seconds();
    }
  }
  ASSERT_GT(moves, 0);
  ASSERT_GT(matmul, 0);
  EXPECT_NEAR(exposed[false], moves, 1e-12);
  EXPECT_NEAR(total[false] - total[true], std::min(moves, matmul), 1e-12);
  EXPECT_NEAR(exposed[true], std::max(0.0, moves - matmul), 1e-12);
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
