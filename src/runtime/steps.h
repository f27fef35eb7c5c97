// The training loop behind `tpusim run --steps N --checkpoint-dir DIR`: a
// train step takes its state as its leading parameters and returns the new
// state as its results; the loop feeds the results back, checkpoints the
// state (tpusim/runtime/checkpoint.h) and resumes from the last checkpoint.
#ifndef TPUSIM_RUNTIME_STEPS_H_
#define TPUSIM_RUNTIME_STEPS_H_

#include <cstdio>
#include <functional>
#include <optional>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/runtime/run.h"
#include "tpusim/tensor/tensor.h"
#include "tpusim/timing/timeline.h"

namespace tpusim::runtime {

// Whether `options` ask for more than today's single run.
inline bool RunsSteps(const RunOptions& options) {
  return options.steps != 1 || !options.checkpoint_dir.empty();
}

// kInvalidArgument for steps or checkpoint_every below 1, or a checkpoint
// directory with timing_only (which has no state to save).
Status CheckStepOptions(const RunOptions& options);

// The number of state parameters of train step `f`: every result i has the
// type of parameter i; the parameters after them are constant inputs.
// kInvalidArgument naming the first result that does not match.
StatusOr<size_t> StateSize(const ir::Function& f);

// One step's results and timing.
struct StepRun {
  std::vector<Tensor> results;
  timing::Timeline timeline;
};
using StepFn = std::function<StatusOr<StepRun>(std::vector<Tensor> args)>;

// Runs options.steps steps of `f` with `step`, from the inputs options name
// or from the checkpoint in options.checkpoint_dir, printing one line per
// step to `out`, checkpointing every options.checkpoint_every steps and after
// the last, and writing the last results into options.output_dir. Stopped
// on request (options.progress), checkpoints the last finished step and
// returns kCancelled. Returns
// the last step's timeline, or none when the checkpoint is at
// options.steps already (its state is then written as the results).
// REQUIRES: CheckStepOptions(options) is OK.
StatusOr<std::optional<timing::Timeline>> RunSteps(const ir::Function& f, const RunOptions& options,
                                                   const StepFn& step, std::FILE* out);

// Timing only: every step takes the time of `timeline`, which timed one
// from shapes; prints the options.steps lines RunSteps would.
Status PrintStaticSteps(const ir::Function& f, const timing::Timeline& timeline,
                        const RunOptions& options, std::FILE* out);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_STEPS_H_
