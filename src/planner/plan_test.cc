#include "tpusim/planner/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace tpusim::planner {
namespace {

model::ModelSpec Small() {
  model::ModelSpec m;
  m.name = "small";
  m.layers = 2;
  m.d_model = 256;
  m.heads = 4;
  m.kv_heads = 4;
  m.head_dim = 64;
  m.d_ff = 512;
  m.vocab = 1000;
  m.max_seq = 128;
  return m;
}

TEST(Plan, EveryMeshOfTheSliceIsTimedFastestFirst) {
  PlanRequest r{.model = Small(), .slices = {"v5e-8"}, .global_batch = 16};
  // Progress: once a mesh, counting up to the meshes.
  int calls = 0, last_total = 0;
  std::set<std::string> meshes;
  auto c = Plan(r, [&](const Candidate& mesh, int done, int total) {
    EXPECT_EQ(done, ++calls);
    last_total = total;
    meshes.insert(mesh.Mesh());
  });
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(calls, last_total);
  EXPECT_EQ(calls, static_cast<int>(meshes.size()));
  std::set<std::string> timed;
  for (const Candidate& x : *c) timed.insert(x.Mesh());
  EXPECT_EQ(timed, meshes);
  EXPECT_GE(c->size(), 8u);
  for (size_t i = 0; i < c->size(); ++i) {
    const Candidate& x = (*c)[i];
    EXPECT_EQ(x.data * x.fsdp * x.sequence * x.tensor, 8) << x.Mesh();
    ASSERT_TRUE(x.fits()) << x.rejected;
    EXPECT_GT(x.step_seconds, 0);
    EXPECT_GT(x.mfu, 0);
    EXPECT_LT(x.mfu, 1);
    EXPECT_GT(x.hbm_peak_bytes, 0);
    if (i > 0) {
      EXPECT_GE(x.step_seconds, (*c)[i - 1].step_seconds);
    }
  }
  const std::string table = PlanTable(r, *c);
  EXPECT_NE(table.find("best: " + (*c)[0].slice + " with --mesh " + (*c)[0].Mesh()),
            std::string::npos)
      << table;
  EXPECT_NE(PlanJson(r, *c).find("\"tokens_per_s_per_chip\""), std::string::npos);
}

// A torus Cloud TPU does not list, by generation and shape: 12 devices.
TEST(Plan, SlicesMayBeGivenByTorus) {
  model::ModelSpec m = Small();
  m.d_model = 384;  // split 6 and 12 ways too
  PlanRequest r{.model = m, .slices = {"v4:2x2x3"}, .global_batch = 12, .max_tensor = 1};
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_FALSE(c->empty());
  for (const Candidate& x : *c) {
    EXPECT_EQ(x.chips, 12);
    EXPECT_EQ(x.data * x.fsdp * x.sequence, 12) << x.Mesh();
  }
  // data=2 x fsdp=6: a mesh whose major axis is not its largest prime.
  EXPECT_TRUE(std::any_of(c->begin(), c->end(), [](const Candidate& x) {
    return x.data == 2 && x.fsdp == 6 && x.fits();
  }));
}

// A model too large for the chips: every mesh is rejected, with the reason.
TEST(Plan, MeshesThatDoNotFitAreRejectedWithTheirMemory) {
  model::ModelSpec big = Small();
  big.d_model = 8192;
  big.d_ff = 32768;
  big.heads = 64;
  big.layers = 16;
  PlanRequest r{.model = big, .slices = {"v5e-4"}, .global_batch = 4};
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_FALSE(c->empty());
  for (const Candidate& x : *c) {
    EXPECT_FALSE(x.fits());
    EXPECT_NE(x.rejected.find("of HBM but v5e has"), std::string::npos) << x.rejected;
  }
  EXPECT_NE(PlanTable(r, *c).find("no mesh fits"), std::string::npos);
  Status none = NoneFits(r, *c);
  EXPECT_EQ(none.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(none.message().find("fits no mesh of v5e-4"), std::string::npos) << none.ToString();
}

// By cost, v5e's cheaper chip-hours win over v5p's faster steps; each
// price is what the chips cost over the time the tokens took.
TEST(Plan, CostRanksByDollarsPerToken) {
  PlanRequest r{.model = Small(),
                .slices = {"v5e-8", "v5p-16"},
                .global_batch = 16,
                .objective = PlanRequest::Objective::kCost};
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (size_t i = 0; i < c->size(); ++i) {
    const Candidate& x = (*c)[i];
    const double usd =
        (x.slice == "v5p-16" ? 4.20 : 1.20) * x.chips * x.step_seconds / 3600 / (16.0 * 128) * 1e6;
    EXPECT_NEAR(x.usd_per_million_tokens, usd, 1e-9 * usd) << x.slice << " " << x.Mesh();
    if (i > 0) {
      EXPECT_GE(x.usd_per_million_tokens, (*c)[i - 1].usd_per_million_tokens);
    }
  }
  EXPECT_EQ((*c)[0].slice, "v5litepod-8");
  EXPECT_NE(PlanTable(r, *c).find("cheapest: "), std::string::npos);
}

// Spot prices from a list of the user's: the cost column charges them, and
// a generation without one goes unpriced.
TEST(Plan, SpotPricesComeFromAPriceList) {
  PlanRequest r{.model = Small(),
                .slices = {"v5e-8", "v5p-16"},
                .global_batch = 16,
                .pricing = {.list = {{.generation = "v5e",
                                      .regions = {{.on_demand_usd = 1.2, .spot_usd = 0.3}},
                                      .as_of = "2026-11",
                                      .source = "test"}},
                            .spot = true},
                .remat = "full"};
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (const Candidate& x : *c) {
    if (x.slice == "v5litepod-8") {
      const double usd = 0.3 * x.chips * x.step_seconds / 3600 / (16.0 * 128) * 1e6;
      EXPECT_NEAR(x.usd_per_million_tokens, usd, 1e-9 * usd);
    } else {
      EXPECT_EQ(x.usd_per_million_tokens, 0) << x.slice;
    }
  }
  const std::string table = PlanTable(r, *c);
  EXPECT_NE(table.find("spot prices"), std::string::npos);
  EXPECT_NE(table.find("price v5e: $0.300 per chip-hour spot (as of 2026-11; test)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("price v5p: no spot price recorded"), std::string::npos) << table;
}

// The built-in list's spot prices, in a region of the user's choosing.
TEST(Plan, BuiltInSpotPricesByRegion) {
  PlanRequest r{.model = Small(),
                .slices = {"v5e-8"},
                .global_batch = 16,
                .pricing = {.spot = true, .region = "us-east5"},
                .remat = "full"};
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_FALSE(c->empty());
  const Candidate& x = (*c)[0];
  const double usd = 0.60 * x.chips * x.step_seconds / 3600 / (16.0 * 128) * 1e6;
  EXPECT_NEAR(x.usd_per_million_tokens, usd, 1e-9 * usd);
  EXPECT_NE(PlanTable(r, *c).find("spot prices in us-east5"), std::string::npos);
}

// --mesh times one mesh; one the slice cannot hold is refused.
TEST(Plan, OneMeshMayBeGiven) {
  PlanRequest r{
      .model = Small(), .slices = {"v5e-8"}, .global_batch = 16, .mesh = "data=2,fsdp=2,tensor=2"};
  r.remat = "selective";
  r.microbatches = 2;
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->size(), 1u);
  EXPECT_EQ((*c)[0].Options(), "--mesh data=2,fsdp=2,tensor=2 --remat selective --microbatches 2");
  r.microbatches = 3;  // 16 sequences in 3 microbatches: none
  EXPECT_EQ(Plan(r).status().code(), StatusCode::kInvalidArgument);
  r.microbatches = 0;
  r.remat = "most";
  EXPECT_EQ(Plan(r).status().code(), StatusCode::kInvalidArgument);
  r.remat = "";
  r.mesh = "data=2,fsdp=2,tensor=4";
  auto refused = Plan(r);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  for (const char* axis : {"data=", "fsdp=", "tensor=", "sequence=", "expert="}) {
    EXPECT_NE(refused.status().message().find(axis), std::string::npos) << axis;
  }
}

// An axis --mesh sizes is tried at that size, past the search's limits
// (--max-tensor, --max-sequence).
TEST(Plan, AGivenMeshIsNotHeldToTheSearchLimits) {
  PlanRequest r{.model = Small(), .slices = {"v5e-8"}, .global_batch = 2, .seq = 128,
                .max_tensor = 1, .max_sequence = 1, .mesh = "fsdp=2,sequence=4"};
  r.remat = "full";
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->size(), 1u);
  EXPECT_EQ((*c)[0].sequence, 4);
  r.mesh = "fsdp=4,tensor=2";
  r.global_batch = 4;
  c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)[0].tensor, 2);
}

