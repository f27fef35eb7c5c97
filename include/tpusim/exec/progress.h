// How far a running program has got, for a progress line drawn by another
// thread, and the request to stop it (Ctrl-C).
#ifndef TPUSIM_EXEC_PROGRESS_H_
#define TPUSIM_EXEC_PROGRESS_H_

#include <atomic>
#include <cstdint>

#include "tpusim/ir/ir.h"

namespace tpusim::exec {

// Shared by the interpreters of a run (every process of a grid); written by
// them, read by any thread. Lock-free, so a signal handler may set `stop`.
struct Progress {
  std::atomic<int64_t> ops{0};  // ops evaluated so far
  // The loop that most recently began an iteration (the innermost running),
  // and that iteration's index from 0; null before any loop ran.
  std::atomic<const ir::Operation*> loop{nullptr};
  std::atomic<int64_t> iteration{0};
  // Set to stop the run: interpreters return kCancelled before their next
  // op or loop iteration.
  std::atomic<bool> stop{false};

  // Whether `stop` was set.
  bool stopped() const { return stop.load(std::memory_order_relaxed); }
};

}  // namespace tpusim::exec

#endif  // TPUSIM_EXEC_PROGRESS_H_
