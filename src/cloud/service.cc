#include "tpusim/cloud/service.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <regex>

#include "cloud/handlers.h"

namespace tpusim::cloud {
namespace {

const std::map<std::string, std::string> kKinds = {
    {"nodes", "node"}, {"queuedResources", "queuedResource"}, {"operations", "operation"}};

// The routes: "METHOD collection[/*][:verb]".
const std::map<std::string, Handler>& Routes() {
  static const std::map<std::string, Handler> routes = {
      {"GET nodes", ListResources},
      {"GET nodes/*", GetResource},
      {"POST nodes", CreateNode},
      {"DELETE nodes/*", DeleteNode},
      {"PATCH nodes/*", PatchNode},
      {"POST nodes/*:start", StartNode},
      {"POST nodes/*:stop", StopNode},
      {"POST nodes/*:getGuestAttributes", GetGuestAttributes},
      {"POST nodes/*:simulatePreemption", SimulatePreemption},
      {"POST nodes/*:simulateMaintenance", SimulateMaintenance},
      {"POST nodes/*:reportJob", ReportJob},
      {"GET queuedResources", ListResources},
      {"GET queuedResources/*", GetResource},
      {"POST queuedResources", CreateQueuedResource},
      {"DELETE queuedResources/*", DeleteQueuedResource},
      {"POST queuedResources/*:reset", ResetQueuedResource},
      {"GET operations", ListResources},
      {"GET operations/*", GetResource},
      {"DELETE operations/*", DeleteOperation},
      {"POST operations/*:cancel", CancelOperation},
      {"GET acceleratorTypes", ListAcceleratorTypes},
      {"GET acceleratorTypes/*", GetAcceleratorType},
      {"GET runtimeVersions", ListRuntimeVersions},
      {"GET runtimeVersions/*", GetRuntimeVersion},
  };
  return routes;
}

constexpr int64_t kMaxPageSize = 1000;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t begin = 0;
  for (size_t end; (end = s.find(sep, begin)) != std::string::npos; begin = end + 1) {
    out.push_back(s.substr(begin, end - begin));
  }
  out.push_back(s.substr(begin));
  return out;
}

bool SafeSegment(const std::string& s) {
  static const std::regex re("[A-Za-z0-9][-A-Za-z0-9._]{0,127}");
  return std::regex_match(s, re);
}

ApiError UrlNotFound(const std::string& path) {
  return NotFoundError("The requested URL " + path + " was not found on this server.");
}

json Location(const std::string& project, const Zone& z) {
  return {{"name", "projects/" + project + "/locations/" + z.name}, {"locationId", z.name}};
}

}  // namespace

ApiError GetResource(Context& ctx, const Call& call, json& out) {
  std::optional<json> doc;
  CLOUD_TRY(ctx.Load(call.name, doc));
  if (!doc) return NotFoundError("Resource '" + call.name + "' was not found");
  out = Public(std::move(*doc));
  return {};
}

ApiError ReadPaging(const Call& call, Paging& out) {
  out = Paging{kMaxPageSize, ""};
  try {
    if (auto it = call.query.find("pageSize"); it != call.query.end()) {
      out.size = std::stoll(it->second);
      if (out.size < 0) throw std::out_of_range("negative");
      if (out.size == 0 || out.size > kMaxPageSize) out.size = kMaxPageSize;
    }
  } catch (const std::exception&) {
    return InvalidArgumentError("pageSize must be a non-negative number");
  }
  if (auto it = call.query.find("pageToken"); it != call.query.end()) out.token = it->second;
  return {};
}

namespace {

// The number after `prefix` in a page token ("seq-42"), 0 for none.
ApiError TokenNumber(const std::string& token, const std::string& prefix, int64_t& n) {
  n = 0;
  if (token.empty()) return {};
  try {
    if (token.rfind(prefix, 0) != 0) throw std::invalid_argument("token");
    size_t used = 0;
    n = std::stoll(token.substr(prefix.size()), &used);
    if (n < 0 || used != token.size() - prefix.size()) throw std::invalid_argument("token");
  } catch (const std::exception&) {
    return InvalidArgumentError("pageToken must be one that a previous list returned");
  }
  return {};
}

}  // namespace

ApiError ListPage(std::vector<json> items, const Call& call, json& out) {
  Paging paging;
  CLOUD_TRY(ReadPaging(call, paging));
  int64_t first = 0;
  CLOUD_TRY(TokenNumber(paging.token, "item-", first));
  out = {{call.collection, json::array()}};
  const int64_t n = static_cast<int64_t>(items.size());
  first = std::min(first, n);
  const int64_t end = std::min(n, first + paging.size);  // no overflow: first <= n
  for (int64_t i = first; i < end; ++i) out[call.collection].push_back(std::move(items[i]));
  if (end < n) out["nextPageToken"] = "item-" + std::to_string(end);
  return {};
}

