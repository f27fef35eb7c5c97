// Dimensions that the devices do not divide split as XLA splits them: each
// device's part the size of the first ones, the last ones padded at the
// end. Padding never reaches the results: reductions read it as the value
// that changes nothing, gathers cut it off.
#include <gtest/gtest.h>

#include <cmath>

#include "spmd/run_test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/sharding.h"
#include "tpusim/spmd/partitioner.h"

namespace tpusim::spmd {
namespace {

struct Partitioned {
  std::unique_ptr<ir::Module> global, local;
  PartitionStats stats;
  int Count(const std::string& op) const {
    auto it = stats.inserted.find(op);
    return it == stats.inserted.end() ? 0 : it->second;
  }
};

// `body` as the entry @main of a global program for `devices`; `results`:
// its result types with their shardings.
Partitioned PartitionMain(int devices, const std::string& results, const std::string& body) {
  const std::string text = "module attributes {mhlo.num_partitions = " + std::to_string(devices) +
                           " : i32, mhlo.num_replicas = 1 : i32} {\n"
                           "  func.func public @main() -> (" +
                           results + ") {\n" + body + "\n  }\n}\n";
  Partitioned p;
  auto global = frontend::ParseStableHlo(text, "uneven.mlir");
  EXPECT_TRUE(global.ok()) << global.status().ToString() << "\n" << text;
  if (!global.ok()) return p;
  p.global = std::move(*global);
  auto local = Partition(*p.global, "main", &p.stats);
  EXPECT_TRUE(local.ok()) << local.status().ToString();
  if (local.ok()) p.local = std::move(*local);
  return p;
}

// The partitioned run gives the whole run's f32 results, to `tolerance`
// (0: bit for bit).
void ExpectSameResults(const Partitioned& p, float tolerance = 0) {
  ASSERT_TRUE(p.local);
  const test::Outcome whole = test::RunWhole(*p.global, "main");
  const test::Outcome split = test::RunPartitioned(*p.local, "main");
  ASSERT_TRUE(whole.status.ok()) << whole.status.ToString();
  ASSERT_TRUE(split.status.ok()) << split.status.ToString();
  ASSERT_EQ(whole.values.size(), split.values.size());
  for (size_t i = 0; i < whole.values.size(); ++i) {
    const Tensor& w = whole.values[i];
    const Tensor& s = split.values[i];
    ASSERT_EQ(w.shape(), s.shape()) << "result " << i;
    if (tolerance == 0) {
      EXPECT_TRUE(test::SameValues(w, s)) << w.ToString() << " vs " << s.ToString();
      continue;
    }
    for (int64_t e = 0; e < w.num_elements(); ++e) {
      EXPECT_NEAR(w.data<float>()[e], s.data<float>()[e], tolerance) << "result " << i << " @" << e;
    }
  }
}

TEST(Uneven, ElementwiseTilesArePaddedAndReassembled) {
  Partitioned p = PartitionMain(4, "tensor<6xf32> {mhlo.sharding = \"{devices=[4]<=[4]}\"}", R"(
    %i = stablehlo.iota dim = 0 : tensor<6xf32>
    %x = stablehlo.custom_call @Sharding(%i) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<6xf32>) -> tensor<6xf32>
    %y = stablehlo.exponential %x : tensor<6xf32>
    return %y : tensor<6xf32>)");
  ASSERT_TRUE(p.local);
  const ir::Function& f = *p.local->Lookup("main");
  EXPECT_EQ(f.type().results[0].shape(), (ir::Shape{2}));
  EXPECT_EQ(f.result_attrs()[0].Get(ir::kGlobalShape).AsInts(), (std::vector<int64_t>{6}));
  ExpectSameResults(p);
}

// The padding of the constant's slices holds zeros, more than any element:
// the max must read it as the init value, -inf.
TEST(Uneven, MaxReadsPaddingAsItsInitValue) {
  Partitioned p = PartitionMain(4, "tensor<f32>", R"(
    %c = stablehlo.constant dense<[-5.0, -3.0, -4.0, -7.0, -6.0, -2.0]> : tensor<6xf32>
    %x = stablehlo.custom_call @Sharding(%c) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<6xf32>) -> tensor<6xf32>
    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
    return %m : tensor<f32>)");
  EXPECT_EQ(p.Count("stablehlo.all_reduce"), 1);
  ExpectSameResults(p);
}