// Each mesh under each remat policy: keeping more activations recomputes
// less (a faster step) in more HBM. The model is wide and the batch large
// enough that the matmuls, not the weights' all-gathers, decide the step.
TEST(Plan, RematPoliciesTradeHbmForTime) {
  model::ModelSpec wide = Small();
  wide.d_model = 2048;
  wide.heads = wide.kv_heads = 16;
  wide.head_dim = 128;
  wide.d_ff = 8192;
  PlanRequest r{
      .model = wide, .slices = {"v5e-8"}, .global_batch = 512, .mesh = "data=1,fsdp=8,tensor=1"};
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->size(), 3u);
  std::map<std::string, Candidate> by;
  for (const Candidate& x : *c) {
    ASSERT_TRUE(x.fits()) << x.rejected;
    EXPECT_EQ(x.microbatches, 1);
    by[x.remat] = x;
  }
  // Full remat runs every layer's matmuls twice.
  EXPECT_LT(by["none"].step_seconds, by["full"].step_seconds);
  EXPECT_LT(by["selective"].step_seconds, by["full"].step_seconds);
  EXPECT_GT(by["none"].hbm_peak_bytes, by["selective"].hbm_peak_bytes);
  EXPECT_GT(by["selective"].hbm_peak_bytes, by["full"].hbm_peak_bytes);
  EXPECT_NE((*c)[0].remat, "full");
}

