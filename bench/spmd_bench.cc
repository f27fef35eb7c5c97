// The SPMD partitioner's speed: partitioning a 10,001-op global program
// (a Megatron-style layer stack) for 256 devices, 32-way data by 8-way
// model parallel, against the program's parse+verify time and the
// one-second target.
// Run: build/bench/spmd_bench
#include <cstdio>

#include "clock.h"
#include "programs.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/spmd/partitioner.h"
#include "tpusim/verify/verifier.h"

using tpusim::bench::Clock;
using tpusim::bench::Seconds;

int main() {
  const std::string text = tpusim::bench::GlobalLayeredProgram(1000, 32, 8);
  auto t0 = Clock::now();
  auto module = tpusim::frontend::ParseStableHlo(text, "global.mlir");
  if (!module.ok() || !tpusim::verify::VerifyModule(**module).ok()) {
    std::printf("cannot build the program: %s\n", module.status().ToString().c_str());
    return 1;
  }
  const double parse_s = Seconds(t0);
  const size_t ops = (*module)->Lookup("main")->entry().ops().size();
  tpusim::spmd::PartitionStats stats;
  t0 = Clock::now();
  auto partitioned = tpusim::spmd::Partition(**module, "main", &stats);
  const double partition_s = Seconds(t0);
  if (!partitioned.ok()) {
    std::printf("partitioning failed: %s\n", partitioned.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "partition a %zu-op program for %lld devices: %.3f s = %.2f x its parse+verify "
      "time (%.3f s); %.2f of the 1 s target\n",
      ops, static_cast<long long>(stats.devices), partition_s, partition_s / parse_s, parse_s,
      partition_s / 1.0);
  for (const auto& [op, n] : stats.inserted) std::printf("  added %5d %s\n", n, op.c_str());
  return 0;
}