// exp turns zero padding into ones on both sides of the contraction: the
// dot must read it as zeros.
TEST(Uneven, ContractionReadsPaddingAsZero) {
  Partitioned p = PartitionMain(4, "tensor<3x2xf32>", R"(
    %i = stablehlo.iota dim = 0 : tensor<18xf32>
    %tenth = stablehlo.constant dense<0.1> : tensor<18xf32>
    %s = stablehlo.multiply %i, %tenth : tensor<18xf32>
    %e = stablehlo.exponential %s : tensor<18xf32>
    %a0 = stablehlo.reshape %e : (tensor<18xf32>) -> tensor<3x6xf32>
    %b0 = stablehlo.reshape %e : (tensor<18xf32>) -> tensor<6x3xf32>
    %a = stablehlo.custom_call @Sharding(%a0) {mhlo.sharding = "{devices=[1,4]<=[4]}"} : (tensor<3x6xf32>) -> tensor<3x6xf32>
    %b1 = stablehlo.custom_call @Sharding(%b0) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<6x3xf32>) -> tensor<6x3xf32>
    %a1 = stablehlo.exponential %a : tensor<3x6xf32>
    %b2 = stablehlo.exponential %b1 : tensor<6x3xf32>
    %b = stablehlo.slice %b2 [0:6, 0:2] : (tensor<6x3xf32>) -> tensor<6x2xf32>
    %d = stablehlo.dot_general %a1, %b, contracting_dims = [1] x [0] : (tensor<3x6xf32>, tensor<6x2xf32>) -> tensor<3x2xf32>
    return %d : tensor<3x2xf32>)");
  EXPECT_EQ(p.Count("stablehlo.all_reduce"), 1);
  EXPECT_EQ(p.Count("stablehlo.all_gather"), 0);
  ExpectSameResults(p, 1e-2f);
}

// From rows split 4 ways to columns split 4 ways, both uneven: no
// all-to-all (the parts differ in size), a gather and a slice.
TEST(Uneven, ReshardingGathersAndCutsOffThePadding) {
  Partitioned p = PartitionMain(4, "tensor<6x5xf32> {mhlo.sharding = \"{devices=[1,4]<=[4]}\"}", R"(
    %i = stablehlo.iota dim = 0 : tensor<30xf32>
    %r = stablehlo.reshape %i : (tensor<30xf32>) -> tensor<6x5xf32>
    %x = stablehlo.custom_call @Sharding(%r) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<6x5xf32>) -> tensor<6x5xf32>
    %y = stablehlo.sine %x : tensor<6x5xf32>
    return %y : tensor<6x5xf32>)");
  EXPECT_EQ(p.Count("stablehlo.all_to_all"), 0);
  EXPECT_EQ(p.Count("stablehlo.all_gather"), 1);
  ExpectSameResults(p);
}

// Two mesh axes, both dimensions uneven, a sum over one of them.
TEST(Uneven, TwoAxesAndASum) {
  Partitioned p = PartitionMain(
      8, "tensor<3xf32> {mhlo.sharding = \"{devices=[2,4]<=[8] last_tile_dim_replicate}\"}", R"(
    %i = stablehlo.iota dim = 0 : tensor<15xf32>
    %r = stablehlo.reshape %i : (tensor<15xf32>) -> tensor<3x5xf32>
    %x = stablehlo.custom_call @Sharding(%r) {mhlo.sharding = "{devices=[2,4]<=[8]}"} : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %e = stablehlo.cosine %x : tensor<3x5xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
    return %s : tensor<3xf32>)");
  EXPECT_EQ(p.Count("stablehlo.all_reduce"), 1);
  ExpectSameResults(p, 1e-5f);
}

// A reshape merging a padded dimension would misplace rows: it gathers.
TEST(Uneven, MergingReshapesGatherFirst) {
  Partitioned p = PartitionMain(2, "tensor<15xf32>", R"(
    %i = stablehlo.iota dim = 0 : tensor<15xf32>
    %r = stablehlo.reshape %i : (tensor<15xf32>) -> tensor<3x5xf32>
    %x = stablehlo.custom_call @Sharding(%r) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %y = stablehlo.reshape %x : (tensor<3x5xf32>) -> tensor<15xf32>
    return %y : tensor<15xf32>)");
  ExpectSameResults(p);
}

}  // namespace
}  // namespace tpusim::spmd
