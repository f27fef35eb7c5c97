// Collective ops on a 2 x 2 grid (2 replicas x 2 partitions), run through
// interpreter.run_parallel. Process p = replica * 2 + partition gets operand
// [p, 10 + p] unless a test says otherwise.
#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunMlir;

// A module whose @main runs `body` (the body of @f(%x: tensor<2xi64>) ->
// `result_type`, ending in a value %r) on a 2x2 grid and returns the four
// results in process order.
std::string Grid(const std::string& body, const std::string& result_type = "tensor<2xi64>") {
  const std::string rt = result_type;
  return "func.func @f(%x: tensor<2xi64>) -> " + rt + " {\n" + body + "\n  func.return %r : " + rt +
         "\n}\n"
         "func.func @main() -> (" +
         rt + ", " + rt + ", " + rt + ", " + rt +
         ") {\n"
         "  %a = stablehlo.constant dense<[0, 10]> : tensor<2xi64>\n"
         "  %b = stablehlo.constant dense<[1, 11]> : tensor<2xi64>\n"
         "  %c = stablehlo.constant dense<[2, 12]> : tensor<2xi64>\n"
         "  %d = stablehlo.constant dense<[3, 13]> : tensor<2xi64>\n"
         "  %r:4 = \"interpreter.run_parallel\"(%a, %b, %c, %d) {programs = [[@f, @f], [@f, @f]]}"
         " : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> (" +
         rt + ", " + rt + ", " + rt + ", " + rt +
         ")\n"
         "  func.return %r#0, %r#1, %r#2, %r#3 : " +
         rt + ", " + rt + ", " + rt + ", " + rt + "\n}\n";
}

std::vector<std::vector<int64_t>> RunGrid(const std::string& text) {
  return testing::RunAndReadAll<int64_t>(text);
}

std::string AllReduce(const std::string& attrs) {
  return R"(  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%p: tensor<i64>, %q: tensor<i64>):
      %s = stablehlo.add %p, %q : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {)" +
         attrs + "} : (tensor<2xi64>) -> tensor<2xi64>";
}

using V = std::vector<std::vector<int64_t>>;

TEST(AllReduce, CrossReplicaGroupsPairTheReplicasOfEachPartition) {
  // Groups {(0,0),(1,0)} = processes {0, 2} and {(0,1),(1,1)} = {1, 3}.
  EXPECT_EQ(RunGrid(Grid(AllReduce("replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>"))),
            (V{{2, 22}, {4, 24}, {2, 22}, {4, 24}}));
}

TEST(AllReduce, CrossReplicaAndPartitionSpansTheWholeGrid) {
  EXPECT_EQ(RunGrid(Grid(AllReduce("replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, "
                                   "channel_handle = #stablehlo.channel_handle<handle = 1, "
                                   "type = 1>"))),
            (V{{6, 46}, {6, 46}, {6, 46}, {6, 46}}));
}

TEST(AllReduce, FlattenedIdsNameProcessesDirectly) {
  EXPECT_EQ(RunGrid(Grid(AllReduce("replica_groups = dense<[[0, 3], [1, 2]]> : tensor<2x2xi64>, "
                                   "channel_handle = #stablehlo.channel_handle<handle = 1, "
                                   "type = 1>, use_global_device_ids"))),
            (V{{3, 23}, {3, 23}, {3, 23}, {3, 23}}));
}

TEST(AllReduce, OutOfRangeGroupIsAnError) {
  auto r = RunMlir(Grid(AllReduce("replica_groups = dense<[[0, 5]]> : tensor<1x2xi64>")));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("group id 5 is out of range"), std::string::npos)
      << r.status().message();
}

