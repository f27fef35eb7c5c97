#include "runtime/steps.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <tuple>
#include <utility>

#include "runtime/run_io.h"
#include "tpusim/mpi/world.h"
#include "tpusim/report/report.h"
#include "tpusim/runtime/checkpoint.h"

namespace tpusim::runtime {
namespace {

// "step 3: 7.43 us, MXU 28.6%": what a watcher of a long run (tpusim cloud
// ssh) reads its progress from.
void PrintStep(int64_t step, const timing::Timeline& timeline, std::FILE* out) {
  const report::Summary s = report::Summarize(timeline);
  std::fprintf(out, "step %lld: %s, MXU %.1f%%\n", static_cast<long long>(step),
               report::FormatSeconds(s.total_seconds).c_str(), 100 * s.mxu_utilization);
}

std::vector<ir::Type> StateTypes(const ir::Function& f, size_t state) {
  const std::vector<ir::Type>& inputs = f.type().inputs;
  return {inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(state)};
}

// The state of the checkpoint in options.checkpoint_dir and its step, or
// none when there is no checkpoint yet.
StatusOr<std::optional<std::pair<int64_t, std::vector<Tensor>>>> Resume(const ir::Function& f,
                                                                        size_t state,
                                                                        const RunOptions& options) {
  const std::string& dir = options.checkpoint_dir;
  StatusOr<Manifest> manifest = ReadManifest(dir);
  if (!manifest.ok() && manifest.status().code() == StatusCode::kNotFound) return std::nullopt;
  if (!manifest.ok()) return manifest.status();
  StatusOr<std::vector<Tensor>> tensors = LoadCheckpoint(dir, *manifest, StateTypes(f, state));
  if (!tensors.ok()) return tensors.status().WithContext("@" + f.name());
  return std::make_optional(std::make_pair(manifest->step, *std::move(tensors)));
}

// The first step's arguments: the inputs options name, the state's taken
// from `resumed` where given.
StatusOr<std::vector<Tensor>> FirstArguments(const ir::Function& f, const RunOptions& given,
                                             std::vector<Tensor> resumed) {
  // Resumed, as many positional inputs as constant parameters are those:
  // the state comes from the checkpoint. (As many as every parameter are
  // the first run's command line again; the state's are then not read.)
  RunOptions options = given;
  const size_t n = f.type().inputs.size();
  const auto positional = std::count_if(options.inputs.begin(), options.inputs.end(),
                                        [](const std::string& s) { return s.find('=') == s.npos; });
  if (!resumed.empty() && positional == static_cast<std::ptrdiff_t>(n - resumed.size()) &&
      positional == static_cast<std::ptrdiff_t>(options.inputs.size())) {
    for (size_t k = 0; k < options.inputs.size(); ++k) {
      const int param = static_cast<int>(resumed.size() + k);
      options.inputs[k] = f.entry().argument(param).name() + "=" + options.inputs[k];
    }
  }
  // Random inputs are drawn for every parameter alike, so that the constant
  // ones get the values of the run that wrote the checkpoint.
  std::vector<bool> skip(resumed.size(), !options.random_inputs);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> args, Inputs(f, options, f.type().inputs, skip));
  for (size_t i = 0; i < resumed.size(); ++i) args[i] = std::move(resumed[i]);
  return args;
}

Status CheckResults(const ir::Function& f, const std::vector<Tensor>& results) {
  for (const Tensor& r : results) {
    if (r.type().is_tuple()) {
      return Unimplemented("@" + f.name() + " returns a tuple, which .npy cannot hold");
    }
  }
  return Status::Ok();
}

// The loop stopped on request (`stopped`) in step `n`: the state after step
// n - 1 is checkpointed unless step `saved` is that one already.
Status Stop(const Status& stopped, int64_t n, int64_t saved, const RunOptions& options,
            std::vector<Tensor> state, std::FILE* out) {
  std::string said = "stopped in step " + std::to_string(n);
  if (!options.checkpoint_dir.empty() && saved < n - 1) {
    TPUSIM_RETURN_IF_ERROR(WriteCheckpoint(options.checkpoint_dir, n - 1, state));
    saved = n - 1;
  }
  if (!options.checkpoint_dir.empty() && saved > 0) {
    said += "; the checkpoint in " + options.checkpoint_dir + " holds step " +
            std::to_string(saved) + ", where a rerun resumes";
  }
  std::fprintf(out, "%s\n", said.c_str());
  return stopped;
}

}  // namespace

