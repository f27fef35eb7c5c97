#include "tpusim/runtime/run.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/arg_shapes.h"
#include "runtime/host_memory.h"
#include "runtime/onnx_program.h"
#include "runtime/progress_line.h"
#include "runtime/run_devices.h"
#include "runtime/run_io.h"
#include "runtime/sharding_flags.h"
#include "runtime/slice_setup.h"
#include "runtime/steps.h"
#include "tpusim/base/bytes.h"
#include "tpusim/base/text.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/io/file.h"
#include "tpusim/mpi/world.h"
#include "tpusim/report/report.h"
#include "tpusim/runtime/load.h"
#include "tpusim/spmd/partitioner.h"
#include "tpusim/timing/timing.h"

namespace tpusim::runtime {
namespace {

StatusOr<const ir::Function*> EntryFunction(const ir::Module& module, const std::string& name) {
  if (!name.empty()) {
    const ir::Function* f = module.Lookup(name);
    if (f == nullptr) return NotFound("no function @" + name);
    return f;
  }
  if (const ir::Function* f = module.Lookup("main")) return f;
  const ir::Function* only = nullptr;
  for (const auto& f : module.functions()) {
    if (!f->is_public()) continue;
    if (only != nullptr) {
      return InvalidArgument("no @main and several public functions; choose one with --entry");
    }
    only = f.get();
  }
  if (only == nullptr) return NotFound("no public function to run");
  return only;
}

// Values and timing together: the interpreter runs the compiled module with
// a timing observer. It takes the arguments over (all are tpusim's own
// copies or private mappings), so that a train step updates its state in
// place.
StatusOr<std::vector<Tensor>> RunWithValues(const ir::Module& compiled, const ir::Function& f,
                                            std::vector<Tensor> args, const RunOptions& options,
                                            timing::Timeline& timeline,
                                            pod::CollectivePricer* pod) {
  timing::TimingObserver observer(&timeline, options.eval, pod);
  exec::Interpreter interpreter(compiled, options.eval);
  interpreter.set_observer(&observer);
  interpreter.set_progress(options.progress);
  ProgressLine line(options.progress, options.progress_out);
  return interpreter.RunConsuming(f.name(), std::move(args));
}

// The report's notes on what the SPMD partitioner did.
std::vector<std::string> DescribePartitioning(const spmd::PartitionStats& stats) {
  std::string s = "SPMD partitioner: the global program split over " +
                  std::to_string(stats.devices) + " devices";
  std::string inserted;
  for (const auto& [name, count] : stats.inserted) {
    inserted += (inserted.empty() ? "" : ", ") + std::to_string(count) + " " +
                name.substr(name.find('.') + 1);
  }
  if (!inserted.empty()) s += "; added " + inserted;
  if (stats.replicated_ops > 0) {
    s += "; " + std::to_string(stats.replicated_ops) + " ops computed on whole arrays";
  }
  std::vector<std::string> notes = {s};
  if (!stats.conflicts.empty()) {
    notes.push_back("SPMD partitioner: " + std::to_string(stats.conflicts.size()) +
                    " operands moved to the sharding their op needs, the first at " +
                    stats.conflicts[0]);
  }
  return notes;
}

report::CompileInfo CompileInfoOf(const CompileResult& compiled, const Compiler& compiler,
                                  const CompileOptions& options) {
  const CompiledProgram& p = *compiled.program;
  report::CompileInfo info{.seconds = compiled.seconds,
                           .cache = options.use_cache ? CacheResultName(compiled.cache) : "off",
                           .passes = p.passes,
                           .pass_seconds = compiled.cache == CacheResult::kCompiled
                                               ? p.pass_seconds
                                               : decltype(p.pass_seconds){},
                           .notes = p.notes,
                           .memory = p.memory ? &*p.memory : nullptr};
  for (const std::string& w : compiler.warnings()) info.notes.push_back("warning: " + w);
  return info;
}

}  // namespace

StatusOr<hw::ChipSpec> SelectChip(const RunOptions& options) {
  if (options.chip_file.empty()) return hw::FindPreset(options.chip);
  std::ifstream in(options.chip_file, std::ios::binary);
  if (!in) return NotFound("cannot open chip file " + options.chip_file);
  std::stringstream text;
  text << in.rdbuf();
  return hw::LoadChipToml(text.str(), options.chip_file);
}

void ListChips(std::FILE* out) {
  for (const hw::ChipSpec& c : hw::Presets()) {
    std::fprintf(out, "%-4s %s\n", c.name.c_str(), c.description.c_str());
    std::fprintf(out, "     %s bf16, %s HBM at %s, %s VMEM per core, clock %.3f GHz\n",
                 report::FormatRate(c.PeakBf16FlopsPerS(), "FLOP").c_str(),
                 report::FormatBytes(static_cast<double>(c.memory.hbm_bytes)).c_str(),
                 report::FormatRate(c.memory.hbm_bytes_per_s, "B").c_str(),
                 report::FormatBytes(static_cast<double>(c.memory.vmem_bytes)).c_str(),
                 c.clock_hz / 1e9);
    std::string sources;
    for (const std::string& src : c.sources) sources += (sources.empty() ? "" : "; ") + src;
    std::fprintf(out, "     sources: %s\n", sources.c_str());
  }
}

namespace {

// A program compiled for the chip or slice the options name. Held by
// pointer: the pricer and timelines refer to its parts.
struct Prepared {
  hw::ChipSpec chip;
  std::optional<pod::Slice> slice;
  std::unique_ptr<ir::Module> module;  // partitioned when global and on a slice
  const ir::Function* f = nullptr;     // the entry function of `module`
  std::optional<spmd::PartitionStats> partitioned;
  ProcessGrid grid;
  std::unique_ptr<Compiler> compiler;
  CompileResult compiled;
  std::optional<pod::CollectivePricer> pricer;