ApiError ListResources(Context& ctx, const Call& call, json& out) {
  Paging paging;
  CLOUD_TRY(ReadPaging(call, paging));
  int64_t after = 0;
  CLOUD_TRY(TokenNumber(paging.token, "seq-", after));
  const int64_t page_size = paging.size;
  auto docs = ctx.store.List(kKinds.at(call.collection), call.parent, after, page_size + 1);
  if (!docs.ok()) return InternalError(docs.status());
  out = {{call.collection, json::array()}};
  for (size_t i = 0; i < docs->size() && static_cast<int64_t>(i) < page_size; ++i) {
    out[call.collection].push_back(Public(json::parse((*docs)[i].body)));
  }
  if (static_cast<int64_t>(docs->size()) > page_size) {
    out["nextPageToken"] = "seq-" + std::to_string((*docs)[page_size - 1].seq);
  }
  return {};
}

ApiError DeleteOperation(Context& ctx, const Call& call, json& out) {
  std::optional<json> op;
  CLOUD_TRY(ctx.Load(call.name, op));
  if (!op) return NotFoundError("Resource '" + call.name + "' was not found");
  CLOUD_TRY(ctx.Remove(call.name));
  out = json::object();
  return {};
}

// google.longrunning lets a service refuse cancellation: the changes here
// run to their end, as a node's create does on Cloud TPU.
ApiError CancelOperation(Context& ctx, const Call& call, json& out) {
  std::optional<json> op;
  CLOUD_TRY(ctx.Load(call.name, op));
  if (!op) return NotFoundError("Resource '" + call.name + "' was not found");
  (void)out;
  return {501, "UNIMPLEMENTED", "operations cannot be cancelled: " + call.name};
}

struct Service::Impl {
  std::unique_ptr<Store> store;
  WorldConfig world;
  std::function<double()> real_seconds;
  double sim_base = 0, real_base = 0, last_tick = 0;
  std::mutex mu;

  double Now() const { return sim_base + world.speed * (real_seconds() - real_base); }

  // Finds the handler of a request and fills `call`.
  ApiError Route(const ApiRequest& r, Call& call, Handler& handler) const;
  ApiError Locations(const ApiRequest& r, const std::vector<std::string>& segs, json& out) const;
  // Runs `fn` in one transaction at `now`; the clock is saved with it.
  template <typename Fn>
  ApiError Transaction(double now, Fn fn);
};

ApiError Service::Impl::Locations(const ApiRequest& r, const std::vector<std::string>& segs,
                                  json& out) const {
  if (segs.size() == 4 && r.method == "POST" && segs[3].ends_with(":generateServiceIdentity")) {
    const std::string zone = segs[3].substr(0, segs[3].find(':'));
    if (world.FindZone(zone) == nullptr) return NotFoundError("Location '" + zone + "' was not found");
    // The project's Cloud TPU service agent, named as Google names it.
    const std::string number = std::to_string(std::hash<std::string>{}(segs[1]) % 1000000000000);
    out = {{"identity",
            {{"email", "service-" + number + "@gcp-sa-tpu.iam.gserviceaccount.com"},
             {"uid", number}}}};
    return {};
  }
  if (r.method != "GET") return UrlNotFound(r.path);
  if (segs.size() == 3) {
    std::vector<json> zones;
    for (const Zone& z : world.zones) zones.push_back(Location(segs[1], z));
    return ListPage(std::move(zones), Call{.collection = "locations", .query = r.query}, out);
  }
  const Zone* z = world.FindZone(segs[3]);
  if (z == nullptr) return NotFoundError("Location '" + segs[3] + "' was not found");
  out = Location(segs[1], *z);
  return {};
}

ApiError Service::Impl::Route(const ApiRequest& r, Call& call, Handler& handler) const {
  if (r.path.rfind("/v2/", 0) != 0) return UrlNotFound(r.path);
  const std::vector<std::string> segs = Split(r.path.substr(4), '/');
  if (segs.size() < 5 || segs.size() > 6 || segs[0] != "projects" || segs[2] != "locations") {
    return UrlNotFound(r.path);
  }
  for (size_t i = 0; i < 5; ++i) {
    if (!SafeSegment(segs[i])) return UrlNotFound(r.path);
  }
  if (world.FindZone(segs[3]) == nullptr) {
    return NotFoundError("Location 'projects/" + segs[1] + "/locations/" + segs[3] +
                         "' was not found");
  }
  call.collection = segs[4];
  call.parent = "projects/" + segs[1] + "/locations/" + segs[3];
  std::string key = r.method + " " + call.collection;
  if (segs.size() == 6) {
    const size_t colon = segs[5].find(':');
    call.id = segs[5].substr(0, colon);
    if (!SafeSegment(call.id)) return UrlNotFound(r.path);
    call.name = call.parent + "/" + call.collection + "/" + call.id;
    key += "/*" + (colon == std::string::npos ? "" : segs[5].substr(colon));
  }
  auto it = Routes().find(key);
  if (it == Routes().end()) return UrlNotFound(r.path);
  handler = it->second;
  call.query = r.query;
  if (!r.body.empty()) {
    call.body = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    if (call.body.is_discarded()) {
      return InvalidArgumentError("Invalid JSON payload received: the body is not JSON");
    }
  }
  return {};
}

