// Internals of the emulated Cloud TPU API shared by its handlers: Google's
// error model, the transaction context, and the documents they read and
// write. The "_sim" member of a stored document holds what the emulator
// tracks beyond the API's fields; it never leaves the service.
#ifndef TPUSIM_CLOUD_API_H_
#define TPUSIM_CLOUD_API_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tpusim/cloud/store.h"
#include "tpusim/cloud/world.h"

namespace tpusim::cloud {

using json = nlohmann::json;

// A Google API error (google.rpc.Status): HTTP status, canonical code name,
// message. http == 0 is success.
struct ApiError {
  int http = 0;
  std::string status;
  std::string message;
  explicit operator bool() const { return http != 0; }
};

ApiError InvalidArgumentError(std::string message);
ApiError NotFoundError(std::string message);
ApiError AlreadyExistsError(std::string message);
ApiError ResourceExhaustedError(std::string message);
ApiError FailedPreconditionError(std::string message);
ApiError InternalError(const Status& st);
// google.rpc.Code's number for a canonical code name (operation errors).
int RpcCode(const std::string& status);
// The canonical code name of a google.rpc.Code number; UNKNOWN for others.
std::string RpcStatusName(int code);
json ErrorBody(const ApiError& e);
// JSON text of `value`; invalid UTF-8 from request text (a path in an error
// message) becomes U+FFFD rather than an exception.
std::string Dump(const json& value);

#define CLOUD_TRY(expr)                  \
  do {                                   \
    if (ApiError e_ = (expr)) return e_; \
  } while (0)
#define CLOUD_TRY_STATUS(expr)                                  \
  do {                                                          \
    if (Status s_ = (expr); !s_.ok()) return InternalError(s_); \
  } while (0)

// "2026-11-26T02:00:00.250Z" for simulated seconds since the Unix epoch.
std::string Rfc3339(double seconds);
// Seconds of a protobuf Duration ("3600s", "1.5s"); nullopt if malformed.
std::optional<double> ParseDuration(const std::string& text);
// Seconds since the epoch of an RFC 3339 time ("2026-11-26T02:00:00Z").
std::optional<double> ParseTime(const std::string& text);
// Resource ids as Cloud TPU accepts them: [a-z]([-a-z0-9]*[a-z0-9])?, at
// most 63 characters.
bool ValidId(const std::string& id);

// One request's view of the world: the store inside an open transaction,
// the world's configuration and the simulated now.
struct Context {
  Store& store;
  const WorldConfig& world;
  double now;

  // The stored document named `name` parsed, or nullopt.
  ApiError Load(const std::string& name, std::optional<json>& out);
  // Documents of `kind` under `parent` in creation order.
  ApiError LoadAll(const std::string& kind, const std::string& parent, std::vector<json>& out);
  // Documents of `kind` whose scheduled change is due, in creation order.
  ApiError LoadDue(const std::string& kind, std::vector<json>& out);
  // Stores `doc` (its "name"; its _sim.seq, assigned when missing), with
  // the indexed attributes the store keeps of it.
  ApiError Save(const std::string& kind, json& doc);
  ApiError Remove(const std::string& name);
  // Adds `delta` to the counter `key` in the store.
  ApiError Count(const std::string& key, int64_t delta = 1);

  // A new operation on `target` ("create", "delete", ...), saved undone.
  ApiError StartOperation(const std::string& parent, const std::string& verb,
                          const std::string& target, json& op);
  // Marks the operation done with `response` (or `error` when set).
  ApiError FinishOperation(const std::string& op_name, const json& response,
                           const ApiError& error = {});
  // An operation done at once, with `response` or `error`; `out` is the
  // operation as the API shows it.
  ApiError ImmediateOperation(const std::string& parent, const std::string& verb,
                              const std::string& target, const json& response, json& out,
                              const ApiError& error = {});
};

// "projects/p/locations/z" of a resource name "projects/p/locations/z/x/y".
std::string ParentOf(const std::string& name);
std::string ProjectOf(const std::string& name);
std::string ZoneOf(const std::string& name);
// `doc` as the API shows it: without "_sim".
json Public(json doc);

// The API's acceleratorConfig {type: "V5P", topology: "4x4x8"}.
json AcceleratorConfigOf(const std::string& generation, const std::string& topology);

// Node states that hold chips.
bool HoldsCapacity(const std::string& state);
// Chips of `generation` in `zone` held by nodes (of `project` if not empty).
ApiError ChipsInUse(Context& ctx, const std::string& zone, const std::string& generation,
                    const std::string& project, int64_t& chips);

// What a node is made of, from a create request or a queued resource's
// nodeSpec.
struct NodeRequest {
  std::string accelerator_type;  // canonical ("v4-32")
  std::string generation;        // "v4"
  std::string topology;          // "2x2x4"
  int64_t chips = 0, hosts = 0;
  json body;  // the request's node, output-only fields dropped
};
ApiError ReadNodeRequest(Context& ctx, const std::string& zone, const json& body, NodeRequest& out);
// A node document in state CREATING, provisioned until now +
// world.create_seconds, saved.
ApiError CreateNodeDocument(Context& ctx, const std::string& name, const NodeRequest& request,
                            const std::string& queued_resource, const std::string& op_name,
                            json& node);
// Quota and capacity checks for `chips` more chips.
ApiError CheckQuota(Context& ctx, const std::string& project, const std::string& zone,
                    const std::string& generation, int64_t chips);
ApiError FreeChips(Context& ctx, const std::string& zone, const std::string& generation,
                   int64_t& free);
// Schedules a maintenance window of the world's length on `node` from
// `start` ("SCHEDULED" or "UNSCHEDULED"), saved and counted.
ApiError ScheduleMaintenance(Context& ctx, json& node, double start, const char* type);
// Takes a spot node back: PREEMPTED, its chips freed, its queued resource
// SUSPENDED.
ApiError PreemptNode(Context& ctx, json& node);

}  // namespace tpusim::cloud

#endif  // TPUSIM_CLOUD_API_H_
