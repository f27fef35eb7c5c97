#include "tpusim/spmd/partitioner.h"

#include <gtest/gtest.h>

#include "spmd/run_test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/printer.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::spmd {
namespace {

std::unique_ptr<ir::Module> Parse(const std::string& text) {
  auto m = frontend::ParseStableHlo(text, "test.mlir");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(verify::VerifyModule(**m).ok());
  return std::move(*m);
}

// A module of `devices` partitions around `body`.
std::string Program(int devices, const std::string& body) {
  return "module attributes {mhlo.num_partitions = " + std::to_string(devices) +
         " : i32, mhlo.num_replicas = 1 : i32} {\n" + body + "\n}\n";
}

struct Partitioned {
  std::unique_ptr<ir::Module> module;
  PartitionStats stats;
  int Count(const std::string& op) const {
    auto it = stats.inserted.find(op);
    return it == stats.inserted.end() ? 0 : it->second;
  }
  const ir::Operation* Find(const std::string& name) const {
    for (const auto& op : module->Lookup("main")->entry().ops()) {
      if (op->name_str() == name) return op.get();
    }
    return nullptr;
  }
};

Partitioned PartitionText(const std::string& text) {
  Partitioned p;
  auto global = Parse(text);
  EXPECT_TRUE(IsGlobalProgram(*global));
  auto m = Partition(*global, "main", &p.stats);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (m.ok()) p.module = std::move(*m);
  return p;
}

Status Error(const std::string& text) {
  auto global = Parse(text);
  auto m = Partition(*global, "main");
  EXPECT_FALSE(m.ok());
  return m.status();
}

// Data x FSDP: a weight's gradient sums over the batch, split over both
// axes. Wanted split over fsdp as the weight is, it reduce-scatters over
// fsdp and only then all-reduces its shard over data (on a multislice
// program, the one that crosses DCN), through a convert to f32 too.
TEST(Partitioner, DataTimesFsdpGradientsReduceScatterThenAllReduceTheShard) {
  Partitioned p = PartitionText(R"(
module @m attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "fsdp"=4]>
  func.func @main(%x: tensor<32x16xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data", "fsdp"}, {}]>},
                  %dy: tensor<32x8xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data", "fsdp"}, {}]>})
      -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {}]>}) {
    %dw = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0] : (tensor<32x16xbf16>, tensor<32x8xbf16>) -> tensor<16x8xbf16>
    %f = stablehlo.convert %dw : (tensor<16x8xbf16>) -> tensor<16x8xf32>
    %c = sdy.sharding_constraint %f <@mesh, [{"fsdp"}, {}]> : tensor<16x8xf32>
    return %c : tensor<16x8xf32>
  }
})");
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.Count("stablehlo.reduce_scatter"), 1);
  EXPECT_EQ(p.Count("stablehlo.all_reduce"), 1);
  ASSERT_NE(p.Find("stablehlo.all_reduce"), nullptr);
  EXPECT_EQ(p.Find("stablehlo.all_reduce")->result(0).type().shape(), (ir::Shape{4, 8}));
}

// Two row-parallel products, each a partial sum over the tensor axis, add
// before they are combined: one all-reduce for both (PaLM's parallel
// block), and the values are the unpartitioned sum's.
TEST(Partitioner, PartialSumsAddBeforeOneAllReduce) {
  const std::string text = Program(4, R"(
  func.func @main() -> (tensor<8x8xf32> {mhlo.sharding = "{replicated}"}) {
    %a0 = stablehlo.iota dim = 1 : tensor<8x16xf32>
    %a = stablehlo.custom_call @Sharding(%a0) {mhlo.sharding = "{devices=[1,4]<=[4]}"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %w0 = stablehlo.iota dim = 0 : tensor<16x8xf32>
    %w = stablehlo.custom_call @Sharding(%w0) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %b = stablehlo.multiply %a, %a : tensor<8x16xf32>
    %x = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %y = stablehlo.dot_general %b, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %s = stablehlo.add %x, %y : tensor<8x8xf32>
    return %s : tensor<8x8xf32>
  })");
  Partitioned p = PartitionText(text);
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.Count("stablehlo.all_reduce"), 1);
  const test::Outcome whole = test::RunWhole(*Parse(text), "main");
  const test::Outcome split = test::RunPartitioned(*p.module, "main");
  ASSERT_TRUE(whole.status.ok() && split.status.ok()) << split.status.ToString();
  const float* w = whole.values[0].data<float>();
  const float* v = split.values[0].data<float>();
  for (int64_t i = 0; i < whole.values[0].num_elements(); ++i) {
    EXPECT_NEAR(w[i], v[i], 1e-4 * std::max(1.0f, std::abs(w[i]))) << i;
  }
}

