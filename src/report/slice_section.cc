#include "report/slice_section.h"

#include <algorithm>
#include <sstream>

namespace tpusim::report {
namespace {

constexpr const char* kAxisNames[] = {"x", "y", "z"};
constexpr size_t kDeviceRowsShown = 16;

struct AxisLoad {
  double busiest = 0, total = 0;
  int64_t links = 0;
};

std::vector<AxisLoad> AxisLoads(const pod::Slice& slice, const Summary& s) {
  const int rank = slice.topology.rank();
  std::vector<AxisLoad> axes(rank);
  for (size_t i = 0; i < s.link_bytes.size(); ++i) {
    AxisLoad& a = axes[(i / 2) % rank];
    a.busiest = std::max(a.busiest, s.link_bytes[i]);
    a.total += s.link_bytes[i];
  }
  for (int a = 0; a < rank; ++a) axes[a].links = slice.AxisLinks(a);
  return axes;
}

// Consecutive devices with equal totals, as [first, last] ranges.
std::vector<std::pair<size_t, size_t>> DeviceRuns(const std::vector<timing::DeviceTotals>& d) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < d.size(); ++i) {
    const bool same =
        !runs.empty() && d[i].seconds == d[i - 1].seconds &&
        d[i].exposed_communication_seconds == d[i - 1].exposed_communication_seconds &&
        d[i].flops == d[i - 1].flops;
    if (same) {
      runs.back().second = i;
    } else {
      runs.push_back({i, i});
    }
  }
  return runs;
}

double Utilization(double bytes, const pod::Slice& slice, double seconds) {
  return seconds > 0 ? bytes / (slice.chip.ici.link_bytes_per_s * seconds) : 0;
}

}  // namespace

std::string SliceSectionText(const timing::Timeline& timeline, const Summary& s) {
  const auto& slice = timeline.slice();
  if (!slice) return "";
  std::ostringstream os;
  os << "  slice            " << slice->name << ", " << slice->total_chips()
     << " chips; collectives moved " << FormatBytes(s.ici_bytes) << " over its "
     << slice->ici_links() << " ICI links (" << FormatPercent(s.ici_link_utilization) << " busy)";
  if (s.dcn_bytes > 0) os << " and " << FormatBytes(s.dcn_bytes) << " over DCN";
  os << "\n";
  if (s.ici_bytes > 0) {
    os << "  ICI links        one way, busiest and mean per axis:";
    const std::vector<AxisLoad> axes = AxisLoads(*slice, s);
    for (size_t a = 0; a < axes.size(); ++a) {
      if (axes[a].links == 0) continue;
      os << (a ? "; " : " ") << kAxisNames[a] << " " << FormatBytes(axes[a].busiest) << " ("
         << FormatPercent(Utilization(axes[a].busiest, *slice, s.total_seconds)) << " busy), "
         << FormatBytes(axes[a].total / static_cast<double>(axes[a].links));
    }
    os << "\n";
  }
  const auto& devices = timeline.devices();
  if (devices.empty()) return os.str();
  os << "  devices          " << devices.size() << ", the slowest "
     << FormatSeconds(s.slice_seconds) << "; MFU over the slice " << FormatPercent(s.slice_mfu)
     << "\n";
  const auto runs = DeviceRuns(devices);
  for (size_t r = 0; r < runs.size() && r < kDeviceRowsShown; ++r) {
    const auto [first, last] = runs[r];
    const timing::DeviceTotals& d = devices[first];
    std::string ids = std::to_string(first) + (last > first ? "-" + std::to_string(last) : "");
    ids.resize(std::max<size_t>(ids.size(), 9), ' ');
    os << "    " << ids << " time " << FormatSeconds(d.seconds) << ", compute "
       << FormatSeconds(d.seconds - d.exposed_communication_seconds) << ", exposed communication "
       << FormatSeconds(d.exposed_communication_seconds) << "\n";
  }
  if (runs.size() > kDeviceRowsShown) {
    os << "    ... " << runs.size() - kDeviceRowsShown
       << " more groups of devices (the JSON report has each)\n";
  }
  return os.str();
}

nlohmann::json SliceSectionJson(const timing::Timeline& timeline, const Summary& s) {
  const pod::Slice& slice = *timeline.slice();
  nlohmann::json links = nlohmann::json::array();
  const int rank = slice.topology.rank();
  for (size_t i = 0; i < s.link_bytes.size(); ++i) {
    if (s.link_bytes[i] <= 0) continue;
    const int64_t chip = static_cast<int64_t>(i) / (2 * rank);
    const pod::DevicePlace p = slice.Place(chip * slice.chip.DevicesPerChip());
    links.push_back({{"slice", p.slice},
                     {"chip", p.coords},
                     {"axis", kAxisNames[(i / 2) % rank]},
                     {"direction", i % 2 == 0 ? "+" : "-"},
                     {"bytes", s.link_bytes[i]},
                     {"utilization", Utilization(s.link_bytes[i], slice, s.total_seconds)}});
  }
  nlohmann::json devices = nlohmann::json::array();
  for (size_t d = 0; d < timeline.devices().size(); ++d) {
    const timing::DeviceTotals& t = timeline.devices()[d];
    devices.push_back({{"device", d},
                       {"seconds", t.seconds},
                       {"compute_seconds", t.seconds - t.exposed_communication_seconds},
                       {"exposed_communication_seconds", t.exposed_communication_seconds},
                       {"flops", t.flops}});
  }
  return {{"name", slice.name},
          {"topology", slice.topology.ToString()},
          {"chips", slice.total_chips()},
          {"devices", slice.num_devices()},
          {"ici_links", slice.ici_links()},
          {"ici_bytes", s.ici_bytes},
          {"dcn_bytes", s.dcn_bytes},
          {"ici_link_utilization", s.ici_link_utilization},
          {"links", links},
          {"seconds", s.slice_seconds},
          {"mfu", s.slice_mfu},
          {"device_totals", devices}};
}

}  // namespace tpusim::report
