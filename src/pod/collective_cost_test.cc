#include "tpusim/pod/collective_cost.h"

#include <gtest/gtest.h>

#include <memory>

#include "testing/test_util.h"

namespace tpusim::pod {
namespace {

using ops::CollectiveKind;

constexpr double kW = 1e9;       // bytes/s, one link, one way
constexpr double kAlpha = 1e-6;  // seconds a hop
constexpr double kDcn = 1e8;     // bytes/s a chip
constexpr double kB = 1 << 24;   // bytes a device

// A slice of `chip` with round link figures.
Slice RoundSlice(const char* chip, const char* topology, int64_t slices = 1) {
  hw::ChipSpec c = *hw::FindPreset(chip);
  c.ici.link_bytes_per_s = kW;
  c.ici.hop_latency_s = kAlpha;
  c.slice.dcn_bytes_per_s_per_chip = kDcn;
  return *MakeSlice(c, topology, slices);
}

std::vector<int64_t> Range(int64_t from, int64_t to, int64_t step = 1) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; i += step) v.push_back(i);
  return v;
}

// All-gather on a wrapped ring of n: two rings, (n-1)/n of the data each
// way; the farthest shard is n/2 hops away.
TEST(CollectiveCostTest, RingWithWraparound) {
  Slice s = RoundSlice("v5e", "16x16");
  const double n = 16;
  CollectiveCost ag = PriceCollective(s, CollectiveKind::kAllGather, kB, {Range(0, 16)});
  EXPECT_DOUBLE_EQ(ag.ici_seconds, (n - 1) / n * kB / (2 * kW));
  EXPECT_EQ(ag.hops, 8);
  EXPECT_DOUBLE_EQ(ag.seconds, (n - 1) / n * kB / (2 * kW) + 8 * kAlpha);
  CollectiveCost rs = PriceCollective(s, CollectiveKind::kReduceScatter, kB, {Range(0, 16)});
  EXPECT_DOUBLE_EQ(rs.seconds, ag.seconds);
  // All-reduce = reduce-scatter + all-gather: 2(n-1)/n B / (2W) + 2 (n/2) alpha.
  CollectiveCost ar = PriceCollective(s, CollectiveKind::kAllReduce, kB, {Range(0, 16)});
  EXPECT_DOUBLE_EQ(ar.seconds, 2 * (n - 1) / n * kB / (2 * kW) + 16 * kAlpha);
  EXPECT_DOUBLE_EQ(ar.axis_bytes[1], 0.0);  // the ring never leaves its row
}

// Without wraparound a line carries (n-1)/n of the data over each link each
// way, twice a torus ring's time, and the ends are n - 1 hops apart.
TEST(CollectiveCostTest, RingWithoutWraparound) {
  Slice s = RoundSlice("v5e", "4x4");
  const double n = 4;
  CollectiveCost ag = PriceCollective(s, CollectiveKind::kAllGather, kB, {Range(0, 4)});
  EXPECT_DOUBLE_EQ(ag.ici_seconds, (n - 1) / n * kB / kW);
  EXPECT_EQ(ag.hops, 3);
  // Along y: devices 0, 4, 8, 12.
  CollectiveCost col = PriceCollective(s, CollectiveKind::kAllGather, kB, {Range(0, 16, 4)});
  EXPECT_DOUBLE_EQ(col.seconds, ag.seconds);
  EXPECT_DOUBLE_EQ(col.axis_bytes[0], 0.0);
}

// A whole 2D torus: one part of the data per axis, so both axes' links work
// at once: (N-1)/N B / (2 axes x 2 directions x W).
TEST(CollectiveCostTest, TwoAxesShareTheWork) {
  Slice s = RoundSlice("v5e", "16x16");
  const double n = 256;
  CollectiveCost ag = PriceCollective(s, CollectiveKind::kAllGather, kB, {Range(0, 256)});
  EXPECT_DOUBLE_EQ(ag.ici_seconds, (n - 1) / n * kB / (4 * kW));
  EXPECT_EQ(ag.hops, 16);
  // A 3D torus cube: three axes.
  Slice cube = RoundSlice("v5p", "4x4x4");
  CollectiveCost ar = PriceCollective(cube, CollectiveKind::kAllReduce, kB, {Range(0, 64)});
  EXPECT_DOUBLE_EQ(ar.ici_seconds, 2 * 63.0 / 64 * kB / (6 * kW));
  EXPECT_EQ(ar.hops, 2 * 6);
}

// Groups run at once: rows of a torus use their own links, but groups
// whose routes cross share a link's bandwidth.
TEST(CollectiveCostTest, GroupsThatShareLinksContend) {
  Slice s = RoundSlice("v5e", "16x16");
  Groups rows;
  for (int64_t y = 0; y < 16; ++y) rows.push_back(Range(16 * y, 16 * y + 16));
  EXPECT_DOUBLE_EQ(PriceCollective(s, CollectiveKind::kAllReduce, kB, rows).seconds,
                   PriceCollective(s, CollectiveKind::kAllReduce, kB, {rows[0]}).seconds);

  Slice line = RoundSlice("v5e", "4x4");
  CollectiveCost one = PriceCollective(line, CollectiveKind::kAllGather, kB, {{0, 2}});
  CollectiveCost two = PriceCollective(line, CollectiveKind::kAllGather, kB, {{0, 2}, {1, 3}});
  EXPECT_DOUBLE_EQ(two.ici_seconds, 2 * one.ici_seconds);  // both cross the link 1-2
}

