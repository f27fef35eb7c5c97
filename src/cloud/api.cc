#include "cloud/api.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <map>
#include <regex>

#include "tpusim/pod/slice.h"

namespace tpusim::cloud {

ApiError InvalidArgumentError(std::string m) { return {400, "INVALID_ARGUMENT", std::move(m)}; }
ApiError NotFoundError(std::string m) { return {404, "NOT_FOUND", std::move(m)}; }
ApiError AlreadyExistsError(std::string m) { return {409, "ALREADY_EXISTS", std::move(m)}; }
ApiError ResourceExhaustedError(std::string m) { return {429, "RESOURCE_EXHAUSTED", std::move(m)}; }
ApiError FailedPreconditionError(std::string m) {
  return {400, "FAILED_PRECONDITION", std::move(m)};
}
ApiError InternalError(const Status& st) { return {500, "INTERNAL", st.message()}; }

namespace {

const std::map<std::string, int>& RpcCodes() {
  static const std::map<std::string, int> codes = {
      {"CANCELLED", 1},          {"INVALID_ARGUMENT", 3},    {"DEADLINE_EXCEEDED", 4},
      {"NOT_FOUND", 5},          {"ALREADY_EXISTS", 6},      {"PERMISSION_DENIED", 7},
      {"RESOURCE_EXHAUSTED", 8}, {"FAILED_PRECONDITION", 9}, {"ABORTED", 10},
      {"UNIMPLEMENTED", 12},     {"INTERNAL", 13},           {"UNAVAILABLE", 14},
      {"UNAUTHENTICATED", 16}};
  return codes;
}

}  // namespace

int RpcCode(const std::string& status) {
  auto it = RpcCodes().find(status);
  return it == RpcCodes().end() ? 2 : it->second;
}

std::string RpcStatusName(int code) {
  for (const auto& [name, number] : RpcCodes()) {
    if (number == code) return name;
  }
  return "UNKNOWN";
}

json ErrorBody(const ApiError& e) {
  return {{"error", {{"code", e.http}, {"message", e.message}, {"status", e.status}}}};
}

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Rfc3339(double seconds) {
  const auto ms = static_cast<int64_t>(std::floor(seconds * 1000 + 0.5));
  const auto whole = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  const int millis = static_cast<int>(ms - static_cast<int64_t>(whole) * 1000);
  std::tm tm{};
  gmtime_r(&whole, &tm);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

std::optional<double> ParseDuration(const std::string& text) {
  static const std::regex re(R"(([0-9]+(\.[0-9]+)?)s)");
  if (!std::regex_match(text, re)) return std::nullopt;
  return std::stod(text);
}

std::optional<double> ParseTime(const std::string& text) {
  static const std::regex re(R"((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z)");
  std::smatch m;
  if (!std::regex_match(text, m, re)) return std::nullopt;
  std::tm tm{};
  tm.tm_year = std::stoi(m[1]) - 1900;
  tm.tm_mon = std::stoi(m[2]) - 1;
  tm.tm_mday = std::stoi(m[3]);
  tm.tm_hour = std::stoi(m[4]);
  tm.tm_min = std::stoi(m[5]);
  tm.tm_sec = std::stoi(m[6]);
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
      tm.tm_sec > 60) {
    return std::nullopt;
  }
  return static_cast<double>(timegm(&tm)) + (m[7].matched ? std::stod("0" + m[7].str()) : 0.0);
}

bool ValidId(const std::string& id) {
  static const std::regex re("[a-z]([-a-z0-9]*[a-z0-9])?");
  return id.size() <= 63 && std::regex_match(id, re);
}

std::string ParentOf(const std::string& name) {
  // projects/p/locations/z is the first four segments.
  size_t pos = 0;
  for (int i = 0; i < 4 && pos != std::string::npos; ++i) pos = name.find('/', pos + 1);
  return name.substr(0, pos);
}

namespace {
std::string Segment(const std::string& name, int index) {
  size_t begin = 0;
  for (int i = 0; i < index; ++i) begin = name.find('/', begin) + 1;
  return name.substr(begin, name.find('/', begin) - begin);
}
}  // namespace

std::string ProjectOf(const std::string& name) { return Segment(name, 1); }
std::string ZoneOf(const std::string& name) { return Segment(name, 3); }

json Public(json doc) {
  doc.erase("_sim");
  return doc;
}

ApiError Context::Load(const std::string& name, std::optional<json>& out) {
  auto doc = store.Get(name);
  if (!doc.ok()) return InternalError(doc.status());
  out.reset();
  if (*doc) out = json::parse((*doc)->body);
  return {};
}

namespace {

ApiError Parse(const StatusOr<std::vector<Document>>& docs, std::vector<json>& out) {
  if (!docs.ok()) return InternalError(docs.status());
  out.clear();
  for (const Document& d : *docs) out.push_back(json::parse(d.body));
  return {};
}

// When a node next changes by itself: a long-running change ends, or a
// maintenance window opens or closes.
std::optional<double> NodeDue(const json& node) {
  const json& sim = node["_sim"];
  std::optional<double> due;
  auto consider = [&due](double t) { due = due ? std::min(*due, t) : t; };
  if (sim.contains("pending")) consider(sim["until"].get<double>());
  if (sim.contains("maintenance")) {
    const bool pending = node["upcomingMaintenance"]["maintenanceStatus"] == "PENDING";
    consider(sim["maintenance"][pending ? "start" : "end"].get<double>());
  }
  return due;
}

Document Attributes(const std::string& kind, const json& doc) {
  Document d;
  const json& sim = doc["_sim"];
  if (kind == "node") {
    d.state = doc["state"];
    d.due = NodeDue(doc);
    d.pool = sim["zone"].get<std::string>() + "/" + sim["generation"].get<std::string>();
    d.project = sim["project"];
    d.chips = HoldsCapacity(d.state) ? sim["chips"].get<int64_t>() : 0;
  } else if (kind == "queuedResource") {
    d.state = doc["state"]["state"];
    // The few that wait or change are looked at on every tick.
    if (d.state != "ACTIVE" && d.state != "FAILED" && d.state != "SUSPENDED") d.due = 0;
  }
  return d;
}

}  // namespace

ApiError Context::LoadAll(const std::string& kind, const std::string& parent,
                          std::vector<json>& out) {
  return Parse(store.List(kind, parent), out);
}

ApiError Context::LoadDue(const std::string& kind, std::vector<json>& out) {
  return Parse(store.ListDue(kind, now), out);
}

ApiError Context::Save(const std::string& kind, json& doc) {
  json& sim = doc["_sim"];
  if (!sim.contains("seq")) {
    auto seq = store.NextSeq();
    if (!seq.ok()) return InternalError(seq.status());
    sim["seq"] = *seq;
  }
  Document d = Attributes(kind, doc);
  d.name = doc["name"];
  d.kind = kind;
  d.parent = ParentOf(d.name);
  d.seq = sim["seq"];
  d.body = Dump(doc);
  CLOUD_TRY_STATUS(store.Put(d));
  return {};
}

ApiError Context::Remove(const std::string& name) {
  CLOUD_TRY_STATUS(store.Delete(name));
  return {};
}

ApiError Context::Count(const std::string& key, int64_t delta) {
  auto v = store.GetValue(key, "0");
  if (!v.ok()) return InternalError(v.status());
  CLOUD_TRY_STATUS(store.SetValue(key, std::to_string(std::stoll(*v) + delta)));
  return {};
}

ApiError Context::StartOperation(const std::string& parent, const std::string& verb,
                                 const std::string& target, json& op) {
  auto seq = store.NextSeq();
  if (!seq.ok()) return InternalError(seq.status());
  op = {{"name", parent + "/operations/operation-" + std::to_string(*seq)},
        {"metadata",
         {{"@type", "type.googleapis.com/google.cloud.tpu.v2.OperationMetadata"},
          {"createTime", Rfc3339(now)},
          {"target", target},
          {"verb", verb},
          {"apiVersion", "v2"}}},
        {"done", false},
        {"_sim", {{"seq", *seq}}}};
  return Save("operation", op);
}

namespace {

// An operation's response is a google.protobuf.Any, which Google's JSON
// clients refuse without its "@type": the resource it returns, or Empty.
json TypedResponse(const json& response) {
  json typed = response.is_object() ? response : json::object();
  const std::string name = typed.value("name", "");
  const char* type = name.find("/queuedResources/") != std::string::npos
                         ? "type.googleapis.com/google.cloud.tpu.v2.QueuedResource"
                     : name.find("/nodes/") != std::string::npos
                         ? "type.googleapis.com/google.cloud.tpu.v2.Node"
                         : "type.googleapis.com/google.protobuf.Empty";
  typed["@type"] = type;
  return typed;
}

}  // namespace

ApiError Context::FinishOperation(const std::string& op_name, const json& response,
                                  const ApiError& error) {
  std::optional<json> op;
  CLOUD_TRY(Load(op_name, op));
  if (!op) return {};  // deleted by its owner meanwhile
  (*op)["done"] = true;
  (*op)["metadata"]["endTime"] = Rfc3339(now);
  if (error) {
    (*op)["error"] = {{"code", RpcCode(error.status)}, {"message", error.message}};
  } else {
    (*op)["response"] = TypedResponse(response);
  }
  return Save("operation", *op);
}

ApiError Context::ImmediateOperation(const std::string& parent, const std::string& verb,
                                     const std::string& target, const json& response, json& out,
                                     const ApiError& error) {
  json op;
  CLOUD_TRY(StartOperation(parent, verb, target, op));
  CLOUD_TRY(FinishOperation(op["name"], response, error));
  std::optional<json> done;
  CLOUD_TRY(Load(op["name"], done));
  out = Public(*done);
  return {};
}

bool HoldsCapacity(const std::string& state) {
  return state != "STOPPED" && state != "PREEMPTED" && state != "TERMINATED";
}

ApiError ChipsInUse(Context& ctx, const std::string& zone, const std::string& generation,
                    const std::string& project, int64_t& chips) {
  auto sum = ctx.store.SumChips(zone + "/" + generation, project);
  if (!sum.ok()) return InternalError(sum.status());
  chips = *sum;
  return {};
}

ApiError FreeChips(Context& ctx, const std::string& zone, const std::string& generation,
                   int64_t& free) {
  const Zone* z = ctx.world.FindZone(zone);
  auto it = z->chips.find(generation);
  const int64_t total = it == z->chips.end() ? 0 : it->second;
  int64_t used = 0;
  CLOUD_TRY(ChipsInUse(ctx, zone, generation, "", used));
  free = total - used;
  return {};
}

ApiError CheckQuota(Context& ctx, const std::string& project, const std::string& zone,
                    const std::string& generation, int64_t chips) {
  const std::optional<int64_t> quota = ctx.world.Quota(project, generation);
  if (!quota) return {};
  int64_t used = 0;
  CLOUD_TRY(ChipsInUse(ctx, zone, generation, project, used));
  if (used + chips > *quota) {
    return ResourceExhaustedError("Quota exceeded for project '" + project + "' in zone '" + zone +
                                  "': " + generation + " chips: limit " + std::to_string(*quota) +
                                  ", in use " + std::to_string(used) + ", requested " +
                                  std::to_string(chips));
  }
  return {};
}

namespace {

// The API's AcceleratorConfig.Type of a generation.
std::string ConfigType(const std::string& generation) {
  static const std::map<std::string, std::string> types = {
      {"v2", "V2"},   {"v3", "V3"},  {"v4", "V4"}, {"v5litepod", "V5LITE_POD"},
      {"v5p", "V5P"}, {"v6e", "V6E"}};
  auto it = types.find(generation);
  if (it != types.end()) return it->second;
  std::string upper = generation;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

}  // namespace

json AcceleratorConfigOf(const std::string& generation, const std::string& topology) {
  return {{"type", ConfigType(generation)}, {"topology", topology}};
}

namespace {

// An AcceleratorConfig.Type by name, or by number as Google's JSON mapping
// also allows (REST clients send {"type": 7}); empty if neither.
std::string ConfigTypeName(const json& type) {
  static const std::map<int64_t, std::string> kNumbers = {
      {2, "V2"}, {4, "V3"}, {7, "V4"}, {9, "V5LITE_POD"}, {10, "V5P"}, {11, "V6E"}};
  if (type.is_string()) return type;
  if (!type.is_number_integer()) return "";
  auto it = kNumbers.find(type.get<int64_t>());
  return it == kNumbers.end() ? "" : it->second;
}

// The accelerator type of an acceleratorConfig {type, topology}.
ApiError TypeOfConfig(const json& config, std::string& type) {
  if (!config.is_object() || ConfigTypeName(config.value("type", json())).empty() ||
      !config.value("topology", json()).is_string()) {
    return InvalidArgumentError(
        "acceleratorConfig needs a type (V2, V3, V4, V5LITE_POD, V5P, V6E, or its number) and a "
        "topology");
  }
  const std::string name = ConfigTypeName(config["type"]);
  for (const pod::Slice& s : pod::StandardSlices()) {
    if (ConfigType(GenerationOf(s.name)) != name) continue;
    auto slice = pod::MakeSlice(s.chip, config["topology"].get<std::string>());
    if (!slice.ok()) return InvalidArgumentError("acceleratorConfig: " + slice.status().message());
    type = pod::AcceleratorType(s.chip, slice->topology);
    return {};
  }
  return InvalidArgumentError("acceleratorConfig: unknown type " + name);
}

// Node fields a create request may set; output-only ones are ignored as the
// API ignores them, anything else is refused.
const std::vector<std::string> kInputFields = {"acceleratorType",
                                               "acceleratorConfig",
                                               "runtimeVersion",
                                               "description",
                                               "labels",
                                               "metadata",
                                               "tags",
                                               "schedulingConfig",
                                               "networkConfig",
                                               "networkConfigs",
                                               "serviceAccount",
                                               "dataDisks",
                                               "shieldedInstanceConfig",
                                               "cidrBlock"};
const std::vector<std::string> kOutputFields = {"name",
                                                "state",
                                                "health",
                                                "healthDescription",
                                                "networkEndpoints",
                                                "createTime",
                                                "id",
                                                "apiVersion",
                                                "symptoms",
                                                "queuedResource",
                                                "multisliceNode",
                                                "upcomingMaintenance"};

bool Contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

ApiError CheckStringMap(const json& body, const char* field) {
  if (!body.contains(field)) return {};
  const json& m = body[field];
  bool ok = m.is_object();
  for (auto it = m.begin(); ok && it != m.end(); ++it) ok = it->is_string();
  if (!ok) return InvalidArgumentError(std::string("'") + field + "' must map strings to strings");
  return {};
}

}  // namespace

ApiError ReadNodeRequest(Context& ctx, const std::string& zone, const json& body,
                         NodeRequest& out) {
  if (!body.is_object()) return InvalidArgumentError("the node must be a JSON object");
  out.body = json::object();
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (Contains(kInputFields, it.key())) {
      out.body[it.key()] = it.value();
    } else if (!Contains(kOutputFields, it.key())) {
      return InvalidArgumentError("Invalid JSON payload received. Unknown name \"" + it.key() +
                                  "\" at 'node': Cannot find field.");
    }
  }
  std::string type;
  if (body.contains("acceleratorType")) {
    if (!body["acceleratorType"].is_string())
      return InvalidArgumentError("acceleratorType must be a string");
    type = body["acceleratorType"];
  } else if (body.contains("acceleratorConfig")) {
    CLOUD_TRY(TypeOfConfig(body["acceleratorConfig"], type));
  } else {
    return InvalidArgumentError("the node needs an acceleratorType or an acceleratorConfig");
  }
  auto slice = pod::FindSlice(type);
  if (!slice.ok() || slice->num_slices != 1) {
    return InvalidArgumentError("unknown accelerator type '" + type + "'" +
                                (slice.ok() ? "" : ": " + slice.status().message()));
  }
  out.accelerator_type = pod::AcceleratorType(slice->chip, slice->topology);
  out.generation = GenerationOf(out.accelerator_type);
  out.topology = slice->topology.ToString();
  out.chips = slice->chips();
  out.hosts = slice->hosts();
  const Zone* z = ctx.world.FindZone(zone);
  if (!z->chips.count(out.generation)) {
    return InvalidArgumentError("accelerator type " + out.accelerator_type +
                                " is not offered in zone " + zone);
  }
  const json version = body.value("runtimeVersion", json());
  if (!version.is_string()) return InvalidArgumentError("the node needs a runtimeVersion");
  if (!Contains(ctx.world.runtime_versions, version)) {
    return InvalidArgumentError("unknown runtime version '" + version.get<std::string>() + "'");
  }
  CLOUD_TRY(CheckStringMap(body, "labels"));
  CLOUD_TRY(CheckStringMap(body, "metadata"));
  if (body.contains("schedulingConfig") && !body["schedulingConfig"].is_object()) {
    return InvalidArgumentError("schedulingConfig must be an object");
  }
  out.body["acceleratorType"] = out.accelerator_type;
  out.body["acceleratorConfig"] = AcceleratorConfigOf(out.generation, out.topology);
  return {};
}

ApiError CreateNodeDocument(Context& ctx, const std::string& name, const NodeRequest& request,
                            const std::string& queued_resource, const std::string& op_name,
                            json& node) {
  node = request.body;
  node["name"] = name;
  node["state"] = "CREATING";
  node["createTime"] = Rfc3339(ctx.now);
  node["apiVersion"] = "V2";
  if (!node.contains("networkConfig")) {
    node["networkConfig"] = {{"network", "default"}, {"subnetwork", "default"}};
  }
  if (!queued_resource.empty()) node["queuedResource"] = queued_resource;
  const json sched = node.value("schedulingConfig", json::object());
  const bool spot = sched.value("spot", false) || sched.value("preemptible", false);
  node["_sim"] = {{"project", ProjectOf(name)},
                  {"zone", ZoneOf(name)},
                  {"generation", request.generation},
                  {"chips", request.chips},
                  {"hosts", request.hosts},
                  {"spot", spot},
                  {"pending", "create"},
                  {"until", ctx.now + ctx.world.create_seconds},
                  {"op", op_name}};
  auto seq = ctx.store.NextSeq();
  if (!seq.ok()) return InternalError(seq.status());
  node["_sim"]["seq"] = *seq;
  node["id"] = std::to_string(*seq);
  return ctx.Save("node", node);
}

ApiError ScheduleMaintenance(Context& ctx, json& node, double start, const char* type) {
  const double end = start + ctx.world.maintenance_seconds;
  node["upcomingMaintenance"] = {{"type", type},
                                 {"canReschedule", false},
                                 {"windowStartTime", Rfc3339(start)},
                                 {"windowEndTime", Rfc3339(end)},
                                 {"maintenanceStatus", "PENDING"}};
  node["_sim"]["maintenance"] = {{"start", start}, {"end", end}};
  CLOUD_TRY(ctx.Count("maintenance_events"));
  return ctx.Save("node", node);
}

ApiError PreemptNode(Context& ctx, json& node) {
  node["state"] = "PREEMPTED";
  node.erase("health");
  node["_sim"].erase("pending");
  node["_sim"].erase("job");
  CLOUD_TRY(ctx.Save("node", node));
  CLOUD_TRY(ctx.Count("preemptions"));
  if (!node.contains("queuedResource")) return {};
  std::optional<json> qr;
  CLOUD_TRY(ctx.Load(node["queuedResource"], qr));
  if (!qr) return {};
  (*qr)["state"] = {{"state", "SUSPENDED"}, {"stateInitiator", "SERVICE"}};
  return ctx.Save("queuedResource", *qr);
}

}  // namespace tpusim::cloud
