#include "tpusim/cloud/metrics.h"

#include <fmt/format.h>

namespace tpusim::cloud {
namespace {

// Label values are escaped as the text format requires.
std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Header(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

void ApiMetrics::Record(const std::string& route, int http_status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  Histogram& h = latency_[route];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++h.counts[i];
  }
  ++h.count;
  h.sum += seconds;
  ++responses_[{route, http_status}];
}

std::string ApiMetrics::Text() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  Header(out, "tpusim_api_request_duration_seconds", "histogram",
         "Real time the API took to answer, by route.");
  for (const auto& [route, h] : latency_) {
    const std::string label = Escape(route);
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      out +=
          fmt::format("tpusim_api_request_duration_seconds_bucket{{route=\"{}\",le=\"{}\"}} {}\n",
                      label, kBuckets[i], h.counts[i]);
    }
    out +=
        fmt::format("tpusim_api_request_duration_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n",
                    label, h.count);
    out +=
        fmt::format("tpusim_api_request_duration_seconds_sum{{route=\"{}\"}} {}\n", label, h.sum);
    out += fmt::format("tpusim_api_request_duration_seconds_count{{route=\"{}\"}} {}\n", label,
                       h.count);
  }
  Header(out, "tpusim_api_responses_total", "counter", "API responses by route and HTTP status.");
  for (const auto& [key, n] : responses_) {
    out += fmt::format("tpusim_api_responses_total{{route=\"{}\",code=\"{}\"}} {}\n",
                       Escape(key.first), key.second, n);
  }
  return out;
}

std::string RouteLabel(const std::string& method, const std::string& path) {
  // /v2/projects/p/locations/z/<collection>[/<id>[:verb]]
  std::vector<std::string> segs;
  size_t begin = 1;
  for (size_t end; (end = path.find('/', begin)) != std::string::npos; begin = end + 1) {
    segs.push_back(path.substr(begin, end - begin));
  }
  segs.push_back(path.substr(begin));
  if (segs.size() < 6 || segs[0] != "v2")
    return method + " " + (segs.size() <= 5 ? "locations" : "other");
  std::string label = method + " " + segs[5].substr(0, 32);
  if (segs.size() >= 7) {
    const size_t colon = segs[6].find(':');
    if (colon != std::string::npos) label += segs[6].substr(colon, 32);
  }
  return label;
}

std::string WorldMetricsText(const WorldStats& s) {
  std::string out;
  Header(out, "tpusim_nodes", "gauge", "TPU nodes by state.");
  for (const char* state :
       {"CREATING", "READY", "STOPPING", "STOPPED", "STARTING", "DELETING", "PREEMPTED"}) {
    auto it = s.nodes_by_state.find(state);
    out += fmt::format("tpusim_nodes{{state=\"{}\"}} {}\n", state,
                       it == s.nodes_by_state.end() ? 0 : it->second);
  }
  Header(out, "tpusim_queued_resources", "gauge", "Queued resources by state.");
  for (const auto& [state, n] : s.queued_resources_by_state) {
    out += fmt::format("tpusim_queued_resources{{state=\"{}\"}} {}\n", state, n);
  }
  Header(out, "tpusim_queue_depth", "gauge", "Queued resources waiting for capacity.");
  out += fmt::format("tpusim_queue_depth {}\n", s.queue_depth);
  Header(out, "tpusim_queue_oldest_wait_seconds", "gauge",
         "Simulated seconds the longest-waiting queued resource has waited.");
  out += fmt::format("tpusim_queue_oldest_wait_seconds {}\n", s.oldest_wait_seconds);
  Header(out, "tpusim_queue_wait_seconds", "summary",
         "Simulated seconds served queued resources waited for capacity.");
  out += fmt::format("tpusim_queue_wait_seconds_sum {}\ntpusim_queue_wait_seconds_count {}\n",
                     s.served_wait_seconds, s.served);
  Header(out, "tpusim_preemptions_total", "counter", "Spot and preemptible nodes preempted.");
  out += fmt::format("tpusim_preemptions_total {}\n", s.preemptions);
  Header(out, "tpusim_maintenance_events_total", "counter", "Maintenance events scheduled.");
  out += fmt::format("tpusim_maintenance_events_total {}\n", s.maintenance_events);
  Header(out, "tpusim_job_step_seconds", "gauge",
         "Simulated step time of the job running on a node.");
  for (const auto& j : s.running_jobs) {
    out +=
        fmt::format("tpusim_job_step_seconds{{node=\"{}\"}} {}\n", Escape(j.node), j.step_seconds);
  }
  Header(out, "tpusim_job_tensorcore_utilization", "gauge",
         "Simulated TensorCore (MXU) busy share of the running job's steps.");
  for (const auto& j : s.running_jobs) {
    out += fmt::format("tpusim_job_tensorcore_utilization{{node=\"{}\"}} {}\n", Escape(j.node),
                       j.tensorcore_utilization);
  }
  Header(out, "tpusim_job_steps", "gauge", "Steps the running job has done.");
  for (const auto& j : s.running_jobs) {
    out += fmt::format("tpusim_job_steps{{node=\"{}\"}} {}\n", Escape(j.node), j.steps);
  }
  Header(out, "tpusim_simulated_time_seconds", "gauge", "The simulated clock (Unix seconds).");
  out += fmt::format("tpusim_simulated_time_seconds {:.3f}\n", s.sim_time);
  return out;
}

}  // namespace tpusim::cloud
