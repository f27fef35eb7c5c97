// Timing-model speed: how fast tpusim times a program from shapes alone, and
// how much faster the analytic MXU model is than the cycle-level simulator it
// must agree with. Run: build/bench/timing_bench
#include <chrono>
#include <cstdio>
#include <string>

#include "tpusim/frontend/stablehlo_parser.h"
#include "tpusim/hw/mxu.h"
#include "tpusim/hw/systolic_array.h"
#include "tpusim/timing/timing.h"
#include "tpusim/verify/verifier.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// A transformer-like chain of `layers` blocks, 10 ops each: two matmuls,
// bias adds, a GELU-ish tanh, a residual and a reduction.
std::string LayeredProgram(int layers) {
  std::string s =
      "func.func public @main(%x: tensor<512x1024xbf16>, %w1: tensor<1024x4096xbf16>, "
      "%w2: tensor<4096x1024xbf16>, %b: tensor<512x4096xbf16>) -> tensor<512x1024xbf16> {\n"
      "  %zero = stablehlo.constant dense<0.0> : tensor<bf16>\n";
  std::string h = "%x";
  for (int i = 0; i < layers; ++i) {
    std::string p = "%l" + std::to_string(i) + "_";
    s += "  " + p + "0 = stablehlo.dot_general " + h + ", %w1, contracting_dims = [1] x [0] : "
         "(tensor<512x1024xbf16>, tensor<1024x4096xbf16>) -> tensor<512x4096xbf16>\n";
    s += "  " + p + "1 = stablehlo.add " + p + "0, %b : tensor<512x4096xbf16>\n";
    s += "  " + p + "2 = stablehlo.tanh " + p + "1 : tensor<512x4096xbf16>\n";
    s += "  " + p + "3 = stablehlo.multiply " + p + "2, " + p + "1 : tensor<512x4096xbf16>\n";
    s += "  " + p + "4 = stablehlo.dot_general " + p + "3, %w2, contracting_dims = [1] x [0] : "
         "(tensor<512x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<512x1024xbf16>\n";
    s += "  " + p + "5 = stablehlo.add " + p + "4, " + h + " : tensor<512x1024xbf16>\n";
    s += "  " + p + "6 = stablehlo.multiply " + p + "5, " + p + "5 : tensor<512x1024xbf16>\n";
    s += "  " + p + "7 = stablehlo.reduce(" + p + "6 init: %zero) applies stablehlo.add across "
         "dimensions = [1] : (tensor<512x1024xbf16>, tensor<bf16>) -> tensor<512xbf16>\n";
    s += "  " + p + "8 = stablehlo.broadcast_in_dim " + p + "7, dims = [0] : "
         "(tensor<512xbf16>) -> tensor<512x1024xbf16>\n";
    s += "  " + p + "9 = stablehlo.divide " + p + "5, " + p + "8 : tensor<512x1024xbf16>\n";
    h = p + "9";
  }
  return s + "  return " + h + " : tensor<512x1024xbf16>\n}\n";
}

void TimingOnlySpeed() {
  const int layers = 1000;
  std::string text = LayeredProgram(layers);
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
  FastModelSpeedup();
  return 0;
}