const char kMegatron[] = R"(
  func.func @main(%x: tensor<16x64xf32> {mhlo.sharding = "{replicated}"},
                  %w1: tensor<64x256xf32> {mhlo.sharding = "{devices=[1,8]<=[8]}"},
                  %w2: tensor<256x64xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"})
      -> (tensor<16x64xf32> {mhlo.sharding = "{replicated}"}) {
    %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
    %a = stablehlo.tanh %h : tensor<16x256xf32>
    %y = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
    return %y : tensor<16x64xf32>
  })";

// Column- then row-parallel: the hidden layer never moves; one all-reduce.
TEST(Partitioner, MegatronMlpNeedsOneAllReduce) {
  Partitioned p = PartitionText(Program(8, kMegatron));
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.stats.inserted.size(), 1u);
  EXPECT_EQ(p.Count("stablehlo.all_reduce"), 1);
  const ir::Function& f = *p.module->Lookup("main");
  EXPECT_EQ(f.type().inputs[1].shape(), (ir::Shape{64, 32}));
  EXPECT_EQ(f.type().inputs[2].shape(), (ir::Shape{32, 64}));
  const ir::Operation* ar = p.Find("stablehlo.all_reduce");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->result(0).type().shape(), (ir::Shape{16, 64}));
  EXPECT_EQ(ar->attr("replica_groups").type().shape(), (ir::Shape{1, 8}));
}

