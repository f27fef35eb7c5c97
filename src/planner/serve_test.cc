#include "tpusim/planner/serve.h"

#include <gtest/gtest.h>

namespace tpusim::planner {
namespace {

// Flat times: prefill 100 ms for any batch, decode 10 ms a step.
StepTimes Flat() {
  StepTimes t;
  t.min_batch = 1;
  t.max_batch = 8;
  t.first_context = 100;
  t.last_context = 109;
  t.prefill_min = t.prefill_max = 0.1;
  t.decode[0][0] = t.decode[0][1] = t.decode[1][0] = t.decode[1][1] = 0.01;
  return t;
}

// One batch at once: the first token after the prefill, then gen - 1
// decode steps, every request alike.
TEST(Serving, ClosedBatchIsPrefillThenDecodeSteps) {
  ServeStats s = SimulateServing(Flat(), {.batch = 8, .prompt = 100, .gen = 10});
  EXPECT_EQ(s.requests, 8);
  EXPECT_NEAR(s.time_to_first_token.p50, 0.1, 1e-12);
  EXPECT_NEAR(s.time_to_first_token.p99, 0.1, 1e-12);
  EXPECT_NEAR(s.time_per_output_token.p50, 0.01, 1e-12);
  EXPECT_NEAR(s.latency.p99, 0.1 + 9 * 0.01, 1e-12);
  EXPECT_NEAR(s.seconds, 0.19, 1e-12);
  EXPECT_NEAR(s.tokens_per_s, 80 / 0.19, 1e-9);
}

// Times between the samples are interpolated linearly in the batch and the
// context, and clamped outside them.
TEST(Serving, StepTimesInterpolate) {
  StepTimes t = Flat();
  t.prefill_min = 0.02;
  t.prefill_max = 0.16;
  t.decode[0][0] = 0.01;
  t.decode[0][1] = 0.02;
  t.decode[1][0] = 0.03;
  t.decode[1][1] = 0.05;
  EXPECT_NEAR(t.Prefill(1), 0.02, 1e-12);
  EXPECT_NEAR(t.Prefill(8), 0.16, 1e-12);
  EXPECT_NEAR(t.Prefill(4), 0.02 + 3.0 / 7 * 0.14, 1e-12);
  EXPECT_NEAR(t.Decode(8, 109), 0.05, 1e-12);
  EXPECT_NEAR(t.Decode(1, 104.5), 0.015, 1e-12);
  EXPECT_NEAR(t.Decode(100, 1000), 0.05, 1e-12);  // clamped to the samples
}

// Light load: requests rarely meet, so each waits only for its own
// prefill; heavy load: they queue for slots and the first token waits.
// Throughput follows the offered load until the slots saturate.
TEST(Serving, QueueingGrowsWithTheRate) {
  ServeLoad light{.batch = 8, .prompt = 100, .gen = 10, .rate = 0.5, .requests = 400};
  ServeStats a = SimulateServing(Flat(), light);
  EXPECT_EQ(a.requests, 400);
  EXPECT_NEAR(a.time_to_first_token.p50, 0.1, 0.02);
  EXPECT_NEAR(a.tokens_per_s, 0.5 * 10, 1.0);
  ServeLoad heavy = light;
  heavy.rate = 200;
  ServeStats b = SimulateServing(Flat(), heavy);
  EXPECT_GT(b.time_to_first_token.p50, 10 * a.time_to_first_token.p50);
  EXPECT_GE(b.time_to_first_token.p99, b.time_to_first_token.p95);
  EXPECT_GE(b.time_to_first_token.p95, b.time_to_first_token.p50);
  // Saturated: at most 8 sequences decode, at most 8 tokens a 10 ms step.
  EXPECT_LT(b.tokens_per_s, 8 / 0.01);
  EXPECT_GT(b.tokens_per_s, a.tokens_per_s);
  // The same seed, the same arrivals.
  EXPECT_EQ(SimulateServing(Flat(), heavy).latency.p99, b.latency.p99);
}

// A small model served on a slice: every step timed, the memory counted.
TEST(Serving, PlanTimesTheStepsOnTheSlice) {
  model::ModelSpec m;
  m.name = "small";
  m.layers = 2;
  m.d_model = 256;
  m.heads = 8;
  m.kv_heads = 4;
  m.head_dim = 32;
  m.d_ff = 512;
  m.vocab = 1000;
  m.max_seq = 512;
  ServeRequest r{.model = m,
                 .slice = "v5e-4",
                 .batch = 8,
                 .prompt = 128,
                 .gen = 16,
                 .rate = 50,
                 .requests = 100};
  auto p = PlanServing(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->mesh, "data=1,tensor=4");
  EXPECT_GT(p->times.prefill_max, p->times.prefill_min);
  EXPECT_GT(p->times.decode[1][1], 0);
  EXPECT_GT(p->times.decode[1][1], p->times.decode[0][0]);
  EXPECT_EQ(p->kv_cache_bytes, 2LL * 2 * 8 * (128 + 16) * 4 * 32 * 2);
  EXPECT_GT(p->hbm_peak_bytes, 0);
  EXPECT_EQ(p->loaded.requests, 100);
  // Priced at the rate simulated, not at the one batch's throughput.
  const double usd = r.pricing.PerChipHour("v5e");
  ASSERT_GT(usd, 0);
  EXPECT_NEAR(p->usd_per_million_tokens,
              usd / 3600 * static_cast<double>(p->chips) / p->loaded.tokens_per_s * 1e6,
              1e-9 * p->usd_per_million_tokens);
  EXPECT_NE(ServeTable(r, *p).find("generated tokens at 50 requests/s"), std::string::npos);
  EXPECT_NE(ServeTable(r, *p).find("time to first token"), std::string::npos);
  EXPECT_NE(ServeJson(r, *p).find("\"at_rate\""), std::string::npos);
  r.mesh = "data=3,tensor=1";
  EXPECT_EQ(PlanServing(r).status().code(), StatusCode::kInvalidArgument);
  r.mesh = "";
  r.gen = 0;
  EXPECT_EQ(PlanServing(r).status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(PlanServing(r).status().message().find("missing: --gen"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::planner
