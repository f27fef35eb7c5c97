// The model runner behind `tpusim run`: feeds .npy (or random) inputs to a
// program's entry function and writes its results as .npy files; Execute
// does the same in memory.
#ifndef TPUSIM_RUNTIME_RUN_H_
#define TPUSIM_RUNTIME_RUN_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/exec/progress.h"
#include "tpusim/hw/chip.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/report/report.h"
#include "tpusim/runtime/compile.h"

namespace tpusim::mpi {
class World;
}

namespace tpusim::runtime {

struct RunOptions {
  std::string program;  // path of the StableHLO file
  // "file.npy" (the next unnamed parameter) or "name=file.npy", where name is
  // the parameter's SSA name without '%' (arg0).
  std::vector<std::string> inputs;
  std::string output_dir = "out";
  std::string entry;           // empty: @main, else the only public function
  bool random_inputs = false;  // fill parameters given no input
  // Shapes of a shape-polymorphic program's parameters ("arg0=8x4"), as
  // runtime/arg_shapes.h reads them; parameters with an input file may
  // take its shape instead.
  std::vector<std::string> arg_shapes;
  uint64_t seed = 0;
  ops::EvalOptions eval;

  // Timing on a chip.
  std::string chip = "v5e";    // a preset (tpusim chips lists them)
  std::string chip_file;       // a TOML chip description; overrides `chip`
  // Timing on a pod slice: an accelerator type ("v5p-128", "2xv5e-256"; its
  // chip replaces `chip`), or a torus shape of the chip ("4x4x8").
  std::string slice;
  std::string topology;
  // For a global program: a device mesh ("data=2,model=4") and argument or
  // result shardings over it ("arg0=data,_"), as runtime/sharding_flags.h
  // reads them.
  std::string mesh;
  std::vector<std::string> shard;
  bool overlap = true;         // collectives overlap independent compute (--no-overlap: not)
  bool timing_only = false;    // shapes only: no inputs, values or .npy files
  std::string report_json;     // where the JSON report goes; empty: nowhere
  std::string trace;           // where the Perfetto trace goes; empty: nowhere
  std::string report_html;     // where the HTML page goes; empty: nowhere
  // Iterations for while loops whose trip count timing-only mode cannot infer.
  std::optional<int64_t> trip_count;

  // A training loop (runtime/steps.h): run a train step, whose results are
  // its leading parameters' new values, `steps` times, feeding them back;
  // with a checkpoint directory, save them every `checkpoint_every` steps
  // (0: once `checkpoint_seconds` of wall time have passed since the last
  // save) and after the last, and resume from the checkpoint found there
  // (tpusim/runtime/checkpoint.h). Single devices with values, or timing
  // only without checkpoints.
  int64_t steps = 1;
  std::string checkpoint_dir;  // empty: no checkpoints
  int64_t checkpoint_every = 0;
  double checkpoint_seconds = 60;

  // Compilation: passes, fusion, cache, dumps.
  CompileOptions compile;

  // Where computing values counts its progress and reads a request to stop
  // (Ctrl-C). Stopped, a run writes no results, prints the report of the
  // part that ran (a training loop: checkpoints its last finished step) and
  // returns kCancelled. Null: the run counts nothing and cannot be stopped.
  exec::Progress* progress = nullptr;
  // Where a progress line is drawn while values take more than a few
  // seconds (runtime/progress_line.h): a terminal, or null for none.
  std::FILE* progress_out = nullptr;

  // The mpirun job this process is part of (tpusim/mpi/world.h), or null.
  // The slice's devices are spread over its processes; process 0 alone
  // writes results, reports and traces.
  mpi::World* world = nullptr;
};

// Compiles the program for the chip (runtime/compile.h), runs the compiled
// program: computes its results (unless timing_only) and writes
// result<i>.npy into output_dir with one summary line each, then prints the
// timing report to `out` and writes the JSON report, trace and HTML page if asked. Float inputs are rounded to narrower float parameter types (bf16,
// f8...). Every output file is written whole or not at all.
Status RunProgram(const RunOptions& options, std::FILE* out);

// The chip of `options`: the preset named by `chip`, or `chip_file` loaded.
StatusOr<hw::ChipSpec> SelectChip(const RunOptions& options);

// A program's run held in memory: what `tpusim run` writes, for embedding
// tpusim (the Python module).
struct Execution {
  std::vector<Tensor> results;  // empty for a timing-only run
  report::Summary summary;
  std::string text_report;      // as `tpusim run` prints it
  std::string json_report;      // as --report-json writes it
  std::string trace;            // the Perfetto trace when options.trace is set
  std::string html_report;      // the HTML page when options.report_html is set
};

// Compiles and runs `module` as RunProgram does, on `args` (one per
// parameter of the entry function, converted to its type as .npy inputs are;
// none for a timing-only run) instead of files, and returns the results and reports instead of
// writing them; a shape-polymorphic program is refined for the arguments'
// shapes (for options.arg_shapes when timing only). options.inputs,
// output_dir, report_json and world are not used. kUnimplemented for the values of a program over
// several devices of a slice (RunProgram computes those) and for steps or a checkpoint directory;
// kInvalidArgument for arguments that do not match the entry function's parameters.
StatusOr<Execution> Execute(std::unique_ptr<ir::Module> module, std::vector<Tensor> args,
                            const RunOptions& options);

// `tpusim chips`: one line per preset with its key figures and sources.
void ListChips(std::FILE* out);

// `tpusim slices`: every offered slice with its chips, torus and hosts.
void ListSlices(std::FILE* out);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_RUN_H_
