// The sharding patterns of examples/sharding partition into exactly the
// collectives each pattern needs, of the sizes it needs: the list of every
// collective the partitioner adds (op, result type, replica groups), in
// program order.
#include <gtest/gtest.h>

#include <filesystem>

#include "testing/test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/spmd/partitioner.h"

namespace tpusim::spmd {
namespace {

std::vector<std::string> Collectives(const std::string& example) {
  const std::filesystem::path file =
      std::filesystem::path(TPUSIM_SOURCE_DIR) / "examples/sharding" / (example + ".mlir");
  auto global = frontend::ParseStableHlo(test::ReadFile(file), file.string());
  EXPECT_TRUE(global.ok()) << global.status().ToString();
  if (!global.ok()) return {};
  EXPECT_TRUE(IsGlobalProgram(**global));
  auto partitioned = Partition(**global, "main");
  EXPECT_TRUE(partitioned.ok()) << partitioned.status().ToString();
  if (!partitioned.ok()) return {};
  std::vector<std::string> found;
  for (const auto& op : (*partitioned)->Lookup("main")->entry().ops()) {
    ir::Attribute groups = op->attr("replica_groups");
    if (!groups) continue;
    const ir::Shape& g = groups.type().shape();
    found.push_back(op->name_str().substr(10) + " " + op->result(0).type().ToString() + " " +
                    std::to_string(g[0]) + "x" + std::to_string(g[1]));
  }
  return found;
}

using List = std::vector<std::string>;

// The loss and both weight gradients, summed over the 8 devices' batches.
TEST(ShardingExamples, DataParallel) {
  EXPECT_EQ(Collectives("data_parallel"),
            (List{"all_reduce tensor<512x2048xf32> 1x8", "all_reduce tensor<2048x512xf32> 1x8",
                  "all_reduce tensor<f32> 1x8"}));
}

// Each weight gathered whole once; each gradient reduce-scattered back to
// the device's eighth.
TEST(ShardingExamples, Fsdp) {
  EXPECT_EQ(Collectives("fsdp"),
            (List{"all_gather tensor<512x2048xf32> 1x8", "all_gather tensor<2048x512xf32> 1x8",
                  "reduce_scatter tensor<64x2048xf32> 1x8",
                  "reduce_scatter tensor<256x512xf32> 1x8", "all_reduce tensor<f32> 1x8"}));
}

// One all-reduce per block over the 4 "model" devices of each "data" row,
// of that row's 32 examples.
TEST(ShardingExamples, Megatron) {
  EXPECT_EQ(Collectives("megatron"),
            (List{"all_reduce tensor<32x1024xbf16> 2x4", "all_reduce tensor<32x1024xbf16> 2x4"}));
}

// The keys and the values, gathered along the sequence.
TEST(ShardingExamples, ContextParallelAttention) {
  EXPECT_EQ(
      Collectives("context_parallel_attention"),
      (List{"all_gather tensor<4x1024x128xf32> 1x8", "all_gather tensor<4x1024x128xf32> 1x8"}));
}

// Slots from groups to experts and back: [groups, experts, ...] split by
// group, then [experts, groups, ...] split by group again.
TEST(ShardingExamples, ExpertParallelMoe) {
  EXPECT_EQ(Collectives("expert_parallel_moe"), (List{"all_to_all tensor<8x1x64x512xf32> 1x8",
                                                      "all_to_all tensor<8x1x64x512xf32> 1x8"}));
}

}  // namespace
}  // namespace tpusim::spmd
