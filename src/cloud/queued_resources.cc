// projects.locations.queuedResources: requests for slices that wait in line
// for capacity (simulation.cc serves them).
#include "cloud/handlers.h"

namespace tpusim::cloud {
namespace {

// The node names a nodeSpec asks for: its nodeId, or nodeCount names from
// multisliceParams' prefix.
ApiError NodeNames(const Call& call, const json& spec, std::vector<std::string>& names) {
  if (spec.contains("multisliceParams")) {
    const json& m = spec["multisliceParams"];
    const json count = m.value("nodeCount", json());
    const json prefix = m.value("nodeIdPrefix", json());
    if (!count.is_number_integer() || count.get<int64_t>() < 1 || count.get<int64_t>() > 256 ||
        !prefix.is_string()) {
      return InvalidArgumentError(
          "multisliceParams needs a nodeCount (1 to 256) and a nodeIdPrefix");
    }
    for (int64_t i = 0; i < count.get<int64_t>(); ++i) {
      names.push_back(prefix.get<std::string>() + "-" + std::to_string(i));
    }
  } else {
    const json id = spec.value("nodeId", json());
    if (!id.is_string())
      return InvalidArgumentError("a nodeSpec needs a nodeId or multisliceParams");
    names.push_back(id);
  }
  for (std::string& n : names) {
    if (!ValidId(n)) return InvalidArgumentError("invalid node id '" + n + "'");
    n = call.parent + "/nodes/" + n;
  }
  return {};
}

ApiError ReadQueueingPolicy(Context& ctx, const json& body, json& sim) {
  sim["valid_after"] = ctx.now;
  sim["valid_until"] = nullptr;
  if (!body.contains("queueingPolicy")) return {};
  const json& p = body["queueingPolicy"];
  if (!p.is_object()) return InvalidArgumentError("queueingPolicy must be an object");
  for (auto it = p.begin(); it != p.end(); ++it) {
    const std::string& key = it.key();
    std::optional<double> t;
    if (it->is_string() && key.ends_with("Duration")) {
      if (auto d = ParseDuration(*it)) t = ctx.now + *d;
    } else if (it->is_string() && key.ends_with("Time")) {
      t = ParseTime(*it);
    } else if (key == "validInterval" && it->is_object()) {
      auto start = ParseTime(it->value("startTime", ""));
      auto end = ParseTime(it->value("endTime", ""));
      if (!start || !end) return InvalidArgumentError("validInterval needs startTime and endTime");
      sim["valid_after"] = *start;
      sim["valid_until"] = *end;
      continue;
    }
    if (!t) {
      return InvalidArgumentError("queueingPolicy." + key +
                                  ": expected validUntilDuration, validUntilTime, "
                                  "validAfterDuration, validAfterTime or validInterval");
    }
    sim[key.starts_with("validUntil") ? "valid_until" : "valid_after"] = *t;
  }
  return {};
}

ApiError ReadTier(const json& body, bool& spot) {
  int tiers = 0;
  for (const char* t : {"spot", "guaranteed", "bestEffort"}) {
    if (!body.contains(t)) continue;
    if (!body[t].is_object()) return InvalidArgumentError(std::string(t) + " must be an object");
    ++tiers;
  }
  if (tiers > 1) return InvalidArgumentError("choose one of spot, guaranteed and bestEffort");
  spot = body.contains("spot");
  return {};
}

// Checks the request's node specs and fills the queued resource's _sim with
// the nodes to make.
ApiError ReadSpecs(Context& ctx, const Call& call, bool spot, json& sim) {
  const json specs = call.body.value("tpu", json::object()).value("nodeSpec", json());
  if (!specs.is_array() || specs.empty())
    return InvalidArgumentError("tpu.nodeSpec must list the nodes to make");
  sim["nodes"] = json::array();
  for (const json& spec : specs) {
    if (!spec.is_object() || spec.value("parent", json()) != call.parent) {
      return InvalidArgumentError("every nodeSpec's parent must be " + call.parent);
    }
    json node = spec.value("node", json());
    if (spot && node.is_object()) node["schedulingConfig"]["spot"] = true;
    NodeRequest request;
    CLOUD_TRY(ReadNodeRequest(ctx, ZoneOf(call.parent), node, request));
    if (sim.contains("generation") && sim["generation"] != request.generation) {
      return InvalidArgumentError("every node of a queued resource must be of one generation");
    }
    std::vector<std::string> names;
    CLOUD_TRY(NodeNames(call, spec, names));
    for (const std::string& n : names) {
      std::optional<json> existing;
      CLOUD_TRY(ctx.Load(n, existing));
      if (existing) return AlreadyExistsError("Resource '" + n + "' already exists");
      sim["nodes"].push_back({{"name", n}, {"node", node}});
      sim["generation"] = request.generation;
      sim["chips"] = sim.value("chips", int64_t{0}) + request.chips;
    }
  }
  return {};
}

}  // namespace

ApiError CreateQueuedResource(Context& ctx, const Call& call, json& out) {
  auto it = call.query.find("queuedResourceId");
  if (it == call.query.end() || !ValidId(it->second)) {
    return InvalidArgumentError(
        "queuedResourceId must be given and match [a-z]([-a-z0-9]*[a-z0-9])?");
  }
  const std::string name = call.parent + "/queuedResources/" + it->second;
  std::optional<json> existing;
  CLOUD_TRY(ctx.Load(name, existing));
  if (existing) return AlreadyExistsError("Resource '" + name + "' already exists");
  if (!call.body.is_object())
    return InvalidArgumentError("the queued resource must be a JSON object");
  bool spot = false;
  CLOUD_TRY(ReadTier(call.body, spot));
  json sim = {{"project", ProjectOf(name)},
              {"zone", ZoneOf(name)},
              {"spot", spot},
              {"wait_since", ctx.now}};
  CLOUD_TRY(ReadSpecs(ctx, call, spot, sim));
  CLOUD_TRY(ReadQueueingPolicy(ctx, call.body, sim));
  // A request larger than the whole quota could never be served.
  if (auto quota = ctx.world.Quota(sim["project"], sim["generation"]);
      quota && sim["chips"].get<int64_t>() > *quota) {
    return ResourceExhaustedError("Quota exceeded: the queued resource asks for " +
                                  sim["chips"].dump() + " " + sim["generation"].get<std::string>() +
                                  " chips, the project's quota in this zone is " +
                                  std::to_string(*quota));
  }
  json qr = call.body;
  qr["name"] = name;
  qr["createTime"] = Rfc3339(ctx.now);
  qr["state"] = {{"state", "ACCEPTED"}, {"stateInitiator", "USER"}};
  qr["_sim"] = sim;
  CLOUD_TRY(ctx.Save("queuedResource", qr));
  return ctx.ImmediateOperation(call.parent, "create", name, Public(qr), out);
}

ApiError DeleteQueuedResource(Context& ctx, const Call& call, json& out) {
  std::optional<json> qr;
  CLOUD_TRY(ctx.Load(call.name, qr));
  if (!qr) return NotFoundError("Resource '" + call.name + "' was not found");
  const bool force = call.query.count("force") && call.query.at("force") == "true";
  std::vector<json> nodes;
  for (const json& n : (*qr)["_sim"]["nodes"]) {
    std::optional<json> node;
    CLOUD_TRY(ctx.Load(n["name"], node));
    if (node) nodes.push_back(std::move(*node));
  }
  if (!nodes.empty() && !force) {
    return FailedPreconditionError("queued resource " + call.name +
                                   " still has nodes: delete them first, or pass force=true");
  }
  json op;
  CLOUD_TRY(ctx.StartOperation(call.parent, "delete", call.name, op));
  for (json& node : nodes) {
    if (node["state"] == "DELETING") continue;
    node["state"] = "DELETING";
    node["_sim"]["pending"] = "delete";
    node["_sim"]["until"] = ctx.now + ctx.world.delete_seconds;
    node["_sim"].erase("op");
    CLOUD_TRY(ctx.Save("node", node));
  }
  (*qr)["state"] = {{"state", "DELETING"}, {"stateInitiator", "USER"}};
  (*qr)["_sim"]["op"] = op["name"];
  CLOUD_TRY(ctx.Save("queuedResource", *qr));
  out = Public(op);
  return {};
}

ApiError ResetQueuedResource(Context& ctx, const Call& call, json& out) {
  std::optional<json> qr;
  CLOUD_TRY(ctx.Load(call.name, qr));
  if (!qr) return NotFoundError("Resource '" + call.name + "' was not found");
  if ((*qr)["state"]["state"] != "SUSPENDED") {
    return FailedPreconditionError("only a SUSPENDED queued resource can be reset: " + call.name +
                                   " is " + (*qr)["state"]["state"].get<std::string>());
  }
  // Its preempted nodes hold no chips; they go, and the request queues again.
  for (const json& n : (*qr)["_sim"]["nodes"]) CLOUD_TRY(ctx.Remove(n["name"]));
  (*qr)["state"] = {{"state", "WAITING_FOR_RESOURCES"}, {"stateInitiator", "USER"}};
  (*qr)["_sim"]["wait_since"] = ctx.now;
  CLOUD_TRY(ctx.Save("queuedResource", *qr));
  return ctx.ImmediateOperation(call.parent, "reset", call.name, Public(*qr), out);
}

}  // namespace tpusim::cloud
