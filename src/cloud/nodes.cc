// projects.locations.nodes: create, delete, start, stop, patch, and the
// emulator's own verbs.
#include <algorithm>
#include <sstream>

#include "cloud/handlers.h"

namespace tpusim::cloud {
namespace {

ApiError LoadNode(Context& ctx, const Call& call, json& node) {
  std::optional<json> doc;
  CLOUD_TRY(ctx.Load(call.name, doc));
  if (!doc) return NotFoundError("Resource '" + call.name + "' was not found");
  node = std::move(*doc);
  return {};
}

// Starts a long-running change of `node` into `transient` state, finishing
// `seconds` later (simulation.cc completes it).
ApiError Begin(Context& ctx, json& node, const std::string& verb, const std::string& transient,
               double seconds, json& op) {
  CLOUD_TRY(ctx.StartOperation(ParentOf(node["name"]), verb, node["name"], op));
  node["state"] = transient;
  node["_sim"]["pending"] = verb;
  node["_sim"]["until"] = ctx.now + seconds;
  node["_sim"]["op"] = op["name"];
  CLOUD_TRY(ctx.Save("node", node));
  op = Public(op);
  return {};
}

ApiError RequireState(const json& node, std::initializer_list<const char*> states,
                      const std::string& verb) {
  for (const char* s : states) {
    if (node["state"] == s) return {};
  }
  return FailedPreconditionError("cannot " + verb + " node " + node["name"].get<std::string>() +
                                 " in state " + node["state"].get<std::string>());
}

}  // namespace

ApiError CreateNode(Context& ctx, const Call& call, json& out) {
  auto it = call.query.find("nodeId");
  if (it == call.query.end() || !ValidId(it->second)) {
    return InvalidArgumentError(
        "nodeId must be given and match [a-z]([-a-z0-9]*[a-z0-9])? (at most 63 characters)");
  }
  const std::string name = call.parent + "/nodes/" + it->second;
  std::optional<json> existing;
  CLOUD_TRY(ctx.Load(name, existing));
  if (existing) return AlreadyExistsError("Resource '" + name + "' already exists");
  NodeRequest request;
  CLOUD_TRY(ReadNodeRequest(ctx, ZoneOf(name), call.body, request));
  CLOUD_TRY(CheckQuota(ctx, ProjectOf(name), ZoneOf(name), request.generation, request.chips));
  int64_t free = 0;
  CLOUD_TRY(FreeChips(ctx, ZoneOf(name), request.generation, free));
  if (free < request.chips) {
    // As Cloud TPU does: the operation fails, no node is left behind.
    return ctx.ImmediateOperation(
        call.parent, "create", name, json(), out,
        ResourceExhaustedError("There is no more capacity in the zone \"" + ZoneOf(name) +
                               "\" for " + request.accelerator_type + " (" + std::to_string(free) +
                               " " + request.generation +
                               " chips free); you can try in another zone, or queue the request "
                               "with queuedResources"));
  }
  json op;
  CLOUD_TRY(ctx.StartOperation(call.parent, "create", name, op));
  json node;
  CLOUD_TRY(CreateNodeDocument(ctx, name, request, "", op["name"], node));
  out = Public(op);
  return {};
}

ApiError DeleteNode(Context& ctx, const Call& call, json& out) {
  json node;
  CLOUD_TRY(LoadNode(ctx, call, node));
  if (node["state"] == "DELETING") {
    return FailedPreconditionError("node " + call.name + " is already being deleted");
  }
  return Begin(ctx, node, "delete", "DELETING", ctx.world.delete_seconds, out);
}

ApiError StartNode(Context& ctx, const Call& call, json& out) {
  json node;
  CLOUD_TRY(LoadNode(ctx, call, node));
  CLOUD_TRY(RequireState(node, {"STOPPED"}, "start"));
  const json& sim = node["_sim"];
  CLOUD_TRY(CheckQuota(ctx, sim["project"], sim["zone"], sim["generation"], sim["chips"]));
  int64_t free = 0;
  CLOUD_TRY(FreeChips(ctx, sim["zone"], sim["generation"], free));
  if (free < sim["chips"].get<int64_t>()) {
    return ResourceExhaustedError("There is no more capacity in the zone \"" +
                                  sim["zone"].get<std::string>() + "\" to start " + call.name);
  }
  return Begin(ctx, node, "start", "STARTING", ctx.world.start_seconds, out);
}

ApiError StopNode(Context& ctx, const Call& call, json& out) {
  json node;
  CLOUD_TRY(LoadNode(ctx, call, node));
  if (node["_sim"].value("spot", false)) {
    return FailedPreconditionError("spot and preemptible nodes cannot be stopped: " + call.name);
  }
  CLOUD_TRY(RequireState(node, {"READY"}, "stop"));
  return Begin(ctx, node, "stop", "STOPPING", ctx.world.stop_seconds, out);
}

ApiError PatchNode(Context& ctx, const Call& call, json& out) {
  json node;
  CLOUD_TRY(LoadNode(ctx, call, node));
  auto mask = call.query.find("updateMask");
  if (mask == call.query.end() || mask->second.empty()) {
    return InvalidArgumentError("updateMask must name the fields to update");
  }
  if (!call.body.is_object()) return InvalidArgumentError("the node must be a JSON object");
  static const std::vector<std::string> kMutable = {"description", "labels", "metadata", "tags"};
  std::stringstream fields(mask->second);
  for (std::string f; std::getline(fields, f, ',');) {
    if (std::find(kMutable.begin(), kMutable.end(), f) == kMutable.end()) {
      return InvalidArgumentError("updateMask: field '" + f +
                                  "' cannot be updated (description, labels, metadata, tags can)");
    }
    if (call.body.contains(f)) {
      node[f] = call.body[f];
    } else {
      node.erase(f);
    }
  }
  CLOUD_TRY(ctx.Save("node", node));
  return ctx.ImmediateOperation(call.parent, "update", call.name, Public(node), out);
}

namespace {

// What each worker of an emulated node publishes: the emulator's own
// namespace, as a VM's agents publish theirs.
std::vector<json> GuestEntries(const json& node, int64_t worker) {
  std::vector<json> items = {
      {{"namespace", "tpusim"}, {"key", "worker-id"}, {"value", std::to_string(worker)}},
      {{"namespace", "tpusim"}, {"key", "accelerator-type"}, {"value", node["acceleratorType"]}},
      {{"namespace", "tpusim"}, {"key", "state"}, {"value", node["state"]}}};
  if (node["_sim"].contains("job")) {
    items.push_back({{"namespace", "tpusim"},
                     {"key", "job-steps"},
                     {"value", node["_sim"]["job"]["steps"].dump()}});
  }
  return items;
}

// Whether entry `e` lies under `path`: "" or "/" (all), "/ns/" or "ns/" (a
// namespace), "/ns/key" (one key).
bool UnderPath(const json& e, std::string path) {
  if (!path.empty() && path[0] == '/') path.erase(0, 1);
  if (path.empty()) return true;
  const std::string ns = e["namespace"], key = e["key"];
  return path == ns + "/" || path == ns || path == ns + "/" + key;
}

}  // namespace

ApiError GetGuestAttributes(Context& ctx, const Call& call, json& out) {
  json node;
  CLOUD_TRY(LoadNode(ctx, call, node));
  const json& b = call.body.is_object() ? call.body : json::object();
  const json path = b.value("queryPath", json(""));
  const json ids = b.value("workerIds", json::array());
  if (!path.is_string() || !ids.is_array()) {
    return InvalidArgumentError("queryPath must be a string and workerIds a list of strings");
  }
  const int64_t hosts = node["_sim"]["hosts"];
  std::vector<int64_t> workers;
  for (const json& id : ids) {
    int64_t w = -1;
    if (id.is_string()) {
      try {
        size_t used = 0;
        w = std::stoll(id.get<std::string>(), &used);
        if (used != id.get<std::string>().size()) w = -1;
      } catch (const std::exception&) {
        w = -1;
      }
    }
    if (w < 0 || w >= hosts) {
      return InvalidArgumentError("workerIds: " + id.dump() + " is not a worker of " + call.name +
                                  " (0 to " + std::to_string(hosts - 1) + ")");
    }
    workers.push_back(w);
  }
  if (workers.empty()) {
    for (int64_t w = 0; w < hosts; ++w) workers.push_back(w);
  }
  out = {{"guestAttributes", json::array()}};
  for (int64_t w : workers) {
    json items = json::array();
    for (json& e : GuestEntries(node, w)) {
      if (UnderPath(e, path)) items.push_back(std::move(e));
    }
    out["guestAttributes"].push_back({{"queryPath", path}, {"queryValue", {{"items", items}}}});
  }
  return {};
}

ApiError SimulatePreemption(Context& ctx, const Call& call, json& out) {
  json node;
  CLOUD_TRY(LoadNode(ctx, call, node));
  if (!node["_sim"].value("spot", false)) {
    return FailedPreconditionError("only spot and preemptible nodes are preempted: " + call.name);
  }
  CLOUD_TRY(RequireState(node, {"READY", "CREATING", "STARTING"}, "preempt"));
  CLOUD_TRY(PreemptNode(ctx, node));
  out = Public(node);
  return {};
}

ApiError SimulateMaintenance(Context& ctx, const Call& call, json& out) {
  json node;
  CLOUD_TRY(LoadNode(ctx, call, node));
  CLOUD_TRY(RequireState(node, {"READY"}, "start maintenance on"));
  CLOUD_TRY(ScheduleMaintenance(ctx, node, ctx.now, "UNSCHEDULED"));
  out = Public(node);
  return {};
}

ApiError ReportJob(Context& ctx, const Call& call, json& out) {
  json node;
  CLOUD_TRY(LoadNode(ctx, call, node));
  CLOUD_TRY(RequireState(node, {"READY"}, "run jobs on"));
  const json& b = call.body;
  if (!b.is_object() || !b.value("steps", json()).is_number_integer() ||
      !b.value("stepSeconds", json()).is_number() ||
      !b.value("tensorcoreUtilization", json()).is_number() ||
      !b.value("running", json()).is_boolean()) {
    return InvalidArgumentError(
        "a job report needs steps (integer), stepSeconds, tensorcoreUtilization (numbers) and "
        "running (boolean)");
  }
  if (b["running"].get<bool>()) {
    node["_sim"]["job"] = {{"steps", b["steps"]},
                           {"stepSeconds", b["stepSeconds"]},
                           {"tensorcoreUtilization", b["tensorcoreUtilization"]}};
  } else {
    node["_sim"].erase("job");
  }
  CLOUD_TRY(ctx.Save("node", node));
  out = json::object();
  return {};
}

}  // namespace tpusim::cloud
