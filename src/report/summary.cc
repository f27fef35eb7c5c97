#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "tpusim/report/report.h"

namespace tpusim::report {
namespace {

std::string NameOf(const ir::Operation& op) {
  if (op.num_results() > 0 && !op.result(0).name().empty()) return "%" + op.result(0).name();
  return "";  // the table shows the op's name beside it anyway
}

// Bytes on every directed ICI link: each pattern's shared loads once, times
// the bytes of all the executions that used it.
std::vector<double> LinkBytes(const timing::Timeline& timeline) {
  std::vector<double> bytes;
  if (!timeline.slice()) return bytes;
  bytes.assign(static_cast<size_t>(timeline.slice()->LinkSlots()), 0.0);
  std::unordered_map<const std::vector<double>*, double> scale;
  for (const timing::OpEvent& e : timeline.events()) {
    if (e.cost.ici_link_loads) {
      scale[e.cost.ici_link_loads.get()] += e.cost.ici_link_scale * static_cast<double>(e.count);
    }
  }
  for (const auto& [loads, factor] : scale) {
    for (size_t i = 0; i < loads->size() && i < bytes.size(); ++i) bytes[i] += (*loads)[i] * factor;
  }
  return bytes;
}

void SummarizeDevices(const timing::Timeline& timeline, Summary& s) {
  const auto& devices = timeline.devices();
  if (devices.empty()) return;
  double flops = 0;
  for (const timing::DeviceTotals& d : devices) {
    s.slice_seconds = std::max(s.slice_seconds, d.seconds);
    flops += static_cast<double>(d.flops);
  }
  if (s.slice_seconds > 0) {
    s.slice_mfu =
        flops / (static_cast<double>(devices.size()) * s.peak_flops_per_s * s.slice_seconds);
  }
}

}  // namespace

Summary Summarize(const timing::Timeline& timeline) {
  Summary s;
  const hw::ChipSpec& chip = timeline.chip();
  s.total_seconds = timeline.total_seconds();
  s.exposed_communication_seconds = timeline.exposed_communication_seconds();
  s.peak_flops_per_s =
      chip.PeakBf16FlopsPerS() * hw::CoresPerDevice(chip) / chip.tensor_cores;
  std::unordered_map<const ir::Operation*, size_t> index;
  std::unordered_map<std::string, bool> unpriced_seen;
  for (const timing::OpEvent& e : timeline.events()) {
    auto [it, inserted] = index.emplace(e.op, s.ops.size());
    if (inserted) {
      OpTotal t;
      t.op = e.op;
      t.name = NameOf(*e.op);
      t.location = e.op->loc().ToString();
      t.priced = e.priced;
      s.ops.push_back(t);
    }
    OpTotal& t = s.ops[it->second];
    const double n = static_cast<double>(e.count);
    if (e.cost.seconds >= (t.count ? t.seconds / t.count : 0)) t.bound = e.cost.bound;
    t.count += e.count;
    t.seconds += e.seconds();
    t.flops += e.cost.flops * e.count;
    t.bytes_read += e.cost.bytes_read * e.count;
    t.bytes_written += e.cost.bytes_written * e.count;
    t.hbm_bytes += e.cost.hbm_bytes * e.count;
    t.padding_bytes += e.cost.padding_bytes * e.count;
    t.mxu_cycles += e.cost.mxu_cycles * e.count;
    for (int u = 0; u < hw::kNumUnits; ++u) {
      t.unit_seconds[u] += e.cost.unit_seconds[u] * n;
      s.unit_seconds[u] += e.cost.unit_seconds[u] * n;
    }
    s.flops += e.cost.flops * e.count;
    s.hbm_bytes += e.cost.hbm_bytes * e.count;
    s.padding_bytes += e.cost.padding_bytes * e.count;
    s.tiling_bytes += e.cost.tiling_bytes * e.count;
    s.ici_bytes += e.cost.ici_bytes * n;
    s.dcn_bytes += e.cost.dcn_bytes * n;
    s.bound_seconds[static_cast<int>(e.cost.bound)] += e.seconds();
    if (!e.priced && !unpriced_seen[e.op->name_str()]) {
      unpriced_seen[e.op->name_str()] = true;
      s.unpriced.push_back(e.op->name_str());
    }
  }
  s.link_bytes = LinkBytes(timeline);
  SummarizeDevices(timeline, s);
  if (s.total_seconds > 0) {
    s.achieved_flops_per_s = static_cast<double>(s.flops) / s.total_seconds;
    s.mfu = s.achieved_flops_per_s / s.peak_flops_per_s;
    s.mxu_utilization = s.unit_seconds[static_cast<int>(hw::Unit::kMxu)] / s.total_seconds;
    s.hbm_bandwidth_utilization =
        static_cast<double>(s.hbm_bytes) / s.total_seconds / chip.HbmPeakBytesPerSPerDevice();
    if (const auto& slice = timeline.slice(); slice && slice->ici_links() > 0) {
      s.ici_link_utilization = s.ici_bytes / (static_cast<double>(slice->ici_links()) *
                                              chip.ici.link_bytes_per_s * s.total_seconds);
    }
  }
  return s;
}

std::string FormatSeconds(double s) {
  char buf[32];
  if (s == 0) return "0 s";
  if (s < 1e-6) std::snprintf(buf, sizeof buf, "%.0f ns", s * 1e9);
  else if (s < 1e-3) std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  else if (s < 1) std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3f s", s);
  return buf;
}

namespace {

std::string Scaled(double v, const char* unit) {
  static const char* kPrefix[] = {"", "K", "M", "G", "T", "P", "E"};
  int p = 0;
  while (std::abs(v) >= 1000 && p < 6) {
    v /= 1000;
    ++p;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, p == 0 ? "%.0f %s%s" : "%.2f %s%s", v, kPrefix[p], unit);
  return buf;
}

}  // namespace

std::string FormatBytes(double bytes) { return Scaled(bytes, "B"); }

std::string FormatPercent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
  return buf;
}

std::string FormatAmount(double amount, const char* unit) { return Scaled(amount, unit); }

std::string FormatRate(double per_s, const char* unit) {
  return Scaled(per_s, (std::string(unit) + "/s").c_str());
}

}  // namespace tpusim::report
