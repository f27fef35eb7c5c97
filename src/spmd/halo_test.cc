// Windowed ops split along their windowed dimensions: each device borrows
// its neighbours' edge rows (collective permutes) instead of gathering the
// array, and computes the same windows (test::SameValues: bit for bit but
// for the order of a sum).
#include <gtest/gtest.h>

#include "spmd/run_test_util.h"
#include "testing/test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/spmd/partitioner.h"

namespace tpusim::spmd {
namespace {

struct Case {
  int devices;
  std::string sharding;  // of the 1xHxWx2 input
  std::string op;        // %y from %x, and tensor type %t of its result
  std::string result;    // %y's type
  int permutes;          // collective permutes the halos take
};

// A global program: an input of varied negative values (so that no window
// of a max pool can take a zero for its padding), sharded, through `c.op`;
// the result keeps the input's sharding.
std::string Program(const Case& c) {
  return "module attributes {mhlo.num_partitions = " + std::to_string(c.devices) +
         " : i32, mhlo.num_replicas = 1 : i32} {\n"
         "  func.func public @main() -> (" +
         c.result + " {mhlo.sharding = \"" + c.sharding +
         "\"}) {\n"
         "    %i = stablehlo.iota dim = 0 : tensor<128xf32>\n"
         "    %sin = stablehlo.sine %i : tensor<128xf32>\n"
         "    %two = stablehlo.constant dense<2.0> : tensor<128xf32>\n"
         "    %s = stablehlo.subtract %sin, %two : tensor<128xf32>\n"
         "    %r = stablehlo.reshape %s : (tensor<128xf32>) -> tensor<1x8x8x2xf32>\n"
         "    %x = stablehlo.custom_call @Sharding(%r) {mhlo.sharding = \"" +
         c.sharding +
         "\"} : (tensor<1x8x8x2xf32>) -> tensor<1x8x8x2xf32>\n"
         "    %k0 = stablehlo.iota dim = 0 : tensor<54xf32>\n"
         "    %k1 = stablehlo.cosine %k0 : tensor<54xf32>\n"
         "    %k = stablehlo.reshape %k1 : (tensor<54xf32>) -> tensor<3x3x2x3xf32>\n"
         "    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
         "    " +
         c.op +
         "\n"
         "    return %y : " +
         c.result +
         "\n"
         "  }\n"
         "}\n";
}

// A 3x3 convolution with `stride` and padding [lo, hi] on both spatial
// dimensions; the caller appends the result type.
std::string Conv(int stride, int lo, int hi) {
  const std::string st = std::to_string(stride);
  const std::string pad = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return "%y = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, "
         "f], window = {stride = [" +
         st + ", " + st + "], pad = [" + pad + ", " + pad +
         "]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
         "(tensor<1x8x8x2xf32>, tensor<3x3x2x3xf32>) -> ";
}

std::string MaxPool(int window, int stride, int lo, int hi) {
  const std::string w = std::to_string(window), st = std::to_string(stride);
  const std::string pad = "[0, 0], [" + std::to_string(lo) + ", " + std::to_string(hi) + "], [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + "], [0, 0]";
  return "%y = \"stablehlo.reduce_window\"(%x, %ninf) <{window_dimensions = array<i64: 1, " + w +
         ", " + w + ", 1>, window_strides = array<i64: 1, " + st + ", " + st +
         ", 1>, padding = dense<[" + pad +
         "]> : tensor<4x2xi64>}> ({\n"
         "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
         "      %m = stablehlo.maximum %a, %b : tensor<f32>\n"
         "      stablehlo.return %m : tensor<f32>\n"
         "    }) : (tensor<1x8x8x2xf32>, tensor<f32>) -> ";
}

void Check(const Case& c) {
  const std::string text = Program(c);
  auto global = frontend::ParseStableHlo(text, "halo.mlir");
  ASSERT_TRUE(global.ok()) << global.status().ToString() << "\n" << text;
  PartitionStats stats;
  auto partitioned = Partition(**global, "main", &stats);
  ASSERT_TRUE(partitioned.ok()) << partitioned.status().ToString();
  auto count = [&](const char* op) {
    auto it = stats.inserted.find(op);
    return it == stats.inserted.end() ? 0 : it->second;
  };
  EXPECT_EQ(count("stablehlo.collective_permute"), c.permutes) << c.op;
  EXPECT_EQ(count("stablehlo.all_gather"), 0) << c.op;
  const test::Outcome whole = test::RunWhole(**global, "main");
  const test::Outcome split = test::RunPartitioned(**partitioned, "main");
  ASSERT_TRUE(whole.status.ok()) << whole.status.ToString();
  ASSERT_TRUE(split.status.ok()) << split.status.ToString();
  ASSERT_EQ(split.values.size(), 1u);
  EXPECT_TRUE(test::SameValues(whole.values[0], split.values[0]))
      << c.op << "\nwhole: " << whole.values[0].ToString()
      << "\nsplit: " << split.values[0].ToString();
}

const char kRows2[] = "{devices=[1,2,1,1]<=[2]}";
const char kRows4[] = "{devices=[1,4,1,1]<=[4]}";
const char kGrid[] = "{devices=[1,2,2,1]<=[4]}";

TEST(Halo, SameConvolutionBorrowsARowEachSide) {
  const std::string conv = Conv(1, 1, 1);
  Check({2, kRows2, conv + "tensor<1x8x8x3xf32>", "tensor<1x8x8x3xf32>", 2});
  Check({4, kRows4, conv + "tensor<1x8x8x3xf32>", "tensor<1x8x8x3xf32>", 2});
}

TEST(Halo, StridedConvolutionBorrowsFromTheNextDeviceOnly) {
  const std::string conv = Conv(2, 0, 1) + "tensor<1x4x4x3xf32>";
  Check({2, kRows2, conv, "tensor<1x4x4x3xf32>", 1});
}

TEST(Halo, BothSpatialDimensionsSplitTakeTheCornersAlong) {
  Check({4, kGrid, Conv(1, 1, 1) + "tensor<1x8x8x3xf32>", "tensor<1x8x8x3xf32>", 4});
  Check({4, kGrid, MaxPool(3, 1, 1, 1) + "tensor<1x8x8x2xf32>", "tensor<1x8x8x2xf32>", 4});
}

// The devices at the ends read the init value (-inf), not zeros.
TEST(Halo, PoolingEdgesReadTheInitValue) {
  Check({4, kRows4, MaxPool(3, 1, 1, 1) + "tensor<1x8x8x2xf32>", "tensor<1x8x8x2xf32>", 2});
}

TEST(Halo, WindowsWithinEachPartNeedNoHalo) {
  Check({4, kRows4, MaxPool(2, 2, 0, 0) + "tensor<1x4x4x2xf32>", "tensor<1x4x4x2xf32>", 0});
  // Windows of one row every second row: each device drops its last row.
  Check({2, kRows2, MaxPool(1, 2, 0, 0) + "tensor<1x4x4x2xf32>", "tensor<1x4x4x2xf32>", 0});
}

// Without padding the windows do not split evenly: the input is gathered.
TEST(Halo, UnevenWindowsGatherTheInput) {
  const std::string text =
      Program({2, kRows2, Conv(1, 0, 0) + "tensor<1x6x6x3xf32>", "tensor<1x6x6x3xf32>", 0});
  auto global = frontend::ParseStableHlo(text, "halo.mlir");
  ASSERT_TRUE(global.ok()) << global.status().ToString();
  PartitionStats stats;
  auto partitioned = Partition(**global, "main", &stats);
  ASSERT_TRUE(partitioned.ok()) << partitioned.status().ToString();
  EXPECT_EQ(stats.inserted.count("stablehlo.collective_permute"), 0u);
  EXPECT_GT(stats.inserted["stablehlo.all_gather"], 0);
  const test::Outcome whole = test::RunWhole(**global, "main");
  const test::Outcome split = test::RunPartitioned(**partitioned, "main");
  ASSERT_TRUE(split.status.ok()) << split.status.ToString();
  EXPECT_TRUE(test::SameValues(whole.values[0], split.values[0]));
}

}  // namespace
}  // namespace tpusim::spmd
