// Reports of a timeline: a text summary for people, JSON with every op for
// tools (schema in docs/report.md), a Chrome/Perfetto trace with a track
// per unit (open it in ui.perfetto.dev), and an HTML page of charts.
#ifndef TPUSIM_REPORT_REPORT_H_
#define TPUSIM_REPORT_REPORT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tpusim/compiler/memory_plan.h"
#include "tpusim/hw/cost_model.h"
#include "tpusim/timing/timeline.h"

namespace tpusim::report {

// One op of the program, its executions summed (a loop body op appears once).
struct OpTotal {
  const ir::Operation* op = nullptr;
  std::string name;      // "%3" (its first result) or the op name
  std::string location;  // "file:line:col" or "<unknown>"
  int64_t count = 0;     // executions
  double seconds = 0;
  double unit_seconds[hw::kNumUnits] = {};
  int64_t flops = 0, bytes_read = 0, bytes_written = 0, hbm_bytes = 0;
  int64_t padding_bytes = 0, mxu_cycles = 0;
  hw::Bound bound = hw::Bound::kFree;  // of its dearest execution
  bool priced = true;
};

struct Summary {
  double total_seconds = 0;
  int64_t flops = 0;
  double achieved_flops_per_s = 0;
  double peak_flops_per_s = 0;   // of one device (a megacore chip, else a core)
  double mfu = 0;                // achieved / peak
  double mxu_utilization = 0;    // MXU busy time / total time
  int64_t hbm_bytes = 0;
  double hbm_bandwidth_utilization = 0;
  int64_t padding_bytes = 0;
  int64_t tiling_bytes = 0;
  double unit_seconds[hw::kNumUnits] = {};
  double bound_seconds[hw::kNumBounds] = {};  // by hw::Bound
  double exposed_communication_seconds = 0;   // collectives no compute hid
  // On a slice: the traffic of the program's collectives over every link,
  // and the ICI links' busy share of the run.
  double ici_bytes = 0, dcn_bytes = 0;
  double ici_link_utilization = 0;
  std::vector<double> link_bytes;  // per directed link, by pod::Slice::LinkIndex
  // Over every device of the slice (Timeline::devices()): the slowest one's
  // time, and all their FLOPs against all their peaks for that long.
  double slice_seconds = 0, slice_mfu = 0;
  std::vector<OpTotal> ops;      // in first-execution order
  std::vector<std::string> unpriced;  // op names the model cannot price
};

Summary Summarize(const timing::Timeline& timeline);

// What compiling the program did, for the report's compile section.
struct CompileInfo {
  double seconds = 0;
  std::string cache;                // "miss", "memory hit", "disk hit" or "off"
  std::vector<std::string> passes;  // in the order run
  std::vector<std::pair<std::string, double>> pass_seconds;  // when they ran now
  std::vector<std::string> notes;   // the passes' notes and compiler warnings
  const compiler::MemoryPlan* memory = nullptr;  // null: no buffer assignment
};

// The text report: chip, totals, time by unit and bound, padding waste, the
// ten costliest ops with their locations, and, given `compile`, compile time,
// fused kernels and the planned HBM.
std::string TextReport(const timing::Timeline& timeline, const Summary& summary,
                       const CompileInfo* compile = nullptr);
// The JSON report (docs/report.md).
std::string JsonReport(const timing::Timeline& timeline, const Summary& summary,
                       const CompileInfo* compile = nullptr);
// A Chrome trace-event JSON file (docs/report.md): a process per device with
// an "ops" track (device 0 also a track per unit) and, on a slice, a
// "collectives" track, and a process for the slice's links with a track per
// torus axis and one for the DCN. One process stands for every device when
// the timeline has no device_spans().
std::string PerfettoTrace(const timing::Timeline& timeline);
// A self-contained HTML page (docs/report.md) a browser draws offline: the
// overview, a sortable op table, a roofline of the ops, the HBM over the
// program (given `compile` with a memory plan), a zoomable timeline of the
// units and, on a slice, its links. Drawn from JsonReport's data, so both
// show the same numbers; the timeline shows at most 40,000 spans.
std::string HtmlReport(const timing::Timeline& timeline, const Summary& summary,
                       const CompileInfo* compile = nullptr);

// Units a person reads: "412 ns", "3.20 ms", "1.50 GB", "819 GB/s", "197 TFLOP/s".
std::string FormatSeconds(double s);
std::string FormatBytes(double bytes);
std::string FormatAmount(double amount, const char* unit);  // "17.18 GFLOP"
std::string FormatRate(double per_s, const char* unit);  // FormatRate(x, "B/s")
std::string FormatPercent(double fraction);              // "12.5%"

}  // namespace tpusim::report

#endif  // TPUSIM_REPORT_REPORT_H_
