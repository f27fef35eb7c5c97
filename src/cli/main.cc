// The tpusim command line. Thin: parses flags and calls the runtime.
//
// Every error is one line "tpusim: <message>" on stderr (a parse error adds
// its source line and a caret); the exit status is 2 for bad input, 3 for
// unsupported input, 130 for a run stopped by Ctrl-C, 1 for a failed check or
// anything else.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <ctime>
#include <cstdio>
#include <exception>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli/cloud_command.h"
#include "tpusim/compiler/pipeline.h"
#include "tpusim/io/file.h"
#include "tpusim/model/model.h"
#include "tpusim/mpi/world.h"
#include "tpusim/planner/model_command.h"
#include "tpusim/planner/plan.h"
#include "tpusim/planner/serve.h"
#include "tpusim/runtime/check.h"
#include "tpusim/runtime/convert.h"
#include "tpusim/runtime/load.h"
#include "tpusim/runtime/run.h"

namespace {

using tpusim::Status;
using tpusim::numerics::MatmulPrecision;
using tpusim::ops::EvalOptions;
using tpusim::ops::Numerics;

constexpr const char* kVersion = "tpusim 0.1.0";

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "tpusim: %s\n", message.c_str());
  return code;
}

int Fail(const Status& st) { return Fail(st.message(), st.ExitCode()); }

// Ctrl-C during `run` stops computing values with the report so far
// (runtime/run.h); a second Ctrl-C ends the process as usual. The second
// counts from a second after the first: `timeout -s INT` signals twice at
// once (the process and its group).
tpusim::exec::Progress g_run_progress;
std::atomic<int64_t> g_first_stop_ns{0};

int64_t MonotonicNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

extern "C" void StopRun(int) {
  const int64_t now = MonotonicNs();
  if (!g_run_progress.stop.exchange(true)) {
    g_first_stop_ns.store(now);
  } else if (now - g_first_stop_ns.load() >= 1000000000) {
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
}

void StopRunOnCtrlC(tpusim::runtime::RunOptions& run) {
  struct sigaction action = {};
  action.sa_handler = StopRun;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  run.progress = &g_run_progress;
  if (isatty(fileno(stderr))) run.progress_out = stderr;
}

// An integer flag's value must be at least `least` (CLI11's Range prints its
// open end as a 300-digit number).
CLI::Validator AtLeast(int64_t least) {
  return CLI::Validator(
      [least](std::string& value) -> std::string {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || end != value.data() + value.size()) return "";  // its type says
        return v < least ? "must be " + std::to_string(least) + " or more, not " + value : "";
      },
      "INT >= " + std::to_string(least));
}

// A flag that names something (a slice, a file) cannot be given empty.
const CLI::Validator kNotEmpty(
    [](std::string& value) -> std::string { return value.empty() ? "must not be empty" : ""; },
    "");

// The innermost command parsed ("tpusim cloud tpus") and its App: where a
// parse error's help is.
std::pair<std::string, const CLI::App*> InnermostCommand(const CLI::App& app) {
  std::string command = "tpusim";
  const CLI::App* at = &app;
  for (;;) {
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : at->get_subcommands({})) {
      if (sub->parsed()) next = sub;
    }
    if (next == nullptr) break;
    command += " " + next->get_name();
    at = next;
  }
  return {command, at};
}

// A parse error as a user reads it: a word where a command was expected is
// named, with the commands that could go there.
std::string DescribeParseError(const CLI::App& app, const CLI::ParseError& e) {
  const auto [command, at] = InnermostCommand(app);
  std::vector<std::string> extra = at->remaining();
  const std::vector<const CLI::App*> subs = at->get_subcommands({});
  if (!extra.empty() && !subs.empty()) {
    std::string names;
    for (const CLI::App* sub : subs) names += (names.empty() ? "" : ", ") + sub->get_name();
    return "unknown command '" + extra.front() + "' for " + command + " (its commands: " +
           names + ")";
  }
  return std::string(e.what()) + " (see " + command + " --help)";
}

const std::map<std::string, Numerics> kNumerics = {{"reference", Numerics::kReference},
                                                   {"tpu", Numerics::kTpu}};