// A batch whose activations overflow HBM whole fits in microbatches: the
// search takes the fewest that fit, and keeping more takes more of them.
TEST(Plan, MicrobatchesFitWhatTheWholeBatchCannot) {
  model::ModelSpec m = Small();
  m.d_model = 1024;
  m.d_ff = 4096;
  m.heads = 8;
  m.head_dim = 128;
  m.kv_heads = 8;
  m.layers = 8;
  m.max_seq = 2048;
  PlanRequest r{.model = m,
                .slices = {"v5e-4"},
                .global_batch = 1024,
                .mesh = "data=1,fsdp=4,tensor=1",
                .remat = "full",
                .microbatches = 1};
  auto whole = Plan(r);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_EQ(whole->size(), 1u);
  EXPECT_FALSE((*whole)[0].fits());
  r.microbatches = 0;
  r.remat = "";
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::map<std::string, Candidate> by;
  for (const Candidate& x : *c) by[x.remat] = x;
  ASSERT_TRUE(by["full"].fits()) << by["full"].rejected;
  EXPECT_GT(by["full"].microbatches, 1);
  // One microbatch fewer does not fit: the count is the fewest.
  r.remat = "full";
  r.microbatches = by["full"].microbatches / 2;
  auto fewer = Plan(r);
  ASSERT_TRUE(fewer.ok());
  EXPECT_FALSE((*fewer)[0].fits());
  if (by["none"].fits()) {
    EXPECT_GE(by["none"].microbatches, by["full"].microbatches);
  }
  EXPECT_NE(PlanTable(r, *c).find(" --microbatches "), std::string::npos);
}

