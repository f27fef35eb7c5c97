// sdy.manual_computation on a 1 x 4 grid over a 2 x 2 mesh ["x", "y"]
// (device = 2 x + y), run through interpreter.run_parallel. Every device
// gets the whole 4x4 %w = [[0..3], [10..13], [20..23], [30..33]].
#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"
#include "tpusim/ir/printer.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunMlir;
using testing::VerifyMlir;

// A module whose @f wraps `body` (ops ending in `sdy.return`, with tile
// argument %t and, as %pid, the partition id as a scalar of the tile's
// element type) in a manual computation, and whose @main runs @f on four
// devices and returns the four results.
std::string Program(const std::string& head, const std::string& body,
                    const std::string& result_type) {
  const std::string rt = result_type;
  return R"(sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @f(%w: tensor<4x4xi64>) -> )" +
         rt + " {\n  %m = " + head + " {\n" + R"(
    %p = stablehlo.partition_id : tensor<ui32>
    %pid = stablehlo.convert %p : (tensor<ui32>) -> tensor<i64>
)" + body +
         "\n  } : (tensor<4x4xi64>) -> " + rt + "\n  func.return %m : " + rt + R"(
}
func.func @main() -> ()" +
         rt + ", " + rt + ", " + rt + ", " + rt + R"() {
  %w = stablehlo.constant dense<[[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23], [30, 31, 32, 33]]> : tensor<4x4xi64>
  %r:4 = "interpreter.run_parallel"(%w, %w, %w, %w) {programs = [[@f, @f, @f, @f]]} : (tensor<4x4xi64>, tensor<4x4xi64>, tensor<4x4xi64>, tensor<4x4xi64>) -> ()" +
         rt + ", " + rt + ", " + rt + ", " + rt + R"()
  func.return %r#0, %r#1, %r#2, %r#3 : )" +
         rt + ", " + rt + ", " + rt + ", " + rt + "\n}\n";
}

std::vector<std::vector<int64_t>> RunGrid(const std::string& text) {
  return testing::RunAndReadAll<int64_t>(text);
}

constexpr const char* kAddPid = R"(
    %b = stablehlo.broadcast_in_dim %pid, dims = [] : (tensor<i64>) -> tensor<2x2xi64>
    %r = stablehlo.add %t, %b : tensor<2x2xi64>
    sdy.return %r : tensor<2x2xi64>)";

TEST(ManualComputation, EachDeviceWorksOnItsTileAndTheTilesMakeTheResult) {
  const std::string head =
      R"(sdy.manual_computation(%w) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%t: tensor<2x2xi64>))";
  // Tile (i, j) is on device 2i + j, which adds its id.
  const std::vector<int64_t> want = {0, 1, 3, 4, 10, 11, 13, 14, 22, 23, 25, 26, 32, 33, 35, 36};
  auto r = RunGrid(Program(head, kAddPid, "tensor<4x4xi64>"));
  EXPECT_EQ(r, std::vector<std::vector<int64_t>>(4, want));
}

TEST(ManualComputation, TheMeshsAxisOrderPlacesTheTiles) {
  // Dimension 0 split by "y" then dimension 1 by "x": tile (i, j) is on
  // device 2j + i.
  const std::string head =
      R"(sdy.manual_computation(%w) in_shardings=[<@mesh, [{"y"}, {"x"}]>] out_shardings=[<@mesh, [{"y"}, {"x"}]>] manual_axes={"x", "y"} (%t: tensor<2x2xi64>))";
  const std::vector<int64_t> want = {0, 1, 4, 5, 10, 11, 14, 15, 21, 22, 25, 26, 31, 32, 35, 36};
  auto r = RunGrid(Program(head, kAddPid, "tensor<4x4xi64>"));
  EXPECT_EQ(r, std::vector<std::vector<int64_t>>(4, want));
}