template <typename Fn>
ApiError Service::Impl::Transaction(double now, Fn fn) {
  if (Status st = store->Begin(); !st.ok()) return InternalError(st);
  Context ctx{*store, world, now};
  const int64_t changes = store->TotalChanges();
  ApiError e;
  try {
    e = fn(ctx);
  } catch (const json::exception& ex) {
    // A field of the wrong JSON type in the request.
    e = InvalidArgumentError(std::string("Invalid JSON payload received: ") + ex.what());
  }
  if (!e && store->TotalChanges() != changes) {
    if (Status st = store->SetValue("sim_time", std::to_string(now)); !st.ok())
      e = InternalError(st);
  }
  if (e) {
    store->Rollback();
    return e;
  }
  if (Status st = store->Commit(); !st.ok()) {
    store->Rollback();
    return InternalError(st);
  }
  return {};
}

Service::Service(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Service::~Service() = default;

StatusOr<std::unique_ptr<Service>> Service::Open(const std::string& db_path, WorldConfig world,
                                                 std::function<double()> real_seconds) {
  auto impl = std::make_unique<Impl>();
  TPUSIM_ASSIGN_OR_RETURN(impl->store, Store::Open(db_path));
  if (!real_seconds) {
    real_seconds = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  impl->real_seconds = std::move(real_seconds);
  const double wall =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  TPUSIM_ASSIGN_OR_RETURN(std::string saved, impl->store->GetValue("sim_time", ""));
  impl->sim_base = !saved.empty() ? std::stod(saved) : world.start ? *world.start : wall;
  impl->real_base = impl->real_seconds();
  impl->last_tick = impl->sim_base;
  impl->world = std::move(world);
  return std::unique_ptr<Service>(new Service(std::move(impl)));
}

const WorldConfig& Service::world() const { return impl_->world; }

ApiResponse Service::Handle(const ApiRequest& request) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  json out;
  ApiError e;
  // Locations are also served under /v1/, where Google's clients' location
  // mixin asks for them.
  const bool v1 = request.path.rfind("/v1/", 0) == 0;
  const std::vector<std::string> segs = request.path.rfind("/v2/", 0) == 0 || v1
                                            ? Split(request.path.substr(4), '/')
                                            : std::vector<std::string>();
  if ((segs.size() == 3 || segs.size() == 4) && segs[0] == "projects" && SafeSegment(segs[1]) &&
      segs[2] == "locations") {
    e = impl_->Locations(request, segs, out);
  } else if (v1) {
    e = UrlNotFound(request.path);
  } else {
    Call call;
    Handler handler = nullptr;
    e = impl_->Route(request, call, handler);
    if (!e) {
      e = impl_->Transaction(impl_->Now(), [&](Context& ctx) { return handler(ctx, call, out); });
    }
  }
  if (e) return {e.http, Dump(ErrorBody(e)), e.status};
  return {200, Dump(out), ""};
}

Status Service::Tick() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const double now = impl_->Now();
  const double elapsed = std::max(0.0, now - impl_->last_tick);
  ApiError e = impl_->Transaction(now, [&](Context& ctx) { return AdvanceWorld(ctx, elapsed); });
  if (e) return Status(StatusCode::kInternal, "tick: " + e.message);
  impl_->last_tick = now;
  return Status::Ok();
}

StatusOr<WorldStats> Service::Stats() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  WorldStats s;
  s.sim_time = impl_->Now();
  Store& store = *impl_->store;
  TPUSIM_ASSIGN_OR_RETURN(s.nodes_by_state, store.CountByState("node"));
  TPUSIM_ASSIGN_OR_RETURN(auto nodes, store.List("node", ""));
  for (const Document& d : nodes) {
    if (d.state != "READY" || d.body.find("\"job\"") == std::string::npos) continue;
    const json n = json::parse(d.body);
    if (n["_sim"].contains("job")) {
      const json& job = n["_sim"]["job"];
      s.running_jobs.push_back(
          {n["name"], job["steps"], job["stepSeconds"], job["tensorcoreUtilization"]});
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(auto qrs, store.List("queuedResource", ""));
  for (const Document& d : qrs) {
    const json q = json::parse(d.body);
    const std::string state = q["state"]["state"];
    ++s.queued_resources_by_state[state];
    if (state == "ACCEPTED" || state == "WAITING_FOR_RESOURCES") {
      ++s.queue_depth;
      s.oldest_wait_seconds =
          std::max(s.oldest_wait_seconds, s.sim_time - q["_sim"]["wait_since"].get<double>());
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(std::string preemptions, store.GetValue("preemptions", "0"));
  TPUSIM_ASSIGN_OR_RETURN(std::string maintenance, store.GetValue("maintenance_events", "0"));
  TPUSIM_ASSIGN_OR_RETURN(std::string served, store.GetValue("queue_served", "0"));
  TPUSIM_ASSIGN_OR_RETURN(std::string waited, store.GetValue("queue_wait_ms", "0"));
  s.served = std::stoll(served);
  s.served_wait_seconds = std::stoll(waited) / 1000.0;
  s.preemptions = std::stoll(preemptions);
  s.maintenance_events = std::stoll(maintenance);
  return s;
}

}  // namespace tpusim::cloud
