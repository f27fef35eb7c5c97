// Monitoring of the Cloud TPU emulator: API latency and response counts, and
// the world's state, as Prometheus text (served at /metrics).
#ifndef TPUSIM_CLOUD_METRICS_H_
#define TPUSIM_CLOUD_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tpusim/cloud/service.h"

namespace tpusim::cloud {

// Latency histograms and response counts of API calls. Thread-safe.
class ApiMetrics {
 public:
  // Records one call: its route label (RouteLabel), HTTP status and
  // seconds taken.
  void Record(const std::string& route, int http_status, double seconds);
  // The Prometheus text of the recorded calls.
  std::string Text() const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1,    2.5};
  struct Histogram {
    std::array<int64_t, kBuckets.size()> counts{};
    int64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Histogram> latency_;
  std::map<std::pair<std::string, int>, int64_t> responses_;
};

// A call's route for labels: "GET nodes", "POST nodes:stop"; ids dropped.
std::string RouteLabel(const std::string& method, const std::string& path);

// The Prometheus text of the world: nodes by state, queue depth and wait,
// preemptions, maintenance events, and each running job's step time and
// TensorCore utilization.
std::string WorldMetricsText(const WorldStats& stats);

}  // namespace tpusim::cloud

#endif  // TPUSIM_CLOUD_METRICS_H_