TEST(ManualComputation, FreeAxesLeaveDimensionsWhole) {
  // Only "x" is manual: a device holds half the rows and every column, and
  // the rows of devices 2x and 2x + 1 agree.
  const std::string head =
      R"(sdy.manual_computation(%w) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%t: tensor<2x4xi64>))";
  const std::string body = R"(
    %r = stablehlo.add %t, %t : tensor<2x4xi64>
    sdy.return %r : tensor<2x4xi64>)";
  const std::vector<int64_t> want = {0, 2, 4, 6, 20, 22, 24, 26, 40, 42, 44, 46, 60, 62, 64, 66};
  auto r = RunGrid(Program(head, body, "tensor<4x4xi64>"));
  EXPECT_EQ(r, std::vector<std::vector<int64_t>>(4, want));
}

TEST(ManualComputation, AReplicatedResultIsTheBodysOwn) {
  // The body sums the four tiles: every device returns the same 2x2.
  const std::string head =
      R"(sdy.manual_computation(%w) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"x", "y"} (%t: tensor<2x2xi64>))";
  const std::string body = R"(
    %r = "stablehlo.all_reduce"(%t) ({
    ^bb0(%a: tensor<i64>, %c: tensor<i64>):
      %s = stablehlo.add %a, %c : tensor<i64>
      stablehlo.return %s : tensor<i64>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2x2xi64>) -> tensor<2x2xi64>
    sdy.return %r : tensor<2x2xi64>)";
  const std::vector<int64_t> want = {0 + 2 + 20 + 22, 1 + 3 + 21 + 23, 10 + 12 + 30 + 32,
                                     11 + 13 + 31 + 33};
  auto r = RunGrid(Program(head, body, "tensor<2x2xi64>"));
  EXPECT_EQ(r, std::vector<std::vector<int64_t>>(4, want));
}

TEST(ManualComputation, TilesThatDoNotMakeTheWholeAreAnError) {
  // Split only by "x" (2 tiles), the 4 rows make 2-row tiles, not 1-row ones.
  const std::string head =
      R"(sdy.manual_computation(%w) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%t: tensor<1x4xi64>))";
  const std::string body = "    sdy.return %t : tensor<1x4xi64>";
  auto r = RunMlir(Program(head, body, "tensor<4x4xi64>"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tiles of tensor<1x4xi64> do not make up tensor<4x4xi64>"),
            std::string::npos)
      << r.status().ToString();
}

TEST(ManualComputation, ShapeRuleChecksCountsAndTiles) {
  const std::string two =
      R"(sdy.manual_computation(%w) in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%t: tensor<2x4xi64>))";
  Status st = VerifyMlir(Program(two, "    sdy.return %t : tensor<2x4xi64>", "tensor<4x4xi64>"));
  EXPECT_NE(st.message().find("2 in_shardings for 1 values"), std::string::npos) << st.ToString();
  const std::string bad_tile =
      R"(sdy.manual_computation(%w) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%t: tensor<3x4xi64>))";
  st = VerifyMlir(Program(bad_tile, "    sdy.return %t : tensor<3x4xi64>", "tensor<4x4xi64>"));
  EXPECT_NE(st.message().find("argument 0 tensor<3x4xi64> is not a tile of tensor<4x4xi64>"),
            std::string::npos)
      << st.ToString();
  EXPECT_NE(st.ToString().find("test.mlir:3:"), std::string::npos) << st.ToString();
}

TEST(ManualComputation, PrintsAndReadsBack) {
  const std::string head =
      R"(sdy.manual_computation(%w) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%t: tensor<2x2xi64>))";
  const std::string text = Program(head, kAddPid, "tensor<4x4xi64>");
  auto module = frontend::ParseStableHlo(text, "test.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const std::string printed = ir::PrintModule(**module);
  // MLIR's generic form of the op, as sdy_opt prints it.
  EXPECT_NE(
      printed.find(
          R"({in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>, manual_axes = #sdy<manual_axes{"x", "y"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>})"),
      std::string::npos)
      << printed;
  auto again = RunMlir(printed);
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << printed;
  EXPECT_EQ(Read<int64_t>((*again)[3]), Read<int64_t>((*RunMlir(text))[3]));
}

}  // namespace
}  // namespace tpusim::ops
