// The client side of the Cloud TPU emulator: `tpusim cloud tpus ...` with
// gcloud's command shapes (gcloud compute tpus tpu-vm / queued-resources),
// flags and output formats, over the REST API of a `tpusim cloud serve`.
#ifndef TPUSIM_CLOUD_CLIENT_H_
#define TPUSIM_CLOUD_CLIENT_H_

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tpusim/base/status.h"

namespace tpusim::cloud {

struct ClientOptions {
  std::string endpoint = "http://127.0.0.1:8470";
  std::string token;
  std::string project = "my-project";
  std::string zone;
  std::string format;          // json, yaml or table; empty: the command's default
  bool async = false;          // return once a change is accepted, as gcloud --async
  double wait_seconds = 1800;  // at most, real, for an operation to finish
};

// An error the API returned ("NOT_FOUND", its message) as a Status whose
// message starts with the status name. A refused call is bad input (exit 2:
// kNotFound, kResourceExhausted, kInvalidArgument for the rest); the
// service's own failures (INTERNAL, UNAVAILABLE, UNKNOWN) are kInternal.
Status ApiStatus(const std::string& status, const std::string& message);

// A connection to the API. Errors the API returns, and those of the
// operations Wait polls, are ApiStatus's; an unreachable API is kInternal.
class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();

  // One call; `body` is sent as JSON unless null.
  StatusOr<nlohmann::json> Call(const std::string& method, const std::string& path,
                                const std::vector<std::pair<std::string, std::string>>& query = {},
                                const nlohmann::json& body = nullptr);
  // Polls the operation until it is done; its response, or its error.
  StatusOr<nlohmann::json> Wait(const nlohmann::json& operation);
  // "/v2/projects/P/locations/Z".
  std::string Parent() const;
  const ClientOptions& options() const { return options_; }

 private:
  ClientOptions options_;
  struct Http;
  std::unique_ptr<Http> http_;
};

// The node a create asks for, as gcloud's flags give it.
struct NodeFlags {
  std::string accelerator_type;
  std::string version;  // runtime version
  std::string description;
  std::vector<std::string> labels;  // KEY=VALUE
  bool spot = false, preemptible = false;
};

struct QueuedResourceFlags {
  std::string node_id;
  int64_t node_count = 0;  // multislice: this many nodes named node_prefix-i
  std::string node_prefix;
  NodeFlags node;  // its version is --runtime-version
  bool spot = false, guaranteed = false, best_effort = false;
  std::string valid_until_duration, valid_until_time;  // "6h", "2026-12-01T00:00:00Z"
  std::string valid_after_duration, valid_after_time;
};

// gcloud compute tpus tpu-vm create|delete|start|stop|describe|list.
Status CreateNode(Client& c, const std::string& name, const NodeFlags& flags);
Status NodeVerb(Client& c, const std::string& verb, const std::string& name, std::FILE* out);
Status DescribeResource(Client& c, const std::string& collection, const std::string& name,
                        std::FILE* out);
Status ListResources(Client& c, const std::string& collection, std::FILE* out);
// gcloud compute tpus queued-resources create|delete.
Status CreateQueuedResource(Client& c, const std::string& id, const QueuedResourceFlags& flags);
Status DeleteQueuedResource(Client& c, const std::string& id, bool force);
// tpusim's own: take a spot node back, or start a maintenance window on a
// node, now.
Status SimulateEvent(Client& c, const std::string& verb, const std::string& name, std::FILE* out);

// "table", "json" or "yaml" text of an API value: the list's items as the
// collection's table columns, or the value itself.
StatusOr<std::string> FormatValue(const nlohmann::json& value, const std::string& format,
                                  const std::string& collection);
// YAML for a JSON value (block style; strings quoted where YAML would read
// them otherwise).
std::string ToYaml(const nlohmann::json& value);

}  // namespace tpusim::cloud

#endif  // TPUSIM_CLOUD_CLIENT_H_
