#include <nlohmann/json.hpp>

#include "report/json_doc.h"

#include "report/fusion_section.h"
#include "report/memory_section.h"
#include "report/slice_section.h"
#include "tpusim/report/report.h"

namespace tpusim::report {
namespace {

using nlohmann::json;

json UnitMap(const double (&seconds)[hw::kNumUnits]) {
  json m = json::object();
  for (int u = 0; u < hw::kNumUnits; ++u) m[hw::UnitName(static_cast<hw::Unit>(u))] = seconds[u];
  return m;
}

json ChipJson(const hw::ChipSpec& c) {
  return {{"name", c.name},
          {"description", c.description},
          {"tensor_cores", c.tensor_cores},
          {"megacore", c.megacore},
          {"clock_hz", c.clock_hz},
          {"peak_bf16_flops_per_s", c.PeakBf16FlopsPerS()},
          {"hbm_bytes", c.memory.hbm_bytes},
          {"hbm_bytes_per_s", c.memory.hbm_bytes_per_s},
          {"hbm_sustained_fraction", c.memory.hbm_sustained_fraction},
          {"devices_per_chip", c.DevicesPerChip()},
          {"hbm_bytes_per_device", c.HbmBytesPerDevice()},
          {"vmem_bytes", c.memory.vmem_bytes},
          {"mxu",
           {{"rows", c.mxu.rows},
            {"cols", c.mxu.cols},
            {"per_core", c.mxu.per_core},
            {"dataflow", hw::DataflowName(c.mxu.dataflow)},
            {"double_buffered", c.mxu.double_buffered},
            {"cycle_model", hw::CycleModelName(c.mxu.cycle_model)}}}};
}

// The unit an op spends most time in, or "none" for free ops.
const char* BusiestUnit(const OpTotal& t) {
  int best = -1;
  double best_s = 0;
  for (int u = 0; u < hw::kNumUnits; ++u) {
    if (t.unit_seconds[u] > best_s) {
      best_s = t.unit_seconds[u];
      best = u;
    }
  }
  return best < 0 ? "none" : hw::UnitName(static_cast<hw::Unit>(best));
}

json OpJson(const OpTotal& t) {
  return {{"name", t.name},
          {"op", t.op->name_str()},
          {"location", t.location},
          {"count", t.count},
          {"seconds", t.seconds},
          {"flops", t.flops},
          {"bytes_read", t.bytes_read},
          {"bytes_written", t.bytes_written},
          {"hbm_bytes", t.hbm_bytes},
          {"padding_bytes", t.padding_bytes},
          {"unit", BusiestUnit(t)},
          {"unit_seconds", UnitMap(t.unit_seconds)},
          {"mxu_cycles", t.mxu_cycles},
          {"bound", hw::BoundName(t.bound)},
          {"priced", t.priced}};
}

json CompileJson(const CompileInfo& c) {
  json pass_seconds = json::object();
  for (const auto& [pass, seconds] : c.pass_seconds) pass_seconds[pass] = seconds;
  return {{"seconds", c.seconds},   {"cache", c.cache}, {"passes", c.passes},
          {"pass_seconds", pass_seconds}, {"notes", c.notes}};
}

}  // namespace

json ReportJson(const timing::Timeline& timeline, const Summary& s,
                const CompileInfo* compile) {
  json bounds = json::object();
  for (int b = 0; b < hw::kNumBounds; ++b)
    bounds[hw::BoundName(static_cast<hw::Bound>(b))] = s.bound_seconds[b];
  json ops = json::array();
  for (const OpTotal& t : s.ops) ops.push_back(OpJson(t));
  json doc = {{"schema", "tpusim.report/1"},
              {"chip", ChipJson(timeline.chip())},
              {"total_seconds", s.total_seconds},
              {"flops", s.flops},
              {"achieved_flops_per_s", s.achieved_flops_per_s},
              {"peak_flops_per_s", s.peak_flops_per_s},
              {"mfu", s.mfu},
              {"mxu_utilization", s.mxu_utilization},
              {"hbm_bytes", s.hbm_bytes},
              {"hbm_bandwidth_utilization", s.hbm_bandwidth_utilization},
              {"padding_bytes", s.padding_bytes},
              {"tiling_bytes", s.tiling_bytes},
              {"time_by_unit", UnitMap(s.unit_seconds)},
              {"time_by_bound", bounds},
              {"exposed_communication_seconds", s.exposed_communication_seconds},
              {"unpriced_ops", s.unpriced},
              {"notes", timeline.notes()},
              {"ops", ops}};
  doc["fusions"] = FusionSectionJson(timeline);
  if (timeline.slice()) doc["slice"] = SliceSectionJson(timeline, s);
  if (compile != nullptr) {
    doc["compile"] = CompileJson(*compile);
    if (compile->memory != nullptr) doc["memory"] = MemoryJson(*compile->memory);
  }
  return doc;
}

std::string JsonReport(const timing::Timeline& timeline, const Summary& s,
                       const CompileInfo* compile) {
  return ReportJson(timeline, s, compile).dump(2) + "\n";
}

}  // namespace tpusim::report
