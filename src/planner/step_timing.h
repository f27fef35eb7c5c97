// A global program (a model's step) partitioned, compiled and timed on a
// slice: the path `tpusim run --slice --timing-only` takes, shared by the
// training and serving plans. Internal to src/planner.
#ifndef TPUSIM_SRC_PLANNER_STEP_TIMING_H_
#define TPUSIM_SRC_PLANNER_STEP_TIMING_H_

#include <cstdint>
#include <memory>
#include <string>

#include "tpusim/base/status.h"
#include "tpusim/pod/collective_cost.h"

namespace tpusim::planner {

struct StepTiming {
  // Empty when it fits HBM; else buffer assignment's breakdown.
  std::string rejected;
  double seconds = 0, exposed_communication_seconds = 0;
  int64_t hbm_peak_bytes = 0;  // what it needs, rejected or not
};

// `text` (StableHLO; `filename` names it in errors) on every device of
// `slice->slice()`, its collectives priced by `slice` (shared by the steps
// timed on one slice). Errors are those of parsing, partitioning or timing;
// a program too large for HBM is a StepTiming with `rejected` set.
StatusOr<StepTiming> TimeStep(const std::string& text, const std::string& filename,
                              const std::shared_ptr<pod::CollectivePatterns>& slice);

}  // namespace tpusim::planner

#endif  // TPUSIM_SRC_PLANNER_STEP_TIMING_H_