// Data parallel: the batch stays split; the weight gradient's partial sums
// over the batch are all-reduced.
TEST(Partitioner, DataParallelGradientIsAllReduced) {
  Partitioned p = PartitionText(Program(4, R"(
  func.func @main(%x: tensor<32x16xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"},
                  %dy: tensor<32x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"})
      -> (tensor<16x8xf32> {mhlo.sharding = "{replicated}"}) {
    %dw = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0] : (tensor<32x16xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
    return %dw : tensor<16x8xf32>
  })"));
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.stats.inserted.size(), 1u);
  EXPECT_EQ(p.Count("stablehlo.all_reduce"), 1);
}

// FSDP: the weight is gathered before use, and its gradient, wanted split
// as the weight is, comes out of one reduce-scatter.
TEST(Partitioner, FsdpGathersWeightsAndReduceScattersGradients) {
  Partitioned p = PartitionText(Program(4, R"(
  func.func @main(%x: tensor<32x16xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"},
                  %w: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"},
                  %dy: tensor<32x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"})
      -> (tensor<32x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"},
          tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
    %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<32x16xf32>, tensor<16x8xf32>) -> tensor<32x8xf32>
    %dw = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0] : (tensor<32x16xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
    return %y, %dw : tensor<32x8xf32>, tensor<16x8xf32>
  })"));
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.Count("stablehlo.all_gather"), 1);
  EXPECT_EQ(p.Count("stablehlo.reduce_scatter"), 1);
  EXPECT_EQ(p.Count("stablehlo.all_reduce"), 0);
  EXPECT_EQ(p.Find("stablehlo.all_gather")->result(0).type().shape(), (ir::Shape{16, 8}));
  EXPECT_EQ(p.Find("stablehlo.reduce_scatter")->result(0).type().shape(), (ir::Shape{4, 8}));
  // The gathered weight is the one conflict, and the report says where.
  ASSERT_EQ(p.stats.conflicts.size(), 1u);
  EXPECT_NE(p.stats.conflicts[0].find("test.mlir:8:5: stablehlo.dot_general operand 1 moves from"),
            std::string::npos)
      << p.stats.conflicts[0];
}

// A constraint that moves the split to another dimension does it in one
// all-to-all.
TEST(Partitioner, ConstraintsReshard) {
  Partitioned p = PartitionText(Program(2, R"(
  func.func @main(%x: tensor<4x6xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<4x6xf32> {
    %0 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{devices=[1,2]<=[2]}"} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %1 = stablehlo.negate %0 : tensor<4x6xf32>
    return %1 : tensor<4x6xf32>
  })"));
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.stats.inserted.size(), 1u);
  EXPECT_EQ(p.Count("stablehlo.all_to_all"), 1);
  const ir::Function& f = *p.module->Lookup("main");
  EXPECT_EQ(f.type().results[0].shape(), (ir::Shape{4, 3}));
  EXPECT_EQ(f.result_attrs()[0].Get("mhlo.sharding").str(), "{devices=[1,2]0,1}");
}

// Gathering one axis and slicing along another.
TEST(Partitioner, ReshardsBetweenAxes) {
  Partitioned p = PartitionText(Program(4, R"(
  func.func @main(%x: tensor<4x6xf32> {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"}) -> tensor<4x6xf32> {
    %0 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}"} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  })"));
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.Count("stablehlo.all_gather"), 1);
  EXPECT_EQ(p.Count("stablehlo.dynamic_slice"), 1);
  EXPECT_EQ(p.Find("stablehlo.all_gather")->attr("replica_groups").ToString(),
            "dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>");
}

// Shardings spread forward through broadcasts, reshapes and transposes.
TEST(Partitioner, ShardingsFlowThroughLayoutOps) {
  Partitioned p = PartitionText(Program(4, R"(
  func.func @main(%x: tensor<8x6xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> tensor<6x8xf32> {
    %r = stablehlo.reshape %x : (tensor<8x6xf32>) -> tensor<4x2x6xf32>
    %b = stablehlo.broadcast_in_dim %r, dims = [0, 1, 2] : (tensor<4x2x6xf32>) -> tensor<4x2x6xf32>
    %t = stablehlo.transpose %b, dims = [2, 0, 1] : (tensor<4x2x6xf32>) -> tensor<6x4x2xf32>
    %s = stablehlo.reshape %t : (tensor<6x4x2xf32>) -> tensor<6x8xf32>
    return %s : tensor<6x8xf32>
  })"));
  ASSERT_TRUE(p.module);
  EXPECT_TRUE(p.stats.inserted.empty());
  EXPECT_EQ(p.module->Lookup("main")->type().results[0].shape(), (ir::Shape{6, 2}));
}

// A causal mask: iotas compared, then broadcast over the batch. Each device
// builds its own part of the broadcast and of the iota (offset by its
// position): nothing is sliced out of a whole array.
constexpr char kMaskedIota[] = R"(
  func.func @main() -> (tensor<8x4x4xf32> {mhlo.sharding = "{devices=[4,1,1]<=[4]}"}) {
    %c = stablehlo.constant dense<1.5> : tensor<8x4x4xf32>
    %x = stablehlo.custom_call @Sharding(%c) {mhlo.sharding = "{devices=[4,1,1]<=[4]}"} : (tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
    %s = stablehlo.iota dim = 0 : tensor<4x4xi32>
    %t = stablehlo.iota dim = 1 : tensor<4x4xi32>
    %m = stablehlo.compare GE, %s, %t : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %b = stablehlo.broadcast_in_dim %m, dims = [1, 2] : (tensor<4x4xi1>) -> tensor<8x4x4xi1>
    %z = stablehlo.constant dense<0.0> : tensor<8x4x4xf32>
    %y = stablehlo.select %b, %x, %z : tensor<8x4x4xi1>, tensor<8x4x4xf32>
    %i = stablehlo.iota dim = 0 : tensor<8x4x4xf32>
    %r = stablehlo.add %y, %i : tensor<8x4x4xf32>
    return %r : tensor<8x4x4xf32>
  })";

TEST(Partitioner, BroadcastsAndIotasAreBuiltInParts) {
  Partitioned p = PartitionText(Program(4, kMaskedIota));
  ASSERT_TRUE(p.module);
  EXPECT_TRUE(p.stats.inserted.empty());
  int local_broadcasts = 0, local_iotas = 0;
  for (const auto& op : p.module->Lookup("main")->entry().ops()) {
    if (op->num_results() != 1 || op->result(0).type().shape() != ir::Shape{2, 4, 4}) continue;
    local_broadcasts += op->name_str() == "stablehlo.broadcast_in_dim";
    local_iotas += op->name_str() == "stablehlo.iota";
  }
  EXPECT_GE(local_broadcasts, 1);
  EXPECT_EQ(local_iotas, 1);
  // Each device's iota counts from its offset.
  const test::Outcome whole = test::RunWhole(*Parse(Program(4, kMaskedIota)), "main");
  const test::Outcome split = test::RunPartitioned(*p.module, "main");
  ASSERT_TRUE(split.status.ok()) << split.status.ToString();
  EXPECT_TRUE(test::SameValues(whole.values[0], split.values[0])) << split.values[0].ToString();
}

// An embedding's gradient: each device scatters its batch's rows into a
// table of zeros, and the partial tables add up; the updates never move.
constexpr char kEmbeddingGrad[] = R"(
  func.func @main() -> (tensor<10x4xf32> {mhlo.sharding = "{replicated}"}) {
    %i = stablehlo.iota dim = 0 : tensor<8xi32>
    %three = stablehlo.constant dense<3> : tensor<8xi32>
    %r = stablehlo.remainder %i, %three : tensor<8xi32>
    %ids = stablehlo.custom_call @Sharding(%r) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<8xi32>) -> tensor<8xi32>
    %u0 = stablehlo.iota dim = 0 : tensor<8x4xf32>
    %u = stablehlo.custom_call @Sharding(%u0) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %z = stablehlo.constant dense<0.0> : tensor<10x4xf32>
    %g = "stablehlo.scatter"(%z, %ids, %u) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<10x4xf32>, tensor<8xi32>, tensor<8x4xf32>) -> tensor<10x4xf32>
    return %g : tensor<10x4xf32>
  })";

TEST(Partitioner, ScatterAddsIntoZerosSplitByUpdate) {
  Partitioned p = PartitionText(Program(4, kEmbeddingGrad));
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.Count("stablehlo.all_reduce"), 1);
  EXPECT_EQ(p.Count("stablehlo.all_gather"), 0);
  const test::Outcome whole = test::RunWhole(*Parse(Program(4, kEmbeddingGrad)), "main");
  const test::Outcome split = test::RunPartitioned(*p.module, "main");
  ASSERT_TRUE(split.status.ok()) << split.status.ToString();
  EXPECT_TRUE(test::SameValues(whole.values[0], split.values[0])) << split.values[0].ToString();
}

