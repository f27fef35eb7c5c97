// Wall-clock timing for the benchmarks.
#ifndef TPUSIM_BENCH_CLOCK_H_
#define TPUSIM_BENCH_CLOCK_H_

#include <algorithm>
#include <chrono>
#include <functional>

namespace tpusim::bench {

using Clock = std::chrono::steady_clock;

// Seconds from `since` to now.
inline double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// The best wall time of `repeats` runs of f, in seconds, after `warmups`
// untimed runs (first-touch page faults, oneDNN's JIT).
inline double BestSeconds(int repeats, const std::function<void()>& f, int warmups = 0) {
  for (int w = 0; w < warmups; ++w) f();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const Clock::time_point start = Clock::now();
    f();
    best = std::min(best, Seconds(start));
  }
  return best;
}

}  // namespace tpusim::bench

#endif  // TPUSIM_BENCH_CLOCK_H_