const std::map<std::string, MatmulPrecision> kPrecisions = {{"default", MatmulPrecision::kDefault},
                                                            {"high", MatmulPrecision::kHigh},
                                                            {"highest", MatmulPrecision::kHighest}};

struct EvalFlags {
  std::string numerics;
  std::string precision;

  void AddTo(CLI::App& app, const std::string& default_numerics) {
    numerics = default_numerics;
    app.add_option("--numerics", numerics, "reference (the spec's exact semantics) or tpu")
        ->check(CLI::IsMember({"reference", "tpu"}))
        ->capture_default_str();
    app.add_option("--matmul-precision", precision,
                   "override every dot/convolution's precision: default, high or highest")
        ->check(CLI::IsMember({"default", "high", "highest"}));
  }

  EvalOptions Options() const {
    EvalOptions o;
    o.numerics = kNumerics.at(numerics);
    if (!precision.empty()) {
      o.override_precision = true;
      o.precision = kPrecisions.at(precision);
    }
    return o;
  }
};

int Main(int argc, char** argv) {
  CLI::App app{"tpusim: a software TPU that runs StableHLO and XLA HLO programs", "tpusim"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(1);

  tpusim::runtime::RunOptions run;
  EvalFlags run_flags;
  CLI::App* run_cmd = app.add_subcommand("run", "run a program on .npy or random inputs");
  run_cmd->add_option("program", run.program, "StableHLO or XLA HLO text file");
  run_cmd->add_option("--input", run.inputs,
                      "input .npy: FILE for the next parameter, or NAME=FILE (NAME: arg0...); "
                      "FILE with {device} in it: one file per device of a slice");
  run_cmd->add_option("--output-dir", run.output_dir, "where result<i>.npy go")
      ->capture_default_str();
  run_cmd->add_option("--entry", run.entry, "function to run (default @main)");
  run_cmd->add_flag("--random-inputs", run.random_inputs,
                    "fill parameters without --input with random values");
  run_cmd
      ->add_option("--arg-shape", run.arg_shapes,
                   "shape of a parameter with dynamic (?) dimensions: NAME=DIMS, like arg0=8x4 "
                   "(default: its --input file's shape)")
      ->allow_extra_args(false);
  run_cmd->add_option("--seed", run.seed, "seed of --random-inputs")
      ->check(AtLeast(0))
      ->capture_default_str();
  run_flags.AddTo(*run_cmd, "tpu");
  CLI::Option* chip =
      run_cmd->add_option("--chip", run.chip, "chip preset to time on (see tpusim chips)")
          ->check(kNotEmpty)
          ->capture_default_str();
  CLI::Option* chip_file =
      run_cmd
          ->add_option("--chip-file", run.chip_file, "a chip described in TOML (tpusim chips --dump)")
          ->check(kNotEmpty)
          ->excludes(chip);
  CLI::Option* slice =
      run_cmd
          ->add_option("--slice", run.slice,
                       "pod slice to time on, priced collectives included (see tpusim slices)")
          ->check(kNotEmpty);
  run_cmd->add_flag(
      "--no-overlap", [&](int64_t) { run.overlap = false; },
      "collectives wait for compute and compute for them (default: they overlap "
      "as XLA's async collectives do)");
  run_cmd
      ->add_option("--topology", run.topology, "a slice of --chip of any torus shape, like 4x4x8")
      ->excludes(slice);
  slice->excludes(chip_file);
  run_cmd->add_option("--mesh", run.mesh,
                      "device mesh of a global program that has none, like data=2,model=4");
  run_cmd
      ->add_option("--shard", run.shard,
                   "sharding of an argument or result over the mesh: NAME=DIMS, one "
                   "entry per dimension, '_' or axes joined by '+' (arg0=data,_)")
      ->allow_extra_args(false);
  run_cmd->add_flag("--timing-only", run.timing_only,
                    "time from shapes alone: no inputs, no values, no .npy files");
  run_cmd
      ->add_option("--steps", run.steps,
                   "run a train step N times, its results fed back as its leading parameters")
      ->capture_default_str();
  CLI::Option* checkpoint_dir = run_cmd->add_option(
      "--checkpoint-dir", run.checkpoint_dir,
      "save the state here as .npy files and a manifest; resume from it when there");
  run_cmd
      ->add_option("--checkpoint-every", run.checkpoint_every,
                   "a checkpoint every N steps (default: every --checkpoint-seconds), and one "
                   "after the last")
      ->needs(checkpoint_dir)
      ->check(AtLeast(1));
  run_cmd
      ->add_option("--checkpoint-seconds", run.checkpoint_seconds,
                   "without --checkpoint-every, a checkpoint once this much wall time has "
                   "passed since the last")
      ->needs(checkpoint_dir)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run_cmd->add_option("--report-json", run.report_json, "write the full timing report as JSON");
  run_cmd->add_option("--trace", run.trace, "write a Chrome/Perfetto trace (ui.perfetto.dev)");
  run_cmd->add_option("--report-html", run.report_html,
                      "write the report as an HTML page of charts (opens offline)");
  int64_t trip_count = -1;
  run_cmd
      ->add_option("--trip-count", trip_count,
                   "iterations of while loops --timing-only cannot count")
      ->check(AtLeast(0));

  run_cmd->add_option("--passes", run.compile.passes,
                      "compiler passes to run: 'list' shows them; 'a,b' runs those; "
                      "'-a,-b' the default ones but those; 'all' every one (default: all "
                      "but latency-hiding)");
  run_cmd->add_flag("--latency-hiding", run.compile.latency_hiding,
                    "reorder independent ops so that collectives overlap more compute, as "
                    "XLA's latency-hiding scheduler does");
  run_cmd->add_flag(
      "--no-fusion", [&](int64_t) { run.compile.fusion = false; },
      "compile without the fusion pass, to see what fusion buys");
  run_cmd->add_option("--dump-dir", run.compile.dump_dir,
                      "write the program after every compiler pass here");
  run_cmd->add_flag(
      "--no-cache", [&](int64_t) { run.compile.use_cache = false; },
      "neither read nor write the compile cache");
  run_cmd->add_option("--cache-dir", run.compile.cache_dir,
                      "compile cache directory (default $XDG_CACHE_HOME/tpusim)");

  std::string dump_chip;
  CLI::App* chips_cmd = app.add_subcommand("chips", "list the chip presets with their sources");
  chips_cmd->add_option("--dump", dump_chip, "print a preset as a TOML chip file to edit");

  tpusim::planner::ModelCommand model;
  CLI::App* model_cmd = app.add_subcommand(
      "model", "the model library: a model's sizes, or its train step as a global program");
  model_cmd->add_option("name", model.name, "a model of the library (see --list)");
  model_cmd->add_flag("--list", model.list, "list the library's models");
  model_cmd->add_option("--file", model.file, "a model described in TOML (as models/*.toml)");
  model_cmd->add_option("--emit", model.emit, "write the step (StableHLO) to this file");
  model_cmd->add_option("--step", model.kind, "the step to emit: train, prefill or decode")
      ->capture_default_str();
  model_cmd->add_option("--context", model.context,
                        "decode: tokens already in the KV cache (default: seq - 1)");
  model_cmd->add_option("--batch", model.step.batch, "global batch, in sequences")
      ->capture_default_str();
  model_cmd->add_option("--seq", model.step.seq, "sequence length (default: the model's)")
      ->check(AtLeast(1));
  model_cmd->add_option(
      "--mesh", model.mesh,
      "shardings over a mesh of data, fsdp, expert, tensor and sequence axes: data=2,fsdp=4");
  model_cmd->add_flag(
      "--no-flash-attention", [&](int64_t) { model.step.flash_attention = false; },
      "train step: spell attention out in matmuls and a softmax");
  model_cmd->add_option("--dtype", model.step.dtype, "activations: bf16, f32 or f64")
      ->capture_default_str();
  model_cmd->add_option("--param-dtype", model.param_dtype,
                        "parameters and optimizer moments: f32, bf16 or f64 (default: f32 for "
                        "a train step, the activations' type for prefill and decode)");
  model_cmd->add_option("--params", model.params,
                        "with a family as the name: its model of this size (llama --params 8b)");
  model_cmd
      ->add_option("--remat", model.remat,
                   "what the backward pass recomputes: full (keeps layer inputs), selective "
                   "(keeps matmul outputs), none, a MaxText remat_policy (minimal, "
                   "qkv_proj_offloaded, ...) or custom:NAME=device|offload|remat,...")
      ->capture_default_str();
  model_cmd->add_flag("--fp8", model.step.fp8,
                      "the projections' matmuls in fp8 (e4m3, gradients e5m2), scaled per tensor");
  model_cmd->add_flag("--int8", model.step.int8,
                      "the projections' matmuls in int8 (MaxText's quantization=int8), scaled "
                      "per tensor, i32 accumulation");
  model_cmd
      ->add_option("--microbatches", model.step.microbatches,
                   "gradient accumulation: the batch in this many microbatches")
      ->capture_default_str();

  std::string plan_model, plan_slices, plan_json, plan_html;
  tpusim::planner::PlanRequest plan;
  CLI::App* plan_cmd = app.add_subcommand(
      "plan",
      "the mesh that trains a model fastest on a slice: step time, MFU, HBM per chip, cost; "
      "with --serve, how it serves: tokens/s, latency percentiles, KV cache");
  plan_cmd->add_option("--model", plan_model, "a model of the library (tpusim model --list)")
      ->required();
  plan_cmd
      ->add_option("--slice,--slices", plan_slices,
                   "accelerator types (v5p-128) or generation:torus (v4:4x4x12), either with Nx "
                   "for N slices over DCN (2xv5e-256), comma-separated")
      ->required();
  plan_cmd->add_option("--global-batch", plan.global_batch, "sequences per step (training)");
  bool serve = false;
  tpusim::planner::ServeRequest serving;
  plan_cmd->add_flag("--serve", serve,
                     "plan serving: prefill and decode with a KV cache, latency percentiles");
  plan_cmd->add_option("--batch", serving.batch, "serving: the most sequences decoding at once");
  plan_cmd->add_option("--prompt", serving.prompt, "serving: prompt tokens per request");
  plan_cmd->add_option("--gen", serving.gen, "serving: tokens generated per request");
  plan_cmd->add_option("--rate", serving.rate,
                       "serving: requests per second, Poisson (default: one batch at once)");
  plan_cmd->add_option("--requests", serving.requests, "serving: requests simulated at --rate")
      ->capture_default_str();
  plan_cmd->add_option("--seed", serving.seed, "serving: the arrivals' random seed")
      ->check(AtLeast(0))
      ->capture_default_str();
  plan_cmd->add_option("--seq", plan.seq, "sequence length (default: the model's)")
      ->check(AtLeast(1));
  plan_cmd->add_option("--dtype", plan.dtype, "activations: bf16 or f32")->capture_default_str();
  plan_cmd->add_option("--max-tensor", plan.max_tensor, "the largest tensor axis to try")
      ->capture_default_str();
  plan_cmd
      ->add_option("--max-sequence", plan.max_sequence,
                   "the largest sequence (context-parallel) axis to try")
      ->capture_default_str();
  std::string objective = "time";
  plan_cmd->add_option("--objective", objective, "rank by step time or by $ per token")
      ->check(CLI::IsMember({"time", "cost"}))
      ->capture_default_str();
  plan_cmd->add_option(
      "--mesh", plan.mesh,
      "one mesh to time in place of the search: data=D,fsdp=F,tensor=T (sequence=S, "
      "expert=E)");
  plan_cmd->add_option("--param-dtype", plan.param_dtype, "weights and moments: f32 or bf16")
      ->capture_default_str();
  plan_cmd->add_flag("--fp8", plan.fp8, "the projections' matmuls in fp8");
  plan_cmd->add_flag("--int8", plan.int8, "the projections' matmuls in int8");
  plan_cmd->add_option("--remat", plan.remat,
                       "one remat policy (full, selective, none, a MaxText remat_policy or "
                       "custom:NAME=device|offload|remat,...) in place of each");
  plan_cmd->add_option("--microbatches", plan.microbatches,
                       "microbatches per step (default: the fewest that fit)");
  std::string prices_file;
  plan_cmd->add_option("--prices", prices_file,
                       "dollars per chip-hour from a TOML file (default: the built-in list)");
  bool spot = false;
  plan_cmd->add_flag("--spot", spot, "charge spot prices in place of on-demand");
  std::string region;
  plan_cmd->add_option("--region", region,
                       "charge one region's prices (default: each generation's first listed)");
  plan_cmd->add_option("--json", plan_json, "also write the candidates as JSON to this file");
  plan_cmd->add_option("--html", plan_html,
                       "also write the candidates as an HTML page of charts to this file");
  plan_cmd->add_flag("--verbose", plan.verbose,
                     "list every candidate that does not fit HBM, not only the closest");

  CLI::App* slices_cmd =
      app.add_subcommand("slices", "list the pod slices (accelerator types) with their tori");

  std::string convert_program, convert_to = "mlir";
  CLI::App* convert_cmd =
      app.add_subcommand("convert", "print a program as StableHLO (generic MLIR) or XLA HLO text");
  convert_cmd->add_option("program", convert_program, "StableHLO or XLA HLO text file")->required();
  std::vector<std::string> convert_arg_shapes;
  convert_cmd
      ->add_option("--arg-shape", convert_arg_shapes,
                   "refine a program with dynamic (?) dimensions for this parameter shape: "
                   "NAME=DIMS, like arg0=8x4")
      ->allow_extra_args(false);
  convert_cmd->add_option("--to", convert_to, "mlir or hlo")
      ->check(CLI::IsMember({"mlir", "hlo"}))
      ->capture_default_str();

  std::vector<std::string> check_files;
  EvalFlags check_flags;
  CLI::App* check_cmd = app.add_subcommand("check", "run the check cases of test files");
  check_cmd->add_option("files", check_files, "StableHLO test files")->required();
  check_flags.AddTo(*check_cmd, "reference");

  std::function<int()> cloud_action;
  tpusim::cli::AddCloudCommands(app, cloud_action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(DescribeParseError(app, e), 2);
  }
  if (cloud_action) return cloud_action();

  if (*chips_cmd) {
    if (dump_chip.empty()) {
      tpusim::runtime::ListChips(stdout);
      return 0;
    }
    auto chip = tpusim::hw::FindPreset(dump_chip);
    if (!chip.ok()) return Fail(chip.status());
    std::fputs(tpusim::hw::DumpChipToml(*chip).c_str(), stdout);
    return 0;
  }
  if (*model_cmd) {
    Status st = tpusim::planner::RunModelCommand(model, stdout);
    return st.ok() ? 0 : Fail(st);
  }
  if (*plan_cmd) {
    auto spec = tpusim::model::FindModel(plan_model);
    if (!spec.ok()) return Fail(spec.status());
    tpusim::planner::Pricing pricing{.spot = spot, .region = region};
    if (!prices_file.empty()) {
      auto text = tpusim::runtime::ReadTextFile(prices_file);
      if (!text.ok()) return Fail(text.status());
      auto list = tpusim::planner::LoadPricesToml(*text, prices_file);
      if (!list.ok()) return Fail(list.status());
      pricing.list = std::move(*list);
    }
    plan.pricing = pricing;
    serving.pricing = pricing;
    if (serve) {
      if (!plan_html.empty()) return Fail("--html draws training plans; --serve has none", 2);
      serving.model = *spec;
      if (plan_slices.find(',') != std::string::npos) return Fail("--serve takes one --slice", 2);
      serving.slice = plan_slices;
      serving.mesh = plan.mesh;
      serving.dtype = plan.dtype;
      auto planned = tpusim::planner::PlanServing(serving);
      if (!planned.ok()) return Fail(planned.status());
      if (!plan_json.empty()) {
        Status st = tpusim::io::WriteFileAtomically(plan_json,
                                                    tpusim::planner::ServeJson(serving, *planned));
        if (!st.ok()) return Fail(st);
      }
      std::fputs(tpusim::planner::ServeTable(serving, *planned).c_str(), stdout);
      return 0;
    }
    if (plan.global_batch <= 0) return Fail("plan needs --global-batch (or --serve)", 2);
    if (objective == "cost") plan.objective = tpusim::planner::PlanRequest::Objective::kCost;
    plan.model = *spec;
    for (size_t at = 0; at <= plan_slices.size();) {
      size_t comma = std::min(plan_slices.find(',', at), plan_slices.size());
      plan.slices.push_back(plan_slices.substr(at, comma - at));
      at = comma + 1;
    }
    // On a terminal one line, rewritten, and cleared when done; else a line
    // a mesh.
    const bool tty = isatty(fileno(stderr));
    auto progress = [&](const tpusim::planner::Candidate& mesh, int done, int total) {
      std::fprintf(stderr, "%splanning: mesh %d/%d %s %s%s", tty ? "\r" : "", done, total,
                   mesh.slice.c_str(), mesh.Mesh().c_str(), tty ? "\033[K" : "\n");
      if (tty && done == total) std::fputs("\r\033[K", stderr);
    };
    auto candidates = tpusim::planner::Plan(plan, progress);
    if (!candidates.ok()) return Fail(candidates.status());
    if (!plan_json.empty()) {
      Status st =
          tpusim::io::WriteFileAtomically(plan_json, tpusim::planner::PlanJson(plan, *candidates));
      if (!st.ok()) return Fail(st);
    }
    if (!plan_html.empty()) {
      Status st =
          tpusim::io::WriteFileAtomically(plan_html, tpusim::planner::PlanHtml(plan, *candidates));
      if (!st.ok()) return Fail(st);
    }
    std::fputs(tpusim::planner::PlanTable(plan, *candidates).c_str(), stdout);
    Status fits = tpusim::planner::NoneFits(plan, *candidates);
    return fits.ok() ? 0 : Fail(fits);
  }
  if (*slices_cmd) {
    tpusim::runtime::ListSlices(stdout);
    return 0;
  }
  if (*convert_cmd) {
    auto text =
        tpusim::runtime::ConvertProgram(convert_program,
                                        convert_to == "hlo" ? tpusim::runtime::TextFormat::kHlo
                                                            : tpusim::runtime::TextFormat::kMlir,
                                        convert_arg_shapes);
    if (!text.ok()) return Fail(text.status());
    std::fputs(text->c_str(), stdout);
    return 0;
  }
  if (*run_cmd && run.compile.passes == "list") {
    for (const tpusim::compiler::PassInfo& p : tpusim::compiler::AllPasses()) {
      std::printf("%-18s %s%s\n", std::string(p.name).c_str(), std::string(p.summary).c_str(),
                  p.by_default ? "" : " [off by default]");
    }
    return 0;
  }
  if (*run_cmd) {
    if (run.program.empty()) return Fail("run: a program file is required (see tpusim --help)", 2);
    run.eval = run_flags.Options();
    if (trip_count >= 0) run.trip_count = trip_count;
    auto world = tpusim::mpi::World::JoinIfLaunched(&argc, &argv);
    if (!world.ok()) return Fail(world.status());
    run.world = world->get();
    // Under mpirun the launcher owns Ctrl-C: it ends every process.
    if (!run.timing_only && run.world == nullptr) StopRunOnCtrlC(run);
    Status st = tpusim::runtime::RunProgram(run, stdout);
    if (st.ok()) return 0;
    // Under mpirun every process fails alike (runtime/run.h); one says so.
    if (run.world && !run.world->primary()) return st.ExitCode();
    return Fail(st);
  }
  for (const std::string& file : check_files) {
    if (!std::ifstream(file)) return Fail("cannot open " + file, 2);
  }
  tpusim::runtime::CheckSummary summary =
      tpusim::runtime::CheckFiles(check_files, check_flags.Options(), stdout);
  return summary.failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Lines go out as printed, also into a pipe: a watcher (tpusim cloud ssh)
  // sees each step as it ends, and a killed run leaves all it said.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  try {
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    return Fail("out of host memory", 2);
  } catch (const std::exception& e) {
    return Fail(std::string("internal error: ") + e.what(), 1);
  }
}
