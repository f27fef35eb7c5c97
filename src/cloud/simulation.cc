// The world's own changes: what becomes due as simulated time passes.
#include <cmath>
#include <set>

#include "cloud/handlers.h"

namespace tpusim::cloud {
namespace {

// A uniform draw in [0, 1) fixed by the seed, the node and the moment, so
// that a replay of the same ticks draws the same events.
double Uniform(uint64_t seed, int64_t node_seq, double now, uint64_t stream) {
  uint64_t x = seed ^ (static_cast<uint64_t>(node_seq) * 0x9e3779b97f4a7c15ULL) ^
               (static_cast<uint64_t>(std::llround(now * 1000)) * 0xbf58476d1ce4e5b9ULL) ^
               (stream << 56);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

// One endpoint per host of the slice, in a block of 1024 addresses per node.
json NetworkEndpoints(const json& node) {
  const int64_t id = node["_sim"]["seq"].get<int64_t>() % 16384;
  json endpoints = json::array();
  for (int64_t h = 0; h < node["_sim"]["hosts"].get<int64_t>(); ++h) {
    const int64_t ip = (id << 10) + h + 2;
    endpoints.push_back(
        {{"ipAddress", "10." + std::to_string((ip >> 16) & 255) + "." +
                           std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255)},
         {"port", 8470}});
  }
  return endpoints;
}

// Opens and closes maintenance windows: a host under maintenance is
// unhealthy and its job stops.
ApiError MaintenanceWindows(Context& ctx, json& node) {
  if (!node["_sim"].contains("maintenance")) return {};
  const json window = node["_sim"]["maintenance"];
  if (ctx.now >= window["end"].get<double>()) {
    node.erase("upcomingMaintenance");
    node["_sim"].erase("maintenance");
    if (node["state"] == "READY") node["health"] = "HEALTHY";
  } else if (ctx.now >= window["start"].get<double>() &&
             node["upcomingMaintenance"]["maintenanceStatus"] == "PENDING") {
    node["upcomingMaintenance"]["maintenanceStatus"] = "ONGOING";
    node["health"] = "UNHEALTHY_MAINTENANCE";
    node["_sim"].erase("job");
  } else {
    return {};
  }
  return ctx.Save("node", node);
}

ApiError FinishChange(Context& ctx, json& node) {
  json& sim = node["_sim"];
  const std::string pending = sim["pending"];
  const std::string op = sim.value("op", "");
  if (pending == "delete") {
    CLOUD_TRY(ctx.Remove(node["name"]));
    return op.empty() ? ApiError{} : ctx.FinishOperation(op, json::object());
  }
  node["state"] = pending == "stop" ? "STOPPED" : "READY";
  if (node["state"] == "READY") {
    node["health"] = "HEALTHY";
    node["networkEndpoints"] = NetworkEndpoints(node);
  } else {
    node.erase("health");
  }
  sim.erase("pending");
  sim.erase("until");
  sim.erase("op");
  CLOUD_TRY(ctx.Save("node", node));
  return op.empty() ? ApiError{} : ctx.FinishOperation(op, Public(node));
}

// Ends the long-running changes and maintenance windows that are due.
ApiError ScheduledChanges(Context& ctx) {
  std::vector<json> nodes;
  CLOUD_TRY(ctx.LoadDue("node", nodes));
  for (json& node : nodes) {
    const json& sim = node["_sim"];
    if (sim.contains("pending") && sim["until"].get<double>() <= ctx.now) {
      const bool deleted = sim["pending"] == "delete";
      CLOUD_TRY(FinishChange(ctx, node));
      if (deleted) continue;
    }
    CLOUD_TRY(MaintenanceWindows(ctx, node));
  }
  return {};
}

ApiError RandomEvents(Context& ctx, double elapsed) {
  if (elapsed <= 0 ||
      (ctx.world.spot_preemptions_per_hour == 0 && ctx.world.maintenance_per_day == 0)) {
    return {};
  }
  std::vector<json> nodes;
  CLOUD_TRY(ctx.LoadAll("node", "", nodes));
  const double p_preempt = 1 - std::exp(-ctx.world.spot_preemptions_per_hour * elapsed / 3600);
  const double p_maintain = 1 - std::exp(-ctx.world.maintenance_per_day * elapsed / 86400);
  for (json& node : nodes) {
    if (node["state"] != "READY") continue;
    const int64_t seq = node["_sim"]["seq"];
    if (node["_sim"].value("spot", false) && Uniform(ctx.world.seed, seq, ctx.now, 1) < p_preempt) {
      CLOUD_TRY(PreemptNode(ctx, node));
      continue;
    }
    if (!node["_sim"].contains("maintenance") &&
        Uniform(ctx.world.seed, seq, ctx.now, 2) < p_maintain) {
      CLOUD_TRY(ScheduleMaintenance(ctx, node, ctx.now + ctx.world.maintenance_notice_seconds,
                                    "SCHEDULED"));
    }
  }
  return {};
}

// Frees at least `chips` chips of spot capacity for an on-demand request,
// newest spot nodes first, as Cloud TPU reclaims spot capacity.
ApiError ReclaimSpot(Context& ctx, const std::string& zone, const std::string& generation,
                     int64_t chips) {
  std::vector<json> nodes;
  CLOUD_TRY(ctx.LoadAll("node", "", nodes));
  int64_t reclaimable = 0;
  for (const json& n : nodes) {
    const json& sim = n["_sim"];
    if (sim.value("spot", false) && sim["zone"] == zone && sim["generation"] == generation &&
        HoldsCapacity(n["state"]) && n["state"] != "DELETING") {
      reclaimable += sim["chips"].get<int64_t>();
    }
  }
  if (reclaimable < chips) return {};  // taking them would not be enough
  for (auto it = nodes.rbegin(); it != nodes.rend() && chips > 0; ++it) {
    json& n = *it;
    const json& sim = n["_sim"];
    if (!sim.value("spot", false) || sim["zone"] != zone || sim["generation"] != generation ||
        !HoldsCapacity(n["state"]) || n["state"] == "DELETING") {
      continue;
    }
    chips -= sim["chips"].get<int64_t>();
    CLOUD_TRY(PreemptNode(ctx, n));
  }
  return {};
}

ApiError Provision(Context& ctx, json& qr) {
  json& sim = qr["_sim"];
  for (const json& spec : sim["nodes"]) {
    NodeRequest request;
    json node;
    if (ApiError e = ReadNodeRequest(ctx, sim["zone"], spec["node"], request)) {
      qr["state"] = {
          {"state", "FAILED"},
          {"stateInitiator", "SERVICE"},
          {"failedData", {{"error", {{"code", RpcCode(e.status)}, {"message", e.message}}}}}};
      return ctx.Save("queuedResource", qr);
    }
    CLOUD_TRY(CreateNodeDocument(ctx, spec["name"], request, qr["name"], "", node));
  }
  qr["state"] = {{"state", "PROVISIONING"}, {"stateInitiator", "SERVICE"}};
  return ctx.Save("queuedResource", qr);
}

// Serves waiting queued resources in the order they came, per zone and
// generation: one that does not fit holds back those behind it.
ApiError ServeQueue(Context& ctx, std::vector<json>& waiting) {
  std::set<std::string> blocked;
  for (json& qr : waiting) {
    json& sim = qr["_sim"];
    if (sim["valid_after"].get<double>() > ctx.now) continue;
    const std::string zone = sim["zone"], generation = sim["generation"];
    if (blocked.count(zone + "/" + generation)) continue;
    const int64_t chips = sim["chips"];
    if (CheckQuota(ctx, sim["project"], zone, generation, chips)) continue;
    int64_t free = 0;
    CLOUD_TRY(FreeChips(ctx, zone, generation, free));
    if (free < chips && !sim.value("spot", false)) {
      CLOUD_TRY(ReclaimSpot(ctx, zone, generation, chips - free));
      CLOUD_TRY(FreeChips(ctx, zone, generation, free));
    }
    if (free < chips) {
      blocked.insert(zone + "/" + generation);
      continue;
    }
    CLOUD_TRY(ctx.Count("queue_served"));
    CLOUD_TRY(ctx.Count("queue_wait_ms",
                        std::llround((ctx.now - sim["wait_since"].get<double>()) * 1000)));
    CLOUD_TRY(Provision(ctx, qr));
  }
  return {};
}

ApiError NodesOf(Context& ctx, const json& qr, std::vector<json>& nodes) {
  nodes.clear();
  for (const json& n : qr["_sim"]["nodes"]) {
    std::optional<json> node;
    CLOUD_TRY(ctx.Load(n["name"], node));
    if (node) nodes.push_back(std::move(*node));
  }
  return {};
}

// Moves each queued resource along its states; returns those waiting.
ApiError QueuedResourceStates(Context& ctx, std::vector<json>& waiting) {
  std::vector<json> qrs;
  CLOUD_TRY(ctx.LoadDue("queuedResource", qrs));
  for (json& qr : qrs) {
    const std::string state = qr["state"]["state"];
    std::vector<json> nodes;
    CLOUD_TRY(NodesOf(ctx, qr, nodes));
    if (state == "DELETING" && nodes.empty()) {
      CLOUD_TRY(ctx.Remove(qr["name"]));
      CLOUD_TRY(ctx.FinishOperation(qr["_sim"]["op"], json::object()));
    } else if (state == "PROVISIONING" &&
               std::all_of(nodes.begin(), nodes.end(),
                           [](const json& n) { return n["state"] == "READY"; })) {
      qr["state"] = {{"state", "ACTIVE"}, {"stateInitiator", "SERVICE"}};
      CLOUD_TRY(ctx.Save("queuedResource", qr));
    } else if (state == "ACCEPTED" || state == "WAITING_FOR_RESOURCES") {
      const json& until = qr["_sim"]["valid_until"];
      if (!until.is_null() && ctx.now > until.get<double>()) {
        qr["state"] = {
            {"state", "FAILED"},
            {"stateInitiator", "SERVICE"},
            {"failedData",
             {{"error",
               {{"code", 4},
                {"message", "the queueing policy's validity ended before capacity was found"}}}}}};
        CLOUD_TRY(ctx.Save("queuedResource", qr));
      } else {
        if (state == "ACCEPTED") {
          qr["state"]["state"] = "WAITING_FOR_RESOURCES";
          CLOUD_TRY(ctx.Save("queuedResource", qr));
        }
        waiting.push_back(qr);
      }
    }
  }
  return {};
}

}  // namespace

ApiError AdvanceWorld(Context& ctx, double elapsed) {
  CLOUD_TRY(ScheduledChanges(ctx));
  CLOUD_TRY(RandomEvents(ctx, elapsed));
  std::vector<json> waiting;
  CLOUD_TRY(QueuedResourceStates(ctx, waiting));
  return ServeQueue(ctx, waiting);
}

}  // namespace tpusim::cloud