// A custom call splits by the rule it declares (a matmul-like kernel: its
// contraction, a reduction factor, stays whole).
TEST(Partitioner, CustomCallsSplitByTheirDeclaredRule) {
  Partitioned p = PartitionText(Program(2, R"(
  func.func @main(%a: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"},
                  %b: tensor<16x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<8x4xf32> {
    %0 = stablehlo.custom_call @my_matmul(%a, %b) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=4} reduction={j}, custom>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  })"));
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.stats.replicated_ops, 0);
  EXPECT_EQ(p.Count("stablehlo.all_gather"), 1);  // %b along j
  EXPECT_EQ(p.Find("stablehlo.custom_call")->result(0).type().shape(), (ir::Shape{4, 4}));
}

// A move to host memory has a rule of its own: each device moves its shard.
TEST(Partitioner, AMoveToHostSplitsAsItsOperand) {
  Partitioned p = PartitionText(Program(2, R"(
  func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @annotate_device_placement(%x) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  })"));
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.Count("stablehlo.all_gather"), 0);
  EXPECT_EQ(p.stats.replicated_ops, 0);
  EXPECT_EQ(p.Find("stablehlo.custom_call")->result(0).type().shape(), (ir::Shape{4}));
}

// An op without a rule runs on whole arrays; its sharded operand is gathered.
TEST(Partitioner, OpsWithoutRulesRunWhole) {
  Partitioned p = PartitionText(Program(2, R"(
  func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @my_kernel(%x) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  })"));
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.Count("stablehlo.all_gather"), 1);
  EXPECT_EQ(p.stats.replicated_ops, 1);
}