  const ir::Module& program() const { return *compiled.program->module; }
  pod::CollectivePricer* pod() { return pricer ? &*pricer : nullptr; }
  // Values need one thread per device when the program spans several.
  bool multi_device() const { return slice && grid.size() > 1; }
};

StatusOr<std::unique_ptr<Prepared>> Prepare(std::unique_ptr<ir::Module> module,
                                            const RunOptions& options) {
  auto p = std::make_unique<Prepared>();
  TPUSIM_ASSIGN_OR_RETURN(p->chip, SelectChip(options));
  TPUSIM_ASSIGN_OR_RETURN(p->slice, SelectSlice(options, p->chip));
  if (p->slice) p->chip = p->slice->chip;
  TPUSIM_ASSIGN_OR_RETURN(const ir::Function* f, EntryFunction(*module, options.entry));
  {
    // A shape-polymorphic program is refined for its inputs first, so that
    // sharding, partitioning, the compile cache and the run see static shapes.
    TPUSIM_ASSIGN_OR_RETURN(std::vector<std::string> files, InputFiles(*f, options));
    TPUSIM_RETURN_IF_ERROR(RefineForArguments(*module, f->name(), options.arg_shapes, files));
  }
  if (!options.mesh.empty() || !options.shard.empty()) {
    TPUSIM_RETURN_IF_ERROR(
        ApplyShardingFlags(options.mesh, options.shard, *module, *module->Lookup(f->name())));
  }
  InferPartitionCount(*module);
  const std::string entry = f->name();
  const bool global = spmd::IsGlobalProgram(*module);
  if (p->slice && global) {
    TPUSIM_ASSIGN_OR_RETURN(module, spmd::Partition(*module, entry, &p->partitioned.emplace()));
  }
  p->module = std::move(module);
  p->f = p->module->Lookup(entry);
  p->grid = GridOf(*p->module);
  // A per-device program (XLA's after partitioning) or one with per-device
  // regions (a shard_map) is one device's part of a run on many: one chip
  // cannot run it alone.
  if (!p->slice && p->grid.size() > 1 && (!global || spmd::HasManualRegions(*p->module))) {
    return InvalidArgument("this program runs as " + CountOf(p->grid.replicas, "replica") + " x " +
                           CountOf(p->grid.partitions, "partition") +
                           " (mhlo.num_replicas, mhlo.num_partitions) that exchange data: pass "
                           "--slice with " +
                           CountOf(p->grid.size(), "device") + " (tpusim slices lists them)");
  }
  p->compiler = std::make_unique<Compiler>(options.compile);
  TPUSIM_ASSIGN_OR_RETURN(p->compiled, p->compiler->Compile(*p->module, entry, p->chip));
  if (p->slice) {
    TPUSIM_ASSIGN_OR_RETURN(
        p->pricer, pod::CollectivePricer::Create(*p->slice, p->grid.replicas, p->grid.partitions));
    TPUSIM_RETURN_IF_ERROR(p->pricer->Prepare(p->program()));
  }
  return p;
}

StatusOr<timing::Timeline> TimeStatically(Prepared& p, const RunOptions& options) {
  timing::StaticOptions so{.default_trip_count = options.trip_count,
                           .eval = options.eval,
                           .pod = p.pod(),
                           .overlap = options.overlap};
  return timing::TimeStatically(p.program(), p.f->name(), p.chip, so);
}

// The reports on `timeline`, with what partitioning and compiling did.
Execution Report(const Prepared& p, timing::Timeline timeline, const RunOptions& options) {
  if (p.partitioned) {
    for (std::string& note : DescribePartitioning(*p.partitioned)) {
      timeline.AddNote(std::move(note));
    }
  }
  // One SPMD program: a timing-only run stands for every device alike.
  if (p.slice && timeline.devices().empty()) {
    timeline.set_devices(std::vector<timing::DeviceTotals>(p.grid.size(), timeline.Totals()));
  }
  Execution e;
  report::CompileInfo info = CompileInfoOf(p.compiled, *p.compiler, options.compile);
  e.summary = report::Summarize(timeline);
  e.text_report = report::TextReport(timeline, e.summary, &info);
  e.json_report = report::JsonReport(timeline, e.summary, &info);
  if (!options.trace.empty()) e.trace = report::PerfettoTrace(timeline);
  if (!options.report_html.empty()) e.html_report = report::HtmlReport(timeline, e.summary, &info);
  return e;
}

std::string DeviceLine(const Prepared& p) {
  std::string s = "device: " + p.chip.name + " (" + p.chip.description + ")\n";
  if (p.slice) s += "slice: " + DescribeSlice(*p.slice, p.grid) + "\n";
  return s;
}

Status WriteReports(const Execution& e, const RunOptions& options, std::FILE* out) {
  std::fputs(e.text_report.c_str(), out);
  if (!options.report_json.empty()) {
    TPUSIM_RETURN_IF_ERROR(io::WriteFileAtomically(options.report_json, e.json_report));
  }
  if (!options.trace.empty()) {
    TPUSIM_RETURN_IF_ERROR(io::WriteFileAtomically(options.trace, e.trace));
  }
  if (!options.report_html.empty()) {
    TPUSIM_RETURN_IF_ERROR(io::WriteFileAtomically(options.report_html, e.html_report));
  }
  return Status::Ok();
}

// A run stopped part-way (`stopped` is kCancelled): the reports on what ran,
// marked so, then `stopped`.
Status ReportStopped(const Prepared& p, timing::Timeline timeline, const RunOptions& options,
                     const Status& stopped, std::FILE* out) {
  timeline.AddNote("stopped on request after " +
                   CountOf(options.progress->ops.load(std::memory_order_relaxed), "op") +
                   ": this report covers the part that ran, and no results were written");
  TPUSIM_RETURN_IF_ERROR(WriteReports(Report(p, std::move(timeline), options), options, out));
  return stopped;
}

bool IsStop(const Status& status) { return status.code() == StatusCode::kCancelled; }

// Says what the values will take of the host's memory before any input is
// made (or, `args_made`, with the inputs alone made), and refuses a run that
// cannot fit: the devices a process runs each hold their own values at once.
// The statement counts every device of the slice, however many processes
// (mpirun) share them, so that it reads the same under mpirun; the check is
// of this process's share.
Status CheckHostNeed(const Prepared& p, const RunOptions& options, bool args_made, bool speaks,
                     std::FILE* out) {
  const ir::Function* f = p.program().Lookup(p.f->name());
  if (f == nullptr) return Status::Ok();
  const HostNeed one = HostPeakBytes(p.program(), *f);
  auto describe = [&](int64_t devices) {
    std::string what = "arguments " + FormatBinaryBytes(one.argument_bytes * devices);
    if (devices > 1) what += ", " + std::to_string(devices) + " devices";
    return what;
  };
  const int64_t devices = p.multi_device() ? p.grid.size() : 1;
  const int processes = options.world ? options.world->size() : 1;
  const int64_t here = (devices + processes - 1) / processes;
  const int64_t need = one.peak_bytes * here - (args_made ? one.argument_bytes * here : 0);
  TPUSIM_RETURN_IF_ERROR(CheckHostMemory(need, describe(here)));
  if (speaks) {
    std::fprintf(out, "host memory: about %s for the values at their peak (%s)\n",
                 FormatBinaryBytes(one.peak_bytes * devices).c_str(), describe(devices).c_str());
  }
  return Status::Ok();
}

}  // namespace

Status RunProgram(const RunOptions& given, std::FILE* out) {
  TPUSIM_RETURN_IF_ERROR(CheckStepOptions(given));
  // An ONNX model is lowered for its input shapes, so it takes --arg-shape
  // itself and reaches Prepare static; its --input files then name @main's
  // parameters, and its results are named for the graph's outputs (a
  // sequence's elements are several of each: onnx_program.h).
  const bool onnx = IsOnnxFile(given.program);
  OnnxFiles onnx_files;
  TPUSIM_ASSIGN_OR_RETURN(
      std::unique_ptr<ir::Module> module,
      onnx ? LoadOnnx(given.program, given, &onnx_files) : LoadModule(given.program));
  RunOptions options = given;
  if (onnx) options.inputs = onnx_files.inputs;
  RunOptions sized = options;
  if (onnx) sized.arg_shapes.clear();
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<Prepared> p, Prepare(std::move(module), sized));
  // Under mpirun every process computes alike; process 0 alone speaks.
  const bool speaks = options.world == nullptr || options.world->primary();
  if (speaks) std::fputs(DeviceLine(*p).c_str(), out);
  if (!options.timing_only) {
    TPUSIM_RETURN_IF_ERROR(CheckHostNeed(*p, options, /*args_made=*/false, speaks, out));
  }
  std::optional<timing::Timeline> timeline;
  if (options.timing_only) {
    TPUSIM_ASSIGN_OR_RETURN(timeline, TimeStatically(*p, options));
    if (options.steps > 1 && speaks) {
      TPUSIM_RETURN_IF_ERROR(PrintStaticSteps(*p->f, *timeline, options, out));
    }
  } else if (p->multi_device() && RunsSteps(options)) {
    const std::string devices = std::to_string(p->grid.size());
    return Unimplemented(
        "--steps and --checkpoint-dir do not compute the values of a program over " + devices +
        " devices of a slice; time its steps with --timing-only");
  } else if (RunsSteps(options)) {
    auto step = [&](std::vector<Tensor> args) -> StatusOr<StepRun> {
      StepRun run{.timeline = timing::Timeline(p->chip, options.overlap,
                                               p->pod() ? &p->pod()->slice() : nullptr)};
      TPUSIM_ASSIGN_OR_RETURN(run.results, RunWithValues(p->program(), *p->f, std::move(args),
                                                         options, run.timeline, p->pod()));
      return run;
    };
    TPUSIM_ASSIGN_OR_RETURN(timeline, RunSteps(*p->f, options, step, out));
    if (!timeline) return Status::Ok();  // the checkpoint was at the last step
  } else if (p->multi_device()) {
    Status run = RunOnDevices(p->program(), *p->module, *p->f, options, p->chip, p->grid, p->pod(),
                              timeline, out);
    if (IsStop(run) && timeline) return ReportStopped(*p, *std::move(timeline), options, run, out);
    TPUSIM_RETURN_IF_ERROR(run);
  } else {
    const ir::Function& f = *p->f;
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> args, Inputs(f, options, f.type().inputs));
    timeline.emplace(p->chip, options.overlap, p->pod() ? &p->pod()->slice() : nullptr);
    StatusOr<std::vector<Tensor>> results =
        RunWithValues(p->program(), f, std::move(args), options, *timeline, p->pod());
    if (IsStop(results.status())) {
      return ReportStopped(*p, *std::move(timeline), options, results.status(), out);
    }
    TPUSIM_RETURN_IF_ERROR(results.status());
    for (const Tensor& r : *results) {
      if (r.type().is_tuple()) {
        return Unimplemented("@" + f.name() + " returns a tuple, which .npy cannot hold");
      }
    }
    if (speaks) {
      TPUSIM_RETURN_IF_ERROR(
          WriteResults(*results, onnx_files.result_names, options.output_dir, out));
    }
  }
  if (!speaks) return Status::Ok();
  return WriteReports(Report(*p, *std::move(timeline), options), options, out);
}