TEST(AllGather, CrossPartitionViaChannelConcatenatesInGroupOrder) {
  // channel > 0, no global ids: cross_replica_and_partition over replica
  // group [1, 0]: order (1,0), (0,0), (1,1), (0,1) = processes 2, 0, 3, 1.
  std::string body = R"(  %r = "stablehlo.all_gather"(%x) {
    all_gather_dim = 0 : i64,
    replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>,
    channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>
  } : (tensor<2xi64>) -> tensor<8xi64>)";
  std::vector<int64_t> all = {2, 12, 0, 10, 3, 13, 1, 11};
  EXPECT_EQ(RunGrid(Grid(body, "tensor<8xi64>")), (V{all, all, all, all}));
}

TEST(ReduceScatter, EachProcessGetsItsShareOfTheSum) {
  std::string body = R"(  %r = "stablehlo.reduce_scatter"(%x) ({
    ^bb0(%p: tensor<i64>, %q: tensor<i64>):
      %s = stablehlo.add %p, %q : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {scatter_dimension = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<1xi64>)";
  EXPECT_EQ(RunGrid(Grid(body, "tensor<1xi64>")), (V{{2}, {4}, {22}, {24}}));
}

TEST(AllToAll, CrossPartitionExchangesHalves) {
  std::string body = R"(  %r = "stablehlo.all_to_all"(%x) {
    split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
    replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
    channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>
  } : (tensor<2xi64>) -> tensor<2xi64>)";
  // Partitions 0 and 1 of each replica swap: p0 gets [x0[0], x1[0]].
  EXPECT_EQ(RunGrid(Grid(body)), (V{{0, 1}, {10, 11}, {2, 3}, {12, 13}}));
}

TEST(CollectivePermute, TargetsGetTheirSourceOthersZeros) {
  std::string body = R"(  %r = "stablehlo.collective_permute"(%x) {
    source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>
  } : (tensor<2xi64>) -> tensor<2xi64>)";
  // Cross-replica: replica 0 -> 1 within each partition.
  EXPECT_EQ(RunGrid(Grid(body)), (V{{0, 0}, {0, 0}, {0, 10}, {1, 11}}));
}

TEST(CollectiveBroadcast, CopiesTheFirstMemberOfEachGroup) {
  std::string body = R"(  %r = "stablehlo.collective_broadcast"(%x) {
    replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>
  } : (tensor<2xi64>) -> tensor<2xi64>)";
  EXPECT_EQ(RunGrid(Grid(body)), (V{{2, 12}, {3, 13}, {2, 12}, {3, 13}}));
}

TEST(CollectiveReduce, OnlyTheRootKeepsTheSum) {
  std::string body = R"(  %r = "stablehlo.collective_reduce"(%x) ({
    ^bb0(%p: tensor<i64>, %q: tensor<i64>):
      %s = stablehlo.add %p, %q : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>)";
  EXPECT_EQ(RunGrid(Grid(body)), (V{{0, 0}, {0, 0}, {2, 22}, {4, 24}}));
}

// send/recv on channel 5 with source_target_pairs: in each replica,
// partition 0 sends to partition 1, which receives its value; partition 0
// receives nothing and gets zeros.
TEST(SendRecv, PairsAddressTheTarget) {
  const std::string attrs =
      "channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>, is_host_transfer = "
      "false, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>";
  std::string body = R"(  %t = stablehlo.after_all : !stablehlo.token
  %s = "stablehlo.send"(%x, %t) {)" +
                     attrs +
                     R"(} : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token
  %r, %u = "stablehlo.recv"(%s) {)" +
                     attrs + "} : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)";
  EXPECT_EQ(RunGrid(Grid(body)), (V{{0, 0}, {0, 10}, {0, 0}, {2, 12}}));
}

// Members of a group (here of two different programs) that bring arrays of
// different shapes are an error, not a reduction of whatever fits.
TEST(Grid, MismatchedShapesAcrossAGroupAreAnError) {
  auto program = [](const std::string& name, const std::string& type) {
    return "func.func @" + name + "(%x: " + type + ") -> " + type + R"( {
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%p: tensor<i64>, %q: tensor<i64>):
      %s = stablehlo.add %p, %q : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : ()" +
           type + ") -> " + type + "\n  func.return %r : " + type + "\n}\n";
  };
  const std::string text = program("f", "tensor<2xi64>") + program("g", "tensor<3xi64>") + R"(
