#include "tpusim/runtime/run.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/arg_shapes.h"
#include "runtime/run_devices.h"
#include "runtime/run_io.h"
#include "runtime/sharding_flags.h"
#include "runtime/slice_setup.h"
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
// a timing observer; inputs are matched to the source function `f`'s
// parameter names.
StatusOr<timing::Timeline> RunWithValues(const ir::Module& compiled, const ir::Function& f,
                                         const RunOptions& options, const hw::ChipSpec& chip,
                                         pod::CollectivePricer* pod, std::FILE* out) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> args, Inputs(f, options, f.type().inputs));
  timing::Timeline timeline(chip, options.overlap, pod ? &pod->slice() : nullptr);
  timing::TimingObserver observer(&timeline, options.eval, pod);
  exec::Interpreter interpreter(compiled, options.eval);
  interpreter.set_observer(&observer);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> results, interpreter.Run(f.name(), args));
  for (const Tensor& r : results) {
    if (r.type().is_tuple()) {
      return Unimplemented("@" + f.name() + " returns a tuple, which .npy cannot hold");
    }
  }
  if (options.world == nullptr || options.world->primary()) {
    TPUSIM_RETURN_IF_ERROR(WriteResults(results, {}, options.output_dir, out));
  }
  return timeline;
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

Status RunProgram(const RunOptions& options, std::FILE* out) {
  TPUSIM_ASSIGN_OR_RETURN(hw::ChipSpec chip, SelectChip(options));
  TPUSIM_ASSIGN_OR_RETURN(std::optional<pod::Slice> slice, SelectSlice(options, chip));
  if (slice) chip = slice->chip;
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, LoadModule(options.program));
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
  std::optional<spmd::PartitionStats> partitioned;
  if (slice && spmd::IsGlobalProgram(*module)) {
    const std::string entry = f->name();
    TPUSIM_ASSIGN_OR_RETURN(module, spmd::Partition(*module, entry, &partitioned.emplace()));
    f = module->Lookup(entry);
  }
  const ProcessGrid grid = GridOf(*module);
  Compiler compiler(options.compile);
  TPUSIM_ASSIGN_OR_RETURN(CompileResult compiled, compiler.Compile(*module, f->name(), chip));
  const ir::Module& program = *compiled.program->module;
  std::optional<pod::CollectivePricer> pricer;
  if (slice) {
    TPUSIM_ASSIGN_OR_RETURN(pricer,
                            pod::CollectivePricer::Create(*slice, grid.replicas, grid.partitions));
    TPUSIM_RETURN_IF_ERROR(pricer->Prepare(program));
  }
  // Under mpirun every process computes alike; process 0 alone speaks.
  const bool speaks = options.world == nullptr || options.world->primary();
  if (speaks) {
    std::fprintf(out, "device: %s (%s)\n", chip.name.c_str(), chip.description.c_str());
    if (slice) std::fprintf(out, "slice: %s\n", DescribeSlice(*slice, grid).c_str());
  }
  pod::CollectivePricer* pod = pricer ? &*pricer : nullptr;
  std::optional<timing::Timeline> timeline;
  if (options.timing_only) {
    timing::StaticOptions so{.default_trip_count = options.trip_count,
                             .eval = options.eval,
                             .pod = pod,
                             .overlap = options.overlap};
    TPUSIM_ASSIGN_OR_RETURN(timeline, timing::TimeStatically(program, f->name(), chip, so));
  } else if (slice && grid.size() > 1) {
    TPUSIM_ASSIGN_OR_RETURN(timeline,
                            RunOnDevices(program, *module, *f, options, chip, grid, pod, out));
  } else {
    TPUSIM_ASSIGN_OR_RETURN(timeline, RunWithValues(program, *f, options, chip, pod, out));
  }
  if (!speaks) return Status::Ok();
  if (partitioned) {
    for (std::string& note : DescribePartitioning(*partitioned)) timeline->AddNote(std::move(note));
  }
  // One SPMD program: a timing-only run stands for every device alike.
  if (slice && timeline->devices().empty()) {
    timeline->set_devices(std::vector<timing::DeviceTotals>(grid.size(), timeline->Totals()));
  }
  report::CompileInfo info = CompileInfoOf(compiled, compiler, options.compile);
  report::Summary summary = report::Summarize(*timeline);
  std::string text = report::TextReport(*timeline, summary, &info);
  std::fputs(text.c_str(), out);
  if (!options.report_json.empty()) {
    TPUSIM_RETURN_IF_ERROR(io::WriteFileAtomically(options.report_json,
                                                   report::JsonReport(*timeline, summary, &info)));
  }
  if (!options.trace.empty()) {
    TPUSIM_RETURN_IF_ERROR(io::WriteFileAtomically(options.trace, report::PerfettoTrace(*timeline)));
  }
  return Status::Ok();
}

}  // namespace tpusim::runtime
