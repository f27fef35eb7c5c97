// Wall-clock timing for the benchmarks.
#ifndef TPUSIM_BENCH_CLOCK_H_
#define TPUSIM_BENCH_CLOCK_H_

#include <chrono>

namespace tpusim::bench {

using Clock = std::chrono::steady_clock;

// Seconds from `since` to now.
inline double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

}  // namespace tpusim::bench

#endif  // TPUSIM_BENCH_CLOCK_H_
