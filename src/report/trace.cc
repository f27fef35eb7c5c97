// The Chrome/Perfetto trace: process ids are 1 for the slice's links and
// 2 + d for device d, so that the viewer lists the links first.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "tpusim/report/report.h"

namespace tpusim::report {
namespace {

using nlohmann::json;

constexpr int kLinksPid = 1;
constexpr int DevicePid(size_t device) { return 2 + static_cast<int>(device); }

class TraceWriter {
 public:
  void Process(int pid, const std::string& name) {
    events_.push_back(
        {{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", name}}}});
    events_.push_back({{"ph", "M"},
                       {"pid", pid},
                       {"name", "process_sort_index"},
                       {"args", {{"sort_index", pid}}}});
  }
  void Track(int pid, int tid, const std::string& name) {
    events_.push_back({{"ph", "M"},
                       {"pid", pid},
                       {"tid", tid},
                       {"name", "thread_name"},
                       {"args", {{"name", name}}}});
  }
  // A span of `seconds` from `start_s`; none when it lasts no time.
  json* Span(int pid, int tid, const std::string& name, double start_s, double seconds) {
    if (seconds <= 0) return nullptr;
    events_.push_back({{"ph", "X"},
                       {"pid", pid},
                       {"tid", tid},
                       {"name", name},
                       {"ts", start_s * 1e6},
                       {"dur", seconds * 1e6}});
    return &events_.back();
  }
  std::string Finish() {
    json doc = {{"traceEvents", std::move(events_)}, {"displayTimeUnit", "ns"}};
    return doc.dump() + "\n";
  }

 private:
  json events_ = json::array();
};

// Device 0 in full, from the timeline's events: track 0 its ops, 1.. one
// unit each, then its collectives; on a slice, each collective's time on
// the busiest link of each torus axis and on the DCN goes to the links'
// process.
void DetailedDevice(const timing::Timeline& timeline, const std::string& name, TraceWriter& w) {
  const int pid = DevicePid(0), collectives = hw::kNumUnits + 1, host = hw::kNumUnits + 2;
  const int rank = timeline.slice() ? timeline.slice()->topology.rank() : 0;
  w.Process(pid, name);
  w.Track(pid, 0, "ops");
  for (int u = 0; u < hw::kNumUnits; ++u) {
    w.Track(pid, u + 1, hw::UnitName(static_cast<hw::Unit>(u)));
  }
  if (timeline.slice()) {
    static const char* kAxis[] = {"ici x", "ici y", "ici z"};
    w.Process(kLinksPid, "slice " + timeline.slice()->name + ": links (busiest of each axis)");
    w.Track(pid, collectives, "collectives");
    for (int a = 0; a < rank; ++a) w.Track(kLinksPid, a, kAxis[a]);
    w.Track(kLinksPid, rank, "dcn");
  }
  const std::vector<timing::Span> spans = timeline.Spans();
  if (std::any_of(spans.begin(), spans.end(), [](const auto& s) { return s.host_transfer; })) {
    w.Track(pid, host, "host transfers");
  }
  for (size_t i = 0; i < spans.size(); ++i) {
    const timing::Span& s = spans[i];
    const timing::OpEvent& e = timeline.events()[i];
    const double n = static_cast<double>(e.count);
    for (int a = 0; a < rank; ++a) {
      w.Span(kLinksPid, a, s.name, s.start_s, e.cost.ici_axis_seconds[a] * n);
    }
    w.Span(kLinksPid, rank, s.name, s.start_s, e.cost.dcn_seconds * n);
    const int track = s.communication ? collectives : s.host_transfer ? host : 0;
    if (json* op = w.Span(pid, track, s.name, s.start_s, s.seconds)) {
      (*op)["args"] = {{"location", e.op->loc().ToString()},
                       {"bound", hw::BoundName(e.cost.bound)},
                       {"flops", e.cost.flops * e.count},
                       {"hbm_bytes", e.cost.hbm_bytes * e.count}};
    }
    for (int u = 0; u < hw::kNumUnits; ++u) {
      w.Span(pid, u + 1, s.name, s.start_s, e.cost.unit_seconds[u] * n);
    }
  }
}

// Another device, from its spans: its ops and its collectives.
void OtherDevice(size_t device, const std::vector<timing::Span>& spans, TraceWriter& w) {
  const int pid = DevicePid(device);
  w.Process(pid, "device " + std::to_string(device));
  w.Track(pid, 0, "ops");
  w.Track(pid, 1, "collectives");
  for (const timing::Span& s : spans) {
    w.Span(pid, s.communication ? 1 : 0, s.name, s.start_s, s.seconds);
  }
}

}  // namespace

std::string PerfettoTrace(const timing::Timeline& timeline) {
  TraceWriter w;
  const auto& per_device = timeline.device_spans();
  std::string name = "tpusim " + timeline.chip().name;
  if (!per_device.empty()) {
    name = "device 0 (" + timeline.chip().name + ")";
  } else if (timeline.devices().size() > 1) {
    name = "devices 0-" + std::to_string(timeline.devices().size() - 1) + " (" +
           timeline.chip().name + "; one SPMD program stands for all)";
  }
  DetailedDevice(timeline, name, w);
  for (size_t d = 1; d < per_device.size(); ++d) OtherDevice(d, per_device[d], w);
  return w.Finish();
}

}  // namespace tpusim::report
