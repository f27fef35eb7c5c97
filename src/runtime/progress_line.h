// The line a terminal shows while values take long: time so far, ops run,
// and the loop being iterated, redrawn in place and erased when done.
#ifndef TPUSIM_RUNTIME_PROGRESS_LINE_H_
#define TPUSIM_RUNTIME_PROGRESS_LINE_H_

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "tpusim/exec/progress.h"

namespace tpusim::runtime {

// Draws `progress` on `out` from `delay_s` after construction, every
// `period_s`, until destroyed (which erases the line). Draws nothing when
// `progress` or `out` is null, or when the work ends before the delay.
class ProgressLine {
 public:
  ProgressLine(const exec::Progress* progress, std::FILE* out, double delay_s = 2,
               double period_s = 0.5);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void Draw(double elapsed_s);

  const exec::Progress* progress_;
  std::FILE* out_;
  std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_PROGRESS_LINE_H_