func.func @main() -> (tensor<2xi64>, tensor<3xi64>) {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %b = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi64>
  %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@f], [@g]]} : (tensor<2xi64>, tensor<3xi64>) -> (tensor<2xi64>, tensor<3xi64>)
  func.return %r#0, %r#1 : tensor<2xi64>, tensor<3xi64>
})";
  auto r = RunMlir(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("brings (tensor<"), std::string::npos)
      << r.status().ToString();
}

TEST(Grid, ReplicaAndPartitionIds) {
  std::string body = R"(  %i = stablehlo.replica_id : tensor<ui32>
  %j = stablehlo.partition_id : tensor<ui32>
  %a = stablehlo.convert %i : (tensor<ui32>) -> tensor<i64>
  %b = stablehlo.convert %j : (tensor<ui32>) -> tensor<i64>
  %a1 = stablehlo.reshape %a : (tensor<i64>) -> tensor<1xi64>
  %b1 = stablehlo.reshape %b : (tensor<i64>) -> tensor<1xi64>
  %r = stablehlo.concatenate %a1, %b1, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>)";
  EXPECT_EQ(RunGrid(Grid(body)), (V{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
}

TEST(Grid, MismatchedProgramsDeadlockWithAnErrorNotAHang) {
  // Only partition 0 reduces; its peers in the cross-replica group never come.
  std::string text = R"(
func.func @reduce(%x: tensor<2xi64>) -> tensor<2xi64> {
)" + AllReduce("replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>") +
                     R"(
  func.return %r : tensor<2xi64>
}
func.func @idle(%x: tensor<2xi64>) -> tensor<2xi64> {
  func.return %x : tensor<2xi64>
}
func.func @main() -> (tensor<2xi64>, tensor<2xi64>) {
  %a = stablehlo.constant dense<[0, 10]> : tensor<2xi64>
  %r:2 = "interpreter.run_parallel"(%a, %a) {programs = [[@reduce], [@idle]]}
      : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
  func.return %r#0, %r#1 : tensor<2xi64>, tensor<2xi64>
})";
  auto r = RunMlir(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlock"), std::string::npos) << r.status().message();
}

TEST(Grid, AFailingProcessStopsTheOthers) {
  std::string text = R"(
func.func @fail(%x: tensor<2xi64>) -> tensor<2xi64> {
  check.expect_eq_const %x, dense<[9, 9]> : tensor<2xi64>
  func.return %x : tensor<2xi64>
}
func.func @reduce(%x: tensor<2xi64>) -> tensor<2xi64> {
)" + AllReduce("replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>") +
                     R"(
  func.return %r : tensor<2xi64>
}
func.func @main() -> (tensor<2xi64>, tensor<2xi64>) {
  %a = stablehlo.constant dense<[0, 10]> : tensor<2xi64>
  %r:2 = "interpreter.run_parallel"(%a, %a) {programs = [[@reduce], [@fail]]}
      : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
  func.return %r#0, %r#1 : tensor<2xi64>, tensor<2xi64>
})";
  auto r = RunMlir(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  EXPECT_NE(r.status().message().find("process (1, 0)"), std::string::npos) << r.status().message();
}

TEST(Grid, AloneAProcessMeetsOnlyItself) {
  const char* text = R"(
func.func @main() -> tensor<2xi64> {
  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%p: tensor<i64>, %q: tensor<i64>):
      %s = stablehlo.add %p, %q : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  func.return %r : tensor<2xi64>
})";
  EXPECT_EQ(testing::RunAndRead<int64_t>(text), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace tpusim::ops