// A sort keeps its sorted dimension whole and splits the others.
TEST(Partitioner, SortSplitsTheOtherDimensions) {
  const std::string sort = R"(
  func.func @main(%x: tensor<8x4xf32> {mhlo.sharding = "SHARDING"}) -> tensor<8x4xf32> {
    %0 = "stablehlo.sort"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }) {dimension = 1 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  })";
  auto with = [&](const std::string& sharding) {
    std::string text = sort;
    text.replace(text.find("SHARDING"), 8, sharding);
    return PartitionText(Program(2, text));
  };
  Partitioned rows = with("{devices=[2,1]<=[2]}");
  ASSERT_TRUE(rows.module);
  EXPECT_TRUE(rows.stats.inserted.empty());
  Partitioned columns = with("{devices=[1,2]<=[2]}");
  ASSERT_TRUE(columns.module);
  EXPECT_EQ(columns.Count("stablehlo.all_gather"), 1);
}

// A scan over layers, as JAX lowers it: the loop carries the activations
// and slices each layer's weights, which stay split inside the body, so each
// iteration makes the one all-reduce of a Megatron block.
TEST(Partitioner, LoopBodiesArePartitioned) {
  Partitioned p = PartitionText(Program(8, R"(
  func.func @main(%x: tensor<16x64xf32> {mhlo.sharding = "{replicated}"},
                  %w1: tensor<4x64x256xf32> {mhlo.sharding = "{devices=[1,1,8]<=[8]}"},
                  %w2: tensor<4x256x64xf32> {mhlo.sharding = "{devices=[1,8,1]<=[8]}"})
      -> (tensor<16x64xf32> {mhlo.sharding = "{replicated}"}) {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.while(%i = %c0, %h = %x) : tensor<i32>, tensor<16x64xf32>
     cond {
      %n = stablehlo.constant dense<4> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %a = stablehlo.dynamic_slice %w1, %i, %z, %z, sizes = [1, 64, 256] : (tensor<4x64x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x256xf32>
      %a2 = stablehlo.reshape %a : (tensor<1x64x256xf32>) -> tensor<64x256xf32>
      %b = stablehlo.dynamic_slice %w2, %i, %z, %z, sizes = [1, 256, 64] : (tensor<4x256x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x256x64xf32>
      %b2 = stablehlo.reshape %b : (tensor<1x256x64xf32>) -> tensor<256x64xf32>
      %t = stablehlo.dot_general %h, %a2, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
      %u = stablehlo.tanh %t : tensor<16x256xf32>
      %y = stablehlo.dot_general %u, %b2, contracting_dims = [1] x [0] : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %y : tensor<i32>, tensor<16x64xf32>
    }
    return %r#1 : tensor<16x64xf32>
  }
  )"));
  ASSERT_TRUE(p.module);
  EXPECT_EQ(p.stats.inserted.size(), 1u);
  EXPECT_EQ(p.Count("stablehlo.all_reduce"), 1);
  const ir::Operation* loop = p.Find("stablehlo.while");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->result(1).type().shape(), (ir::Shape{16, 64}));
  bool reduced_in_body = false;
  ir::Walk(loop->region(1), [&](ir::Operation& op) {
    reduced_in_body |= op.name_str() == "stablehlo.all_reduce";
    if (op.name_str() == "stablehlo.dynamic_slice" && op.operand(0).is_block_argument()) {
      EXPECT_EQ(op.attr("slice_sizes").AsInts()[2] * op.attr("slice_sizes").AsInts()[1], 64 * 32);
    }
  });
  EXPECT_TRUE(reduced_in_body);
}

// The branches of an if return their results alike.
TEST(Partitioner, BranchesReturnOneSharding) {
  Partitioned p = PartitionText(Program(2, R"(
  func.func @main(%p: tensor<i1>, %x: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<8x4xf32> {
    %0 = "stablehlo.if"(%p) ({
      %n = stablehlo.negate %x : tensor<8x4xf32>
      stablehlo.return %n : tensor<8x4xf32>
    }, {
      %c = stablehlo.custom_call @my_kernel(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
      stablehlo.return %c : tensor<8x4xf32>
    }) : (tensor<i1>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  })"));
  ASSERT_TRUE(p.module);
  // The second branch gathers %x for its kernel and slices its result back.
  EXPECT_EQ(p.Count("stablehlo.all_gather"), 1);
  EXPECT_EQ(p.Count("stablehlo.dynamic_slice"), 1);
  EXPECT_EQ(p.Find("stablehlo.if")->result(0).type().shape(), (ir::Shape{4, 4}));
}

// An embedding lookup: the ids split by batch, the table by its model
// dimension; each device gathers its rows of its columns, nothing moves.
TEST(Partitioner, GathersSplitByIndexAndWindow) {
  Partitioned p = PartitionText(Program(8, R"(
  func.func @main(%table: tensor<1000x64xf32> {mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"},
                  %ids: tensor<32x1xi32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"})
      -> tensor<32x64xf32> {
    %0 = "stablehlo.gather"(%table, %ids) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 64>} : (tensor<1000x64xf32>, tensor<32x1xi32>) -> tensor<32x64xf32>
    return %0 : tensor<32x64xf32>
  })"));
  ASSERT_TRUE(p.module);
  EXPECT_TRUE(p.stats.inserted.empty());
  const ir::Operation* gather = p.Find("stablehlo.gather");
  ASSERT_NE(gather, nullptr);
  EXPECT_EQ(gather->result(0).type().shape(), (ir::Shape{16, 16}));
  EXPECT_EQ(gather->attr("slice_sizes").AsInts(), (std::vector<int64_t>{1, 16}));
}

// shard_map regions are kept as written: their collectives are copied, the
// ops around them partitioned.
TEST(Partitioner, ManualComputationsAreKeptAsWritten) {
  Partitioned p = PartitionText(Program(4, R"(
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
    %y = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%a: tensor<2xf32>) {
      %s = "stablehlo.all_reduce"(%a) <{replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %t = stablehlo.add %p, %q : tensor<f32>
        stablehlo.return %t : tensor<f32>
      }) : (tensor<2xf32>) -> tensor<2xf32>
      sdy.return %s : tensor<2xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    %z = stablehlo.negate %y : tensor<8xf32>
    return %z : tensor<8xf32>
  })"));
  ASSERT_TRUE(p.module);
  EXPECT_TRUE(p.stats.inserted.empty());
  ASSERT_NE(p.Find("stablehlo.all_reduce"), nullptr);
  EXPECT_EQ(p.Find("stablehlo.negate")->result(0).type().shape(), (ir::Shape{2}));
  EXPECT_EQ(p.Find("sdy.manual_computation"), nullptr);
}

TEST(Partitioner, CollectivesOutsideManualRegionsAreErrors) {
  Status s = Error(Program(2, R"(
  func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<2xf32> {
    %0 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<4xf32>
    %2 = "stablehlo.all_reduce"(%x) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %t = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<8xf32>
    %3 = stablehlo.slice %2 [0:2] : (tensor<8xf32>) -> tensor<2xf32>
    return %3 : tensor<2xf32>
  })"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("test.mlir:6:5: stablehlo.all_reduce outside the manual regions"),
            std::string::npos)
      << s.message();
}

TEST(Partitioner, PartitionedProgramsPrintAndReadBack) {
  Partitioned p = PartitionText(Program(8, kMegatron));
  ASSERT_TRUE(p.module);
  const std::string text = ir::PrintModule(*p.module);
  auto back = frontend::ParseStableHlo(text, "dump.mlir");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ir::PrintModule(**back), text);
  EXPECT_FALSE(IsGlobalProgram(**back));  // never partitioned twice
}

TEST(Partitioner, RecognizesGlobalPrograms) {
  EXPECT_FALSE(IsGlobalProgram(*Parse(Program(1, R"(
  func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{replicated}"}) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  })"))));
  EXPECT_FALSE(IsGlobalProgram(*Parse(Program(2, R"(
  func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  })"))));
  // Already per device: it has a collective.
  EXPECT_FALSE(IsGlobalProgram(*Parse(Program(2, R"(
  func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<8xf32> {
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  })"))));
}

TEST(Partitioner, BadShardingsAreLocatedErrors) {
  Status s = Error(Program(8, R"(
  func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  })"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("test.mlir:3:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("spans 4 devices"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tpusim::spmd
