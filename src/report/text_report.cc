#include <algorithm>
#include <cstdio>
#include <sstream>

#include "report/fusion_section.h"
#include "report/memory_section.h"
#include "report/slice_section.h"
#include "tpusim/report/report.h"

namespace tpusim::report {
namespace {

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

void TimeBy(std::ostringstream& os, const Summary& s) {
  os << "  time by unit (busy):";
  for (int u = 0; u < hw::kNumUnits; ++u) {
    os << "  " << hw::UnitName(static_cast<hw::Unit>(u)) << " "
       << FormatSeconds(s.unit_seconds[u]);
  }
  // Collectives and host moves run beside the compute, so the ops' times
  // add up to more than the step: shares are of their sum.
  double busy = 0;
  for (double seconds : s.bound_seconds) busy += seconds;
  os << "\n  busy time by bound:";
  for (int b = 0; b < hw::kNumBounds; ++b) {
    if (s.bound_seconds[b] == 0) continue;
    os << "  " << hw::BoundName(static_cast<hw::Bound>(b)) << " "
       << FormatSeconds(s.bound_seconds[b]);
    if (busy > 0) os << " (" << FormatPercent(s.bound_seconds[b] / busy) << ")";
  }
  os << "\n";
}

void TopOps(std::ostringstream& os, const Summary& s) {
  std::vector<const OpTotal*> ops;
  for (const OpTotal& t : s.ops) ops.push_back(&t);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpTotal* a, const OpTotal* b) { return a->seconds > b->seconds; });
  os << "costliest ops:\n";
  for (size_t i = 0; i < ops.size() && i < 10; ++i) {
    const OpTotal& t = *ops[i];
    if (t.seconds == 0) break;
    std::string what = t.op->name_str() + (t.count > 1 ? " x" + std::to_string(t.count) : "");
    os << "  " << Pad(FormatSeconds(t.seconds), 10) << " "
       << Pad(s.total_seconds > 0 ? FormatPercent(t.seconds / s.total_seconds) : "", 7) << " "
       << Pad(hw::BoundName(t.bound), 8) << " " << Pad(t.name, 8) << " " << Pad(what, 28) << " "
       << t.location << "\n";
  }
}

void PaddingWaste(std::ostringstream& os, const Summary& s) {
  std::vector<const OpTotal*> ops;
  for (const OpTotal& t : s.ops) {
    if (t.padding_bytes > 0) ops.push_back(&t);
  }
  if (ops.empty()) return;
  std::stable_sort(ops.begin(), ops.end(), [](const OpTotal* a, const OpTotal* b) {
    return a->padding_bytes > b->padding_bytes;
  });
  os << "most padding (tiles of (8|16|32, 128)):\n";
  for (size_t i = 0; i < ops.size() && i < 5; ++i) {
    const OpTotal& t = *ops[i];
    double share = t.hbm_bytes > 0 ? static_cast<double>(t.padding_bytes) / t.hbm_bytes : 0;
    os << "  " << Pad(FormatBytes(t.padding_bytes), 10) << " " << Pad(FormatPercent(share), 7)
       << " of its traffic  " << Pad(t.name, 8) << " " << Pad(t.op->name_str(), 28) << " "
       << t.location << "\n";
  }
}

void Compilation(std::ostringstream& os, const CompileInfo& c) {
  os << "compile: " << FormatSeconds(c.seconds) << " (cache " << c.cache << "), passes:";
  if (c.pass_seconds.empty()) {
    for (const std::string& p : c.passes) os << " " << p;
  }
  for (size_t i = 0; i < c.pass_seconds.size(); ++i) {
    os << (i ? ", " : " ") << c.pass_seconds[i].first << " "
       << FormatSeconds(c.pass_seconds[i].second);
  }
  os << "\n";
  for (const std::string& note : c.notes) os << "  " << note << "\n";
  if (c.memory != nullptr) os << MemoryText(*c.memory);
}

}  // namespace

std::string TextReport(const timing::Timeline& timeline, const Summary& s,
                       const CompileInfo* compile) {
  const hw::ChipSpec& chip = timeline.chip();
  std::ostringstream os;
  os << "chip: " << chip.name << " - " << chip.description << "\n"
     << "  time             " << FormatSeconds(s.total_seconds) << "\n"
     << "  work             " << FormatAmount(static_cast<double>(s.flops), "FLOP") << ", achieved "
     << FormatRate(s.achieved_flops_per_s, "FLOP") << " of "
     << FormatRate(s.peak_flops_per_s, "FLOP") << " peak (MFU " << FormatPercent(s.mfu) << ")\n"
     << "  MXU utilization  " << FormatPercent(s.mxu_utilization) << "\n"
     << "  HBM              " << FormatBytes(static_cast<double>(s.hbm_bytes)) << " moved, "
     << FormatRate(s.total_seconds > 0 ? s.hbm_bytes / s.total_seconds : 0, "B") << " ("
     << FormatPercent(s.hbm_bandwidth_utilization) << " of "
     << FormatRate(chip.HbmPeakBytesPerSPerDevice(), "B")
     << (chip.DevicesPerChip() > 1 ? " per device" : "") << ")\n"
     << "  padding          " << FormatBytes(static_cast<double>(s.padding_bytes))
     << " of the traffic is tile padding";
  if (s.tiling_bytes > 0) {
    os << "; " << FormatBytes(static_cast<double>(s.tiling_bytes))
       << " re-read because working sets exceed VMEM";
  }
  os << "\n";
  os << SliceSectionText(timeline, s);
  const double collectives = s.bound_seconds[static_cast<int>(hw::Bound::kIci)];
  if (collectives > 0) {
    os << "  communication    " << FormatSeconds(collectives) << " in collectives, "
       << FormatSeconds(s.exposed_communication_seconds) << " of it exposed ("
       << FormatPercent(std::max(0.0, 1 - s.exposed_communication_seconds / collectives))
       << " hidden by compute)\n";
  }
  TimeBy(os, s);
  TopOps(os, s);
  PaddingWaste(os, s);
  if (!s.unpriced.empty()) {
    os << "not priced by the model (counted as zero time):";
    for (const std::string& n : s.unpriced) os << " " << n;
    os << "\n";
  }
  os << FusionSectionText(timeline);
  for (const std::string& note : timeline.notes()) os << "note: " << note << "\n";
  if (compile != nullptr) Compilation(os, *compile);
  return os.str();
}

}  // namespace tpusim::report
