#include "tpusim/ir/sharding.h"

#include <gtest/gtest.h>

#include "tpusim/frontend/stablehlo/parser.h"

namespace tpusim::ir {
namespace {

HloSharding Parse(std::string_view s) {
  auto r = ParseHloSharding(s);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : HloSharding{};
}

TEST(HloShardingTest, SimpleKinds) {
  EXPECT_EQ(Parse("{replicated}").kind, HloSharding::Kind::kReplicated);
  EXPECT_EQ(Parse("{manual}").kind, HloSharding::Kind::kManual);
  HloSharding m = Parse("{maximal device=3}");
  EXPECT_EQ(m.kind, HloSharding::Kind::kMaximal);
  EXPECT_EQ(m.device, 3);
}

TEST(HloShardingTest, TiledExplicitAndReplicated) {
  HloSharding s = Parse("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  EXPECT_EQ(s.kind, HloSharding::Kind::kTiled);
  EXPECT_EQ(s.tile_dims, (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(s.devices, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_TRUE(s.last_tile_dim_replicate);
  EXPECT_EQ(s.ToString(), "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  EXPECT_EQ(Parse(s.ToString()), s);
}

TEST(HloShardingTest, IotaTileAssignments) {
  EXPECT_EQ(Parse("{devices=[4,2]<=[8]}").devices, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  // iota(8) as 2x4, transposed to 4x2.
  EXPECT_EQ(Parse("{devices=[4,2]<=[2,4]T(1,0)}").devices,
            (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  HloSharding sub = Parse("{devices=[2,2]<=[4] last_tile_dims={manual}}");
  EXPECT_EQ(sub.last_tile_dims, std::vector<std::string>{"manual"});
}

TEST(HloShardingTest, TuplesAndMetadata) {
  HloSharding t = Parse("{{replicated}, {devices=[2]0,1 metadata={op_name=\"x\"}}}");
  ASSERT_EQ(t.kind, HloSharding::Kind::kTuple);
  ASSERT_EQ(t.elements.size(), 2u);
  EXPECT_EQ(t.elements[1].devices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(t.ToString(), "{{replicated}, {devices=[2]0,1}}");
}

TEST(HloShardingTest, MalformedIsAnError) {
  for (const char* bad : {"", "{", "{devices=[2,2]0,1}", "{devices=[4]<=[3]}",
                          "{devices=[2,2]<=[2,2]T(0,0)}", "{maximal}", "{replicated} x",
                          "{bogus}"}) {
    EXPECT_FALSE(ParseHloSharding(bad).ok()) << bad;
  }
}

TEST(ShardingAccessTest, MhloAndSdyOnFunctions) {
  auto m = frontend::ParseStableHlo(R"(module @m {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%a: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1]0,1}"},
                  %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>},
                  %c: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}, {}]>},
                  %d: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.custom_call @Sharding(%a) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
})", "s.mlir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *(*m)->Lookup("main");
  auto a = ArgSharding(**m, f, 0);
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->ToString(), "{devices=[2,1]0,1}");
  // Mesh devices are x-major: device = 4*x + y. Sharding dim 0 over y leaves
  // x as replicas.
  auto b = ArgSharding(**m, f, 1);
  ASSERT_TRUE(b.ok() && b->has_value()) << b.status().ToString();
  EXPECT_EQ((*b)->ToString(), "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}");
  auto c = ArgSharding(**m, f, 2);
  ASSERT_TRUE(c.ok() && c->has_value());
  EXPECT_EQ((*c)->ToString(), "{devices=[8,1]0,4,1,5,2,6,3,7}");
  auto d = ArgSharding(**m, f, 3);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->has_value());
  auto op = OpSharding(**m, *f.entry().ops()[0]);
  ASSERT_TRUE(op.ok() && op->has_value()) << op.status().ToString();
  EXPECT_EQ((*op)->ToString(), "{devices=[1,2,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}");
}

// A sub-axis is a run of its axis's major-to-minor pieces: with x = 4 cut
// into halves (device = 2*x + y = 4*x_major + 2*x_minor + y), "x":(1)2 is
// x_major and "x":(2)2 x_minor.
TEST(ShardingAccessTest, SdySubAxesSplitTheirAxis) {
  auto m = frontend::ParseStableHlo(R"(module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"y"}]>},
                  %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(2)2}, {"x":(1)2}]>},
                  %c: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["z"=2]>, [{}, {"z"}]>},
                  %d: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)3}, {}]>},
                  %e: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"y"}>}) {
    func.return
  }
})", "s.mlir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *(*m)->Lookup("main");
  auto a = ArgSharding(**m, f, 0);
  ASSERT_TRUE(a.ok() && a->has_value()) << a.status().ToString();
  EXPECT_EQ((*a)->ToString(), "{devices=[2,2,2]0,2,1,3,4,6,5,7 last_tile_dim_replicate}");
  auto b = ArgSharding(**m, f, 1);
  ASSERT_TRUE(b.ok() && b->has_value()) << b.status().ToString();
  EXPECT_EQ((*b)->ToString(), "{devices=[2,2,2]0,1,4,5,2,3,6,7 last_tile_dim_replicate}");
  auto c = ArgSharding(**m, f, 2);  // an inline mesh
  ASSERT_TRUE(c.ok() && c->has_value()) << c.status().ToString();
  EXPECT_EQ((*c)->ToString(), "{devices=[1,2]0,1}");
  EXPECT_EQ(ArgSharding(**m, f, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ArgSharding(**m, f, 4).status().code(), StatusCode::kUnimplemented);
}

TEST(ShardingAccessTest, SdyErrors) {
  auto m = frontend::ParseStableHlo(R"(module @m {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}]>},
                  %b: tensor<8xf32> {sdy.sharding = #sdy.sharding<@other, [{}]>}) {
    func.return
  }
})", "e.mlir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *(*m)->Lookup("main");
  EXPECT_FALSE(ArgSharding(**m, f, 0).ok());
  EXPECT_EQ(ArgSharding(**m, f, 1).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tpusim::ir
