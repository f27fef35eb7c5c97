// Timing-model speed: how fast tpusim times a program from shapes alone, and
// how much faster the analytic MXU model is than the cycle-level simulator it
// must agree with. Run: build/bench/timing_bench
#include <cstdio>
#include <string>

#include "clock.h"
#include "programs.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/hw/mxu.h"
#include "tpusim/hw/systolic_array.h"
#include "tpusim/pod/collective_cost.h"
#include "tpusim/report/report.h"
#include "tpusim/timing/timing.h"
#include "tpusim/verify/verifier.h"

namespace {

using tpusim::bench::Clock;
using tpusim::bench::Seconds;

void TimingOnlySpeed() {
  const int layers = 1000;
  std::string text = tpusim::bench::LayeredProgram(layers);
  auto t0 = Clock::now();
  auto module = tpusim::frontend::ParseStableHlo(text, "layers.mlir");
  if (!module.ok() || !tpusim::verify::VerifyModule(**module).ok()) {
    std::printf("cannot build the benchmark program: %s\n", module.status().ToString().c_str());
    return;
  }
  const double parse_s = Seconds(t0);
  auto chip = tpusim::hw::FindPreset("v5p");
  t0 = Clock::now();
  auto timeline = tpusim::timing::TimeStatically(**module, "main", *chip, {});
  const double time_s = Seconds(t0);
  if (!timeline.ok()) {
    std::printf("timing failed: %s\n", timeline.status().ToString().c_str());
    return;
  }
  const size_t ops = timeline->events().size();
  std::printf("timing-only on v5p: %zu ops timed in %.3f s (%.0f ops/s); parse+verify %.3f s\n",
              ops, time_s, ops / time_s, parse_s);
  std::printf("  a %zu-op program end to end: %.3f s (target < 1 s on one core)\n", ops,
              parse_s + time_s);
}

// A 2048-chip slice: the collectives of a 10,000-op SPMD program priced on
// v5p-4096's 8x16x16 torus.
void SliceTimingSpeed() {
  const int layers = 1000, devices = 2048;
  std::string text = tpusim::bench::ShardedLayeredProgram(layers, devices);
  auto module = tpusim::frontend::ParseStableHlo(text, "sharded.mlir");
  if (!module.ok() || !tpusim::verify::VerifyModule(**module).ok()) {
    std::printf("cannot build the sharded program: %s\n",
                module.ok() ? "verify" : module.status().ToString().c_str());
    return;
  }
  auto slice = tpusim::pod::FindSlice("v5p-4096");
  auto t0 = Clock::now();
  auto pricer = tpusim::pod::CollectivePricer::Create(*slice, 1, devices);
  tpusim::Status prepared = pricer->Prepare(**module);
  const double prepare_s = Seconds(t0);
  tpusim::timing::StaticOptions options;
  options.pod = &*pricer;
  t0 = Clock::now();
  auto timeline = tpusim::timing::TimeStatically(**module, "main", slice->chip, options);
  const double time_s = Seconds(t0);
  if (!prepared.ok() || !timeline.ok()) {
    std::printf("slice timing failed: %s\n",
                (prepared.ok() ? timeline.status() : prepared).ToString().c_str());
    return;
  }
  // The report's slice section sums every link's bytes and lists every device.
  t0 = Clock::now();
  timeline->set_devices(std::vector<tpusim::timing::DeviceTotals>(devices, timeline->Totals()));
  tpusim::report::Summary summary = tpusim::report::Summarize(*timeline);
  const std::string report = tpusim::report::JsonReport(*timeline, summary);
  const double report_s = Seconds(t0);
  std::printf(
      "timing-only on v5p-4096 (2048 chips): %zu ops (%d all_reduce) timed in %.3f s, "
      "collectives routed in %.3f s, JSON report (%zu links, %d devices) in %.3f s "
      "(target: seconds)\n",
      timeline->events().size(), layers + layers / 10, time_s, prepare_s,
      static_cast<size_t>(slice->ici_links()), devices, report_s);
  // The latency-hiding pass reorders the same program (after the timeline is
  // done with it).
  tpusim::compiler::PassContext ctx;
  ctx.chip = &slice->chip;
  t0 = Clock::now();
  tpusim::Status scheduled = tpusim::compiler::RunLatencyHidingScheduler(**module, ctx);
  std::printf("  latency-hiding pass over its %zu ops: %.3f s%s\n", timeline->events().size(),
              Seconds(t0), scheduled.ok() ? "" : " (failed)");
}

void FastModelSpeedup() {
  tpusim::hw::MxuSpec mxu;  // one 128x128 weight-stationary array
  tpusim::hw::MatmulDims d{1024, 1024, 1024};
  std::vector<float> a(d.m * d.k, 0.5f), b(d.k * d.n, 0.25f);
  auto t0 = Clock::now();
  auto sim = tpusim::hw::SimulateSystolic(mxu, d, a, b);
  const double sim_s = Seconds(t0);
  if (!sim.ok()) {
    std::printf("simulation failed: %s\n", sim.status().ToString().c_str());
    return;
  }
  const int reps = 100000;
  int64_t cycles = 0;
  t0 = Clock::now();
  for (int i = 0; i < reps; ++i) {
    d.m = 1024 + (i & 1);  // defeat hoisting
    cycles += tpusim::hw::ArrayCycles(mxu, d).cycles;
  }
  const double fast_s = Seconds(t0) / reps;
  d.m = 1024;
  std::printf("1024^3 matmul on one 128x128 array: cycle-level %lld cycles in %.2f s, "
              "fast model %lld cycles in %.0f ns: %.3g x faster (checksum %lld)\n",
              static_cast<long long>(sim->cycles), sim_s,
              static_cast<long long>(tpusim::hw::ArrayCycles(mxu, d).cycles), fast_s * 1e9,
              sim_s / fast_s, static_cast<long long>(cycles % 1000));
}

}  // namespace

int main() {
  TimingOnlySpeed();
  SliceTimingSpeed();
  FastModelSpeedup();
  return 0;
}
