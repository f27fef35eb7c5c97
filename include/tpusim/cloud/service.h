// The Cloud TPU v2 API, emulated: projects.locations.{nodes,
// queuedResources, acceleratorTypes, runtimeVersions, operations} over a
// simulated world (cloud/world.h) whose state lives in a Store
// (cloud/store.h). Transport-free: the HTTP server (cloud/server.h) and the
// tests hand it requests.
//
// Every request runs in one transaction: its changes are durable before its
// response exists, and a failed request changes nothing. Simulated time moves
// with the real clock times WorldConfig::speed; Tick() applies what became
// due (long-running changes finishing, queued resources served, spot nodes
// preempted, maintenance windows). docs/cloud.md lists the API and its
// tpusim extensions (:simulatePreemption, :simulateMaintenance, :reportJob).
#ifndef TPUSIM_CLOUD_SERVICE_H_
#define TPUSIM_CLOUD_SERVICE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/cloud/store.h"
#include "tpusim/cloud/world.h"

namespace tpusim::cloud {

struct ApiRequest {
  std::string method;  // GET, POST, PATCH, DELETE
  std::string path;    // "/v2/projects/p/locations/z/nodes/n:stop"
  std::map<std::string, std::string> query;
  std::string body;  // JSON, or empty
};

struct ApiResponse {
  int http_status = 200;
  std::string body;          // JSON: the resource, or Google's {"error": {...}}
  std::string error_status;  // "NOT_FOUND"... for errors, else empty
};

// What /metrics reports of the world.
struct WorldStats {
  double sim_time = 0;  // seconds since the Unix epoch
  std::map<std::string, int64_t> nodes_by_state;
  std::map<std::string, int64_t> queued_resources_by_state;
  int64_t queue_depth = 0;         // queued resources waiting for capacity
  double oldest_wait_seconds = 0;  // of those, simulated
  int64_t served = 0;              // queued resources served since the state was created
  double served_wait_seconds = 0;  // simulated seconds they waited, in all
  int64_t preemptions = 0;         // since the state was created
  int64_t maintenance_events = 0;
  struct Job {
    std::string node;
    int64_t steps = 0;
    double step_seconds = 0;            // simulated step time on the node's slice
    double tensorcore_utilization = 0;  // MXU busy share of a step
  };
  std::vector<Job> running_jobs;  // on READY nodes
};

class Service {
 public:
  // Opens (or creates) the state at `db_path` for `world`. `real_seconds`
  // is the real clock in seconds (a steady clock when null); tests drive
  // their own.
  static StatusOr<std::unique_ptr<Service>> Open(const std::string& db_path, WorldConfig world,
                                                 std::function<double()> real_seconds = nullptr);
  ~Service();

  // Serves one call. Thread-safe; calls are serialized.
  ApiResponse Handle(const ApiRequest& request);

  // Brings the world up to the clock's now. Thread-safe.
  Status Tick();

  StatusOr<WorldStats> Stats();

  const WorldConfig& world() const;

 private:
  struct Impl;
  explicit Service(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tpusim::cloud

#endif  // TPUSIM_CLOUD_SERVICE_H_