TEST(CollectiveCostTest, PermuteAllToAllAndBroadcast) {
  Slice s = RoundSlice("v5e", "4x4");
  // One neighbour: the whole array over one link, one hop.
  CollectiveCost next = PriceCollective(s, CollectiveKind::kPermute, kB, {{0, 1}});
  EXPECT_DOUBLE_EQ(next.seconds, kB / kW + kAlpha);
  // A shift by one along a wrapped row: every link carries one array.
  Slice torus = RoundSlice("v5e", "16x16");
  Groups shift;
  for (int64_t x = 0; x < 16; ++x) shift.push_back({x, (x + 1) % 16});
  EXPECT_DOUBLE_EQ(PriceCollective(torus, CollectiveKind::kPermute, kB, shift).ici_seconds,
                   kB / kW);
  // All-to-all of 4 on a line: the middle link carries 1/4 of the data of
  // each of the 2 x 2 pairs across it, each way.
  CollectiveCost a2a = PriceCollective(s, CollectiveKind::kAllToAll, kB, {Range(0, 4)});
  EXPECT_DOUBLE_EQ(a2a.ici_seconds, 4 * (kB / 4) / kW);
  // A broadcast pipelines the array down a chain.
  CollectiveCost bc = PriceCollective(s, CollectiveKind::kBroadcast, kB, {Range(0, 4)});
  EXPECT_DOUBLE_EQ(bc.seconds, kB / kW + 3 * kAlpha);
}

// Two slices: the all-reduce between them crosses the DCN, half the array
// each way for the reduce-scatter and again for the all-gather.
TEST(CollectiveCostTest, SlicesTalkOverDcn) {
  Slice s = RoundSlice("v5e", "2x2", 2);
  CollectiveCost ar = PriceCollective(s, CollectiveKind::kAllReduce, kB, {{0, 4}});
  EXPECT_DOUBLE_EQ(ar.dcn_seconds, kB / kDcn);
  EXPECT_DOUBLE_EQ(ar.ici_seconds, 0.0);
  EXPECT_DOUBLE_EQ(ar.dcn_bytes, 2 * kB);  // B each way
}

// Two TensorCores of one chip talk without the ICI.
TEST(CollectiveCostTest, CoresOfAChipAreFree) {
  Slice s = RoundSlice("v3", "2x2");
  CollectiveCost ar = PriceCollective(s, CollectiveKind::kAllReduce, kB, {{0, 1}});
  EXPECT_DOUBLE_EQ(ar.seconds, 0.0);
}

TEST(CollectiveCostTest, PricerReadsGroupsFromTheOp) {
  auto module = test::ParseVerified(R"(
module attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 16 : i32} {
  func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    %0 = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<1x16xi64>} : (tensor<1024xf32>) -> tensor<1024xf32>
    return %0 : tensor<1024xf32>
  }
})");
  Slice s = RoundSlice("v5e", "16x16");
  auto pricer = CollectivePricer::Create(s, 16, 1);
  ASSERT_TRUE(pricer.ok()) << pricer.status().ToString();
  ASSERT_TRUE(pricer->Prepare(*module).ok());
  ASSERT_NE(module, nullptr);
  const ir::Operation& op = *module->functions()[0]->entry().ops()[0];
  auto cost = pricer->Price(op, {CollectiveKind::kAllReduce, 4096});
  ASSERT_TRUE(cost.ok()) << cost.status().ToString();
  EXPECT_DOUBLE_EQ(cost->seconds,
                   PriceCollective(s, CollectiveKind::kAllReduce, 4096, {Range(0, 16)}).seconds);

  // Another program's pricer sharing the first's patterns prices the same.
  auto patterns = std::make_shared<CollectivePatterns>(s);
  for (int program = 0; program < 2; ++program) {
    auto shared = CollectivePricer::Create(s, 16, 1, patterns);
    ASSERT_TRUE(shared.ok());
    auto again = shared->Price(op, {CollectiveKind::kAllReduce, 4096});
    ASSERT_TRUE(again.ok());
    EXPECT_DOUBLE_EQ(again->seconds, cost->seconds);
  }
  EXPECT_DOUBLE_EQ(patterns->Reference(CollectiveKind::kAllReduce, {Range(0, 16)}).seconds,
                   PriceCollective(s, CollectiveKind::kAllReduce, 1 << 20, {Range(0, 16)}).seconds);

  EXPECT_EQ(CollectivePricer::Create(s, 512, 1).status().code(), StatusCode::kInvalidArgument);
  auto small = CollectivePricer::Create(s, 8, 1);
  Status bad = small->Prepare(*module);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("all_reduce"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace tpusim::pod