// Fewer sequences than devices: a sequence axis splits each sequence's
// tokens, the batch staying whole along it.
TEST(Plan, ASequenceAxisSplitsWhatTheBatchCannot) {
  PlanRequest r{
      .model = Small(), .slices = {"v5e-8"}, .global_batch = 2, .max_tensor = 1, .remat = "full"};
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_FALSE(c->empty());
  for (const Candidate& x : *c) {
    EXPECT_EQ(x.data * x.fsdp * x.sequence, 8) << x.Mesh();
    EXPECT_GE(x.sequence, 4) << x.Mesh();  // data x fsdp divides the 2 sequences
    EXPECT_EQ(128 % x.sequence, 0) << x.Mesh();
    EXPECT_TRUE(x.fits()) << x.rejected;
    EXPECT_NE(x.Mesh().find(",sequence=" + std::to_string(x.sequence)), std::string::npos);
  }
  r.max_sequence = 1;
  EXPECT_EQ(Plan(r).status().code(), StatusCode::kInvalidArgument);
}

// A mixture of experts adds an expert axis that divides its experts; a
// dense model never gets one.
TEST(Plan, MixturesOfExpertsSearchAnExpertAxis) {
  model::ModelSpec m = Small();
  m.experts = 4;
  m.experts_per_token = 2;
  PlanRequest r{.model = m, .slices = {"v5e-8"}, .global_batch = 16, .remat = "full"};
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::set<int64_t> experts;
  for (const Candidate& x : *c) {
    EXPECT_EQ(x.data * x.fsdp * x.sequence * x.expert * x.tensor, 8) << x.Mesh();
    EXPECT_EQ(m.experts % x.expert, 0) << x.Mesh();
    EXPECT_TRUE(x.fits()) << x.rejected;
    experts.insert(x.expert);
    if (x.expert > 1) {
      EXPECT_NE(x.Mesh().find(",expert=" + std::to_string(x.expert)), std::string::npos);
    }
  }
  EXPECT_EQ(experts, (std::set<int64_t>{1, 2, 4}));
  r.mesh = "fsdp=2,expert=4";
  auto one = Plan(r);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].Mesh(), "data=1,fsdp=2,expert=4,tensor=1");
  r.model = Small();
  auto dense = Plan(r);
  EXPECT_EQ(dense.status().code(), StatusCode::kInvalidArgument);
}

// Over two slices the data axis spans them (a multiple of the slices).
TEST(Plan, MultisliceMeshesSplitDataOverTheSlices) {
  PlanRequest r{.model = Small(), .slices = {"2xv5e:2x2"}, .global_batch = 16, .max_tensor = 1};
  auto c = Plan(r);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_FALSE(c->empty());
  for (const Candidate& x : *c) {
    EXPECT_EQ(x.chips, 8);
    EXPECT_EQ(x.data % 2, 0) << x.Mesh();
    EXPECT_TRUE(x.fits()) << x.rejected;
  }
}

TEST(Plan, BadRequestsSayWhy) {
  // With tensor at most 4 and no sequence axis, 3 sequences split over no
  // mesh.
  PlanRequest r{
      .model = Small(), .slices = {"v5e-8"}, .global_batch = 3, .max_tensor = 4, .max_sequence = 1};
  auto c = Plan(r);
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("a global batch of 3"), std::string::npos);
  r.global_batch = 8;
  r.slices = {"v9-8"};
  EXPECT_FALSE(Plan(r).ok());
  r.slices = {"v5e-8"};
  r.pricing.region = "mars-north1";
  EXPECT_NE(Plan(r).status().message().find("no price is recorded in region 'mars-north1'"),
            std::string::npos);
}

}  // namespace
}  // namespace tpusim::planner