Status CheckStepOptions(const RunOptions& options) {
  if (options.steps < 1) return InvalidArgument("--steps must be at least 1");
  if (options.checkpoint_every < 0) return InvalidArgument("--checkpoint-every must be at least 1");
  if (!(options.checkpoint_seconds > 0)) {
    return InvalidArgument("--checkpoint-seconds must be positive");
  }
  if (!options.checkpoint_dir.empty() && options.timing_only) {
    return InvalidArgument(
        "--checkpoint-dir saves values, which --timing-only does not compute; drop one of them");
  }
  if (RunsSteps(options) && options.world != nullptr && options.world->size() > 1) {
    return Unimplemented("--steps and --checkpoint-dir do not run under mpirun");
  }
  return Status::Ok();
}

StatusOr<size_t> StateSize(const ir::Function& f) {
  const ir::FunctionType& type = f.type();
  if (type.results.size() > type.inputs.size()) {
    return InvalidArgument("@" + f.name() + " returns " + std::to_string(type.results.size()) +
                           " results but takes " + std::to_string(type.inputs.size()) +
                           " parameters; a train step returns its state, its leading parameters");
  }
  for (size_t i = 0; i < type.results.size(); ++i) {
    if (type.results[i] != type.inputs[i]) {
      return InvalidArgument(
          "@" + f.name() + " result " + std::to_string(i) + " is " + type.results[i].ToString() +
          " but " + InputLabel(f, static_cast<int>(i)) + " is " + type.inputs[i].ToString() +
          "; a train step returns its state, its leading parameters");
    }
  }
  return type.results.size();
}

StatusOr<std::optional<timing::Timeline>> RunSteps(const ir::Function& f, const RunOptions& options,
                                                   const StepFn& step, std::FILE* out) {
  TPUSIM_ASSIGN_OR_RETURN(size_t state, StateSize(f));
  int64_t done = 0;
  std::vector<Tensor> resumed;
  if (!options.checkpoint_dir.empty()) {
    for (size_t i = 0; i < state; ++i) {
      if (!f.type().inputs[i].is_tensor()) {
        return Unimplemented(InputLabel(f, static_cast<int>(i)) + " is " +
                             f.type().inputs[i].ToString() + ", which a checkpoint cannot hold");
      }
    }
    TPUSIM_ASSIGN_OR_RETURN(auto checkpoint, Resume(f, state, options));
    if (checkpoint) {
      std::tie(done, resumed) = *std::move(checkpoint);
      std::fprintf(out, "resumed from step %lld (%s)\n", static_cast<long long>(done),
                   options.checkpoint_dir.c_str());
    }
  }
  if (done >= options.steps) {
    std::fprintf(out, "nothing to do: the checkpoint is at step %lld, --steps is %lld\n",
                 static_cast<long long>(done), static_cast<long long>(options.steps));
    TPUSIM_RETURN_IF_ERROR(WriteResults(resumed, {}, options.output_dir, out));
    return std::nullopt;
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> args, FirstArguments(f, options, std::move(resumed)));
  std::optional<StepRun> last;
  using Clock = std::chrono::steady_clock;
  Clock::time_point saved = Clock::now();
  int64_t saved_step = done;
  auto state_of = [&] {
    return std::vector<Tensor>(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(state));
  };
  for (int64_t n = done + 1; n <= options.steps; ++n) {
    StatusOr<StepRun> run = step(args);
    if (run.status().code() == StatusCode::kCancelled) {
      return Stop(run.status(), n, saved_step, options, state_of(), out);
    }
    TPUSIM_RETURN_IF_ERROR(run.status());
    last = *std::move(run);
    PrintStep(n, last->timeline, out);
    for (size_t i = 0; i < state; ++i) args[i] = last->results[i];
    // Every K steps when asked, else every so many seconds of wall time,
    // and after the last step either way.
    const bool due =
        n == options.steps ||
        (options.checkpoint_every > 0
             ? n % options.checkpoint_every == 0
             : std::chrono::duration<double>(Clock::now() - saved).count() >=
                   options.checkpoint_seconds);
    if (!options.checkpoint_dir.empty() && due) {
      TPUSIM_RETURN_IF_ERROR(WriteCheckpoint(options.checkpoint_dir, n, state_of()));
      saved = Clock::now();
      saved_step = n;
    }
  }
  TPUSIM_RETURN_IF_ERROR(CheckResults(f, last->results));
  TPUSIM_RETURN_IF_ERROR(WriteResults(last->results, {}, options.output_dir, out));
  return std::make_optional(std::move(last->timeline));
}

Status PrintStaticSteps(const ir::Function& f, const timing::Timeline& timeline,
                        const RunOptions& options, std::FILE* out) {
  TPUSIM_RETURN_IF_ERROR(StateSize(f).status());
  for (int64_t n = 1; n <= options.steps; ++n) PrintStep(n, timeline, out);
  return Status::Ok();
}

}  // namespace tpusim::runtime
