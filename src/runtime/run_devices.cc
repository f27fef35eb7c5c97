#include "runtime/run_devices.h"

#include <algorithm>
#include <bit>
#include <memory>

#include "mpi/wire.h"
#include "runtime/progress_line.h"
#include "runtime/run_io.h"
#include "tpusim/exec/grid.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ir/sharding.h"
#include "tpusim/mpi/world.h"
#include "tpusim/report/report.h"
#include "tpusim/tensor/tile.h"
#include "tpusim/timing/timing.h"

namespace tpusim::runtime {
namespace {

using Sharding = std::optional<ir::HloSharding>;

bool Tiled(const Sharding& s) { return s && s->kind == ir::HloSharding::Kind::kTiled; }

// The whole array that `device_type` is one tile of under `s`; `attrs`:
// the argument's or result's.
ir::Type GlobalType(const ir::Type& device_type, const Sharding& s, const ir::AttributeMap& attrs) {
  if (!Tiled(s) || !device_type.is_tensor()) return device_type;
  return ir::Type::Tensor(device_type.element(), ir::GlobalShape(device_type.shape(), *s, attrs));
}

// A global SPMD program (JAX's shard_map, under GSPMD or Shardy): its entry
// works on whole arrays, which its SPMDFullToShardShape calls or
// sdy.manual_computation ops cut into each device's tile. Its arguments go
// whole to every device and its results are whole on every device, whatever
// their shardings say.
bool HoldsWholeArrays(const ir::Module& module) {
  bool found = false;
  for (const auto& fn : module.functions()) {
    ir::Walk(fn->body(), [&](ir::Operation& op) {
      ir::Attribute target = op.attr("call_target_name");
      found |=
          op.name_str() == "sdy.manual_computation" ||
          (op.name_str() == "stablehlo.custom_call" &&
           target.kind() == ir::Attribute::Kind::kString && target.str() == "SPMDFullToShardShape");
    });
  }
  return found;
}

const ir::AttributeMap& ResultAttrs(const ir::Function& f, size_t i) {
  static const ir::AttributeMap kNone;
  return i < f.result_attrs().size() ? f.result_attrs()[i] : kNone;
}

// The arguments of devices [first, last): a per-device file's own, else
// the device's part of the global input; `whole`: HoldsWholeArrays(source).
StatusOr<std::vector<std::vector<Tensor>>> DeviceArgs(const ir::Module& source,
                                                      const ir::Function& f,
                                                      const RunOptions& options, int64_t first,
                                                      int64_t last, bool whole) {
  const std::vector<ir::Type>& types = f.type().inputs;
  std::vector<Sharding> shardings;
  std::vector<ir::Type> global_types;
  for (size_t i = 0; i < types.size(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(Sharding s, ir::ArgSharding(source, f, static_cast<int>(i)));
    if (whole) s = ir::HloSharding();
    global_types.push_back(GlobalType(types[i], s, f.arg_attrs()[i]));
    shardings.push_back(std::move(s));
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<std::string> files, InputFiles(f, options));
  std::vector<bool> per_device(types.size());
  for (size_t i = 0; i < types.size(); ++i) per_device[i] = PerDeviceFile(files[i]);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> global, Inputs(f, options, global_types, per_device));
  std::vector<std::vector<Tensor>> args;
  for (int64_t d = first; d < last; ++d) {
    std::vector<Tensor>& mine = args.emplace_back();
    for (size_t i = 0; i < types.size(); ++i) {
      if (per_device[i]) {
        TPUSIM_ASSIGN_OR_RETURN(
            Tensor t, ReadInput(f, static_cast<int>(i), DeviceFile(files[i], d), types[i]));
        mine.push_back(std::move(t));
        continue;
      }
      if (!Tiled(shardings[i]) || !types[i].is_tensor()) {
        mine.push_back(global[i]);
        continue;
      }
      auto offset = ir::TileOffset(*shardings[i], types[i].shape(), d);
      if (!offset) {
        return InvalidArgument("the sharding of parameter " + std::to_string(i) + " gives device " +
                               std::to_string(d) + " no tile");
      }
      TPUSIM_ASSIGN_OR_RETURN(Tensor tile, Tensor::Allocate(types[i]));
      ExtractTile(global[i], *offset, tile);
      mine.push_back(std::move(tile));
    }
  }
  return args;
}

// The results to write, with their file names; `whole` as for DeviceArgs.
Status WriteDeviceResults(const ir::Module& source, const ir::Function& f,
                          const std::vector<std::vector<Tensor>>& per_device,
                          const RunOptions& options, bool whole, std::FILE* out) {
  std::vector<Tensor> results;
  std::vector<std::string> names;
  for (size_t i = 0; i < per_device[0].size(); ++i) {
    const std::string name = "result" + std::to_string(i);
    TPUSIM_ASSIGN_OR_RETURN(Sharding s, ir::ResultSharding(source, f, static_cast<int>(i)));
    if (whole) s = ir::HloSharding();  // every device holds the whole result
    const Tensor& first = per_device[0][i];
    if (Tiled(s) && first.type().is_tensor()) {
      TPUSIM_ASSIGN_OR_RETURN(Tensor whole,
                              Tensor::Allocate(GlobalType(first.type(), s, ResultAttrs(f, i))));
      for (size_t d = 0; d < per_device.size(); ++d) {
        auto offset = ir::TileOffset(*s, first.shape(), static_cast<int64_t>(d));
        if (offset) InsertTile(per_device[d][i], *offset, whole);
      }
      results.push_back(std::move(whole));
      names.push_back(name);
    } else if (s) {  // replicated, maximal or manual: device 0's
      results.push_back(first);
      names.push_back(name);
    } else {
      for (size_t d = 0; d < per_device.size(); ++d) {
        results.push_back(per_device[d][i]);
        names.push_back(name + ".device" + std::to_string(d));
      }
    }
  }
  return WriteResults(results, names, options.output_dir, out);
}

// What the devices of an mpirun job computed, on process 0: each process
// sends its devices' results and times in device order.
struct DeviceOutcomes {
  std::vector<std::vector<Tensor>> results;
  std::vector<timing::DeviceTotals> totals;
  std::vector<std::vector<timing::Span>> spans;
};

void WriteDouble(double v, std::string& out) { mpi::WriteInt(std::bit_cast<int64_t>(v), out); }

StatusOr<double> ReadDouble(std::string_view& in) {
  TPUSIM_ASSIGN_OR_RETURN(int64_t bits, mpi::ReadInt(in));
  return std::bit_cast<double>(bits);
}

void WriteSpans(const std::vector<timing::Span>& spans, std::string& out) {
  mpi::WriteInt(static_cast<int64_t>(spans.size()), out);
  for (const timing::Span& s : spans) {
    mpi::WriteString(s.name, out);
    WriteDouble(s.start_s, out);
    WriteDouble(s.seconds, out);
    mpi::WriteInt(s.communication ? 1 : 0, out);
  }
}

StatusOr<std::vector<timing::Span>> ReadSpans(std::string_view& in) {
  TPUSIM_ASSIGN_OR_RETURN(int64_t n, mpi::ReadInt(in));
  std::vector<timing::Span> spans;
  for (int64_t i = 0; i < n; ++i) {
    timing::Span& s = spans.emplace_back();
    TPUSIM_ASSIGN_OR_RETURN(s.name, mpi::ReadString(in));
    TPUSIM_ASSIGN_OR_RETURN(s.start_s, ReadDouble(in));
    TPUSIM_ASSIGN_OR_RETURN(s.seconds, ReadDouble(in));
    TPUSIM_ASSIGN_OR_RETURN(int64_t communication, mpi::ReadInt(in));
    s.communication = communication != 0;
  }
  return spans;
}

StatusOr<DeviceOutcomes> GatherOutcomes(mpi::World* world, DeviceOutcomes local) {
  if (world == nullptr) return local;
  std::string bytes;
  mpi::WriteInt(static_cast<int64_t>(local.results.size()), bytes);
  for (size_t d = 0; d < local.results.size(); ++d) {
    const timing::DeviceTotals& t = local.totals[d];
    WriteDouble(t.seconds, bytes);
    WriteDouble(t.exposed_communication_seconds, bytes);
    mpi::WriteInt(t.flops, bytes);
    WriteSpans(local.spans[d], bytes);
    mpi::WriteTensors(local.results[d], bytes);
  }
  local = {};
  TPUSIM_ASSIGN_OR_RETURN(std::vector<std::string> parts, world->Gather(bytes));
  DeviceOutcomes all;
  for (const std::string& part : parts) {
    std::string_view in(part);
    TPUSIM_ASSIGN_OR_RETURN(int64_t n, mpi::ReadInt(in));
    for (int64_t d = 0; d < n; ++d) {
      timing::DeviceTotals& t = all.totals.emplace_back();
      TPUSIM_ASSIGN_OR_RETURN(t.seconds, ReadDouble(in));
      TPUSIM_ASSIGN_OR_RETURN(t.exposed_communication_seconds, ReadDouble(in));
      TPUSIM_ASSIGN_OR_RETURN(t.flops, mpi::ReadInt(in));
      TPUSIM_ASSIGN_OR_RETURN(all.spans.emplace_back(), ReadSpans(in));
      TPUSIM_ASSIGN_OR_RETURN(all.results.emplace_back(), mpi::ReadTensors(in));
    }
  }
  return all;
}

}  // namespace

Status RunOnDevices(const ir::Module& compiled, const ir::Module& source, const ir::Function& f,
                    const RunOptions& options, const hw::ChipSpec& chip, const ProcessGrid& grid,
                    pod::CollectivePricer* pod, std::optional<timing::Timeline>& timeline,
                    std::FILE* out) {
  const int64_t n = grid.size();
  if (n > exec::kMaxGridProcesses) {
    return Unimplemented("values on " + std::to_string(n) + " devices: at most " +
                         std::to_string(exec::kMaxGridProcesses) + " (time it with --timing-only)");
  }
  // Under mpirun this process runs devices [first, last) of the n.
  mpi::World* world = options.world;
  const int64_t first = world ? world->FirstProcess(world->rank(), n) : 0;
  const int64_t last = world ? world->FirstProcess(world->rank() + 1, n) : n;
  const bool whole = HoldsWholeArrays(source);
  exec::GridProgram program{.first = first, .progress = options.progress};
  {
    auto args = DeviceArgs(source, f, options, first, last, whole);
    // Reading inputs may fail on one process alone; the others must not wait.
    TPUSIM_RETURN_IF_ERROR(world ? world->Agree(args.status()) : args.status());
    program.args = std::move(*args);
  }
  program.functions.assign(last - first, f.name());
  std::vector<timing::Timeline> timelines(
      last - first, timing::Timeline(chip, options.overlap, pod ? &pod->slice() : nullptr));
  std::vector<std::unique_ptr<timing::TimingObserver>> observers;
  for (timing::Timeline& t : timelines) {
    observers.push_back(std::make_unique<timing::TimingObserver>(&t, options.eval, pod));
    program.observers.push_back(observers.back().get());
  }
  ops::Collectives collectives(grid.replicas, grid.partitions);
  StatusOr<std::vector<std::vector<Tensor>>> results = [&] {
    std::optional<mpi::HostLink> link;  // its end waits for every process's grid
    if (world) {
      link.emplace(*world, collectives);
      collectives.Attach(&*link);
    }
    ProgressLine line(options.progress, options.progress_out);
    return exec::RunGrid(compiled, options.eval, collectives, program);
  }();
  DeviceOutcomes local;
  for (const timing::Timeline& t : timelines) {
    local.totals.push_back(t.Totals());
    local.spans.push_back(t.Spans());
  }
  if (!world && results.status().code() == StatusCode::kCancelled) {
    timelines[0].set_devices(std::move(local.totals));
    timelines[0].set_device_spans(std::move(local.spans));
    timeline = std::move(timelines[0]);
  }
  TPUSIM_RETURN_IF_ERROR(results.status());
  local.results = std::move(*results);
  TPUSIM_ASSIGN_OR_RETURN(DeviceOutcomes all, GatherOutcomes(world, std::move(local)));
  if (world && !world->primary()) {
    timeline = std::move(timelines[0]);
    return Status::Ok();
  }
  TPUSIM_RETURN_IF_ERROR(WriteDeviceResults(source, f, all.results, options, whole, out));
  if (world) {
    timelines[0].AddNote("the " + std::to_string(n) + " devices ran over " +
                         std::to_string(world->size()) + " processes (mpirun)");
  }
  timelines[0].set_devices(std::move(all.totals));
  timelines[0].set_device_spans(std::move(all.spans));
  timeline = std::move(timelines[0]);
  return Status::Ok();
}

}  // namespace tpusim::runtime