StatusOr<Execution> Execute(std::unique_ptr<ir::Module> module, std::vector<Tensor> args,
                            const RunOptions& options) {
  if (RunsSteps(options)) {
    return Unimplemented(
        "steps and checkpoints run from the command line only (tpusim run --steps)");
  }
  if (!options.timing_only) {
    TPUSIM_ASSIGN_OR_RETURN(const ir::Function* f, EntryFunction(*module, options.entry));
    TPUSIM_RETURN_IF_ERROR(RefineForValues(*module, f->name(), args));
  }
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<Prepared> p, Prepare(std::move(module), options));
  if (options.timing_only) {
    TPUSIM_ASSIGN_OR_RETURN(timing::Timeline timeline, TimeStatically(*p, options));
    return Report(*p, std::move(timeline), options);
  }
  if (p->multi_device()) {
    return Unimplemented("a program over " + std::to_string(p->grid.size()) +
                         " devices computes its values only from the command line "
                         "(tpusim run --slice); time it alone here");
  }
  const std::vector<ir::Type>& types = p->f->type().inputs;
  if (args.size() != types.size()) {
    return InvalidArgument("@" + p->f->name() + " takes " + std::to_string(types.size()) +
                           " arguments, given " + std::to_string(args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(
        args[i], ConvertInput(args[i], types[i], InputLabel(*p->f, static_cast<int>(i))));
  }
  TPUSIM_RETURN_IF_ERROR(CheckHostNeed(*p, options, /*args_made=*/true, /*speaks=*/false, nullptr));
  timing::Timeline timeline(p->chip, options.overlap, p->pod() ? &p->pod()->slice() : nullptr);
  TPUSIM_ASSIGN_OR_RETURN(
      std::vector<Tensor> results,
      RunWithValues(p->program(), *p->f, std::move(args), options, timeline, p->pod()));
  Execution e = Report(*p, std::move(timeline), options);
  e.results = std::move(results);
  return e;
}

}  // namespace tpusim::runtime
