// The run's HTML page: the JSON report's document, with its op list as
// columns, and device 0's spans for the timeline of the units.
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "report/html/page.h"
#include "report/json_doc.h"
#include "tpusim/report/report.h"

namespace tpusim::report {
namespace {

using nlohmann::json;

// Enough for every op of a 10,000-op program on a few units; a longer run's
// timeline shows its start, and the page says so.
constexpr size_t kMaxSpans = 40000;

// The timeline's tracks, as the Perfetto trace names them: the ops, one per
// unit, then collectives and host transfers (trace.cc).
json TrackNames() {
  json names = json::array({"ops"});
  for (int u = 0; u < hw::kNumUnits; ++u) names.push_back(hw::UnitName(static_cast<hw::Unit>(u)));
  names.push_back("collectives");
  names.push_back("host transfers");
  return names;
}

// Whole picoseconds: a span's times in 12 digits or fewer where a double
// takes 22, exact in the page's doubles up to 9,000 s.
int64_t Picoseconds(double s) { return std::llround(s * 1e12); }

// Device 0's spans as [track, start, duration, op], times in picoseconds:
// `op` indexes the report's op list, so that the page names the op a span
// is of.
json UnitTimeline(const timing::Timeline& timeline, const Summary& s) {
  std::unordered_map<const ir::Operation*, int> index;
  for (size_t i = 0; i < s.ops.size(); ++i) index.emplace(s.ops[i].op, static_cast<int>(i));
  const int collectives = hw::kNumUnits + 1, host = hw::kNumUnits + 2;
  const std::vector<timing::Span> spans = timeline.Spans();
  json out = json::array();
  size_t total = 0;
  auto add = [&](int track, double start, double seconds, int op) {
    if (seconds <= 0) return;
    if (++total <= kMaxSpans) out.push_back({track, Picoseconds(start), Picoseconds(seconds), op});
  };
  for (size_t i = 0; i < spans.size() && i < timeline.events().size(); ++i) {
    const timing::Span& sp = spans[i];
    const timing::OpEvent& e = timeline.events()[i];
    auto it = index.find(e.op);
    const int op = it == index.end() ? -1 : it->second;
    add(sp.communication ? collectives : sp.host_transfer ? host : 0, sp.start_s, sp.seconds, op);
    for (int u = 0; u < hw::kNumUnits; ++u) {
      add(u + 1, sp.start_s, e.cost.unit_seconds[u] * static_cast<double>(e.count), op);
    }
  }
  return {{"tracks", TrackNames()}, {"spans", std::move(out)}, {"total_spans", total}};
}

}  // namespace

std::string HtmlReport(const timing::Timeline& timeline, const Summary& summary,
                       const CompileInfo* compile) {
  json doc = ReportJson(timeline, summary, compile);
  doc["ops"] = html::Columns(doc["ops"]);
  json data = {{"report", std::move(doc)}, {"timeline", UnitTimeline(timeline, summary)}};
  std::string title = "tpusim run on " + timeline.chip().name;
  if (timeline.slice()) title = "tpusim run on " + timeline.slice()->name;
  return html::Page(title, data, html::RunPageJs());
}

}  // namespace tpusim::report
