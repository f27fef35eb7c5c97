#include "tpusim/cloud/service.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cloud/api.h"
#include "tpusim/cloud/client.h"
#include "tpusim/cloud/metrics.h"

namespace tpusim::cloud {
namespace {

using json = nlohmann::json;

constexpr const char* kWorld = R"(
seed = 3
start = 2026-01-01T00:00:00Z
[durations]
create = 10
delete = 5
stop = 5
start = 5
[zones.z1]
v4 = 64
[maintenance]
notice = 0
duration = 100
)";

const std::string kNodes = "/v2/projects/p/locations/z1/nodes";
const std::string kQueued = "/v2/projects/p/locations/z1/queuedResources";

json NodeBody(const std::string& type, bool spot = false) {
  json b = {{"acceleratorType", type}, {"runtimeVersion", "tpu-ubuntu2204-base"}};
  if (spot) b["schedulingConfig"]["spot"] = true;
  return b;
}

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(":memory:", kWorld); }

  void Open(const std::string& db, const std::string& world_text) {
    service_.reset();
    auto world = ParseWorldConfig(world_text, "world.toml");
    ASSERT_TRUE(world.ok()) << world.status().message();
    auto s = Service::Open(db, *world, [this] { return clock_; });
    ASSERT_TRUE(s.ok()) << s.status().message();
    service_ = std::move(*s);
  }

  // Calls the API; returns the body and sets `status_` to the HTTP status.
  json Call(const std::string& method, const std::string& path, const json& body = nullptr,
            std::map<std::string, std::string> query = {}) {
    ApiResponse r =
        service_->Handle({method, path, std::move(query), body.is_null() ? "" : body.dump()});
    status_ = r.http_status;
    return json::parse(r.body);
  }

  json CreateNode(const std::string& id, const std::string& type, bool spot = false) {
    return Call("POST", kNodes, NodeBody(type, spot), {{"nodeId", id}});
  }

  json QueueNode(const std::string& id, const std::string& node, const std::string& type,
                 json extra = json::object()) {
    json body = {{"tpu",
                  {{"nodeSpec",
                    {{{"parent", "projects/p/locations/z1"},
                      {"nodeId", node},
                      {"node", NodeBody(type)}}}}}}};
    body.update(extra);
    return Call("POST", kQueued, body, {{"queuedResourceId", id}});
  }

  std::string State(const std::string& node) { return Call("GET", kNodes + "/" + node)["state"]; }
  std::string QueueState(const std::string& id) {
    return Call("GET", kQueued + "/" + id)["state"]["state"];
  }

  // Moves the clock on and ticks the world.
  void Advance(double seconds) {
    clock_ += seconds;
    ASSERT_TRUE(service_->Tick().ok());
  }

  double clock_ = 1000;
  int status_ = 0;
  std::unique_ptr<Service> service_;
};

TEST_F(ServiceTest, CreateIsALongRunningOperationThatEndsReady) {
  json op = CreateNode("n1", "v4-32");
  ASSERT_EQ(status_, 200) << op.dump();
  EXPECT_FALSE(op["done"].get<bool>());
  EXPECT_EQ(op["metadata"]["verb"], "create");
  EXPECT_EQ(State("n1"), "CREATING");
  EXPECT_EQ(Call("GET", kNodes + "/n1")["createTime"], "2026-01-01T00:00:00.000Z");
  Advance(5);
  EXPECT_EQ(State("n1"), "CREATING");
  Advance(6);
  json node = Call("GET", kNodes + "/n1");
  EXPECT_EQ(node["state"], "READY");
  EXPECT_EQ(node["health"], "HEALTHY");
  EXPECT_EQ(node["name"], "projects/p/locations/z1/nodes/n1");
  EXPECT_EQ(node["acceleratorConfig"], json({{"type", "V4"}, {"topology", "2x2x4"}}));
  EXPECT_EQ(node["networkEndpoints"].size(), 4u);  // v4-32: 16 chips on 4 hosts
  EXPECT_FALSE(node.contains("_sim"));
  json done = Call("GET", "/v2/" + op["name"].get<std::string>());
  EXPECT_TRUE(done["done"].get<bool>());
  EXPECT_EQ(done["response"]["state"], "READY");
}

TEST_F(ServiceTest, ErrorsUseGooglesFormat) {
  CreateNode("n1", "v4-8");
  json again = CreateNode("n1", "v4-8");
  EXPECT_EQ(status_, 409);
  EXPECT_EQ(again["error"]["status"], "ALREADY_EXISTS");
  EXPECT_EQ(again["error"]["code"], 409);
  json missing = Call("GET", kNodes + "/nope");
  EXPECT_EQ(status_, 404);
  EXPECT_EQ(missing["error"]["status"], "NOT_FOUND");
  Call("GET", "/v2/projects/p/locations/mars/nodes");
  EXPECT_EQ(status_, 404);
  Call("GET", "/v2/projects/p/locations/z1/nodes/../../x");
  EXPECT_EQ(status_, 404);
  Call("POST", kNodes, NodeBody("v4-33"), {{"nodeId", "bad"}});
  EXPECT_EQ(status_, 400);
  Call("POST", kNodes, NodeBody("v4-8"), {{"nodeId", "Bad_Id"}});
  EXPECT_EQ(status_, 400);
  ApiResponse r = service_->Handle({"POST", kNodes, {{"nodeId", "j"}}, "{not json"});
  EXPECT_EQ(r.http_status, 400);
  json unknown =
      Call("POST", kNodes, {{"acceleratorType", "v4-8"}, {"colour", "red"}}, {{"nodeId", "u"}});
  EXPECT_EQ(status_, 400);
  EXPECT_NE(unknown["error"]["message"].get<std::string>().find("colour"), std::string::npos);
  Call("POST", kNodes, {{"acceleratorType", 8}, {"runtimeVersion", "tpu-ubuntu2204-base"}},
       {{"nodeId", "t"}});
  EXPECT_EQ(status_, 400);
  Call("POST", kNodes,
       {{"acceleratorType", "v4-8"},
        {"runtimeVersion", "tpu-ubuntu2204-base"},
        {"labels", {{"a", 1}}}},
       {{"nodeId", "l"}});
  EXPECT_EQ(status_, 400);
  // Nothing half-made by the refused calls.
  EXPECT_EQ(Call("GET", kNodes)["nodes"].size(), 1u);
}

TEST_F(ServiceTest, QuotaIsResourceExhausted) {
  Open(":memory:", std::string(kWorld) + "[quota]\nv4 = 16\n[quota.projects.big]\nv4 = 64\n");
  CreateNode("a", "v4-32");
  EXPECT_EQ(status_, 200);
  json over = CreateNode("b", "v4-8");
  EXPECT_EQ(status_, 429);
  EXPECT_EQ(over["error"]["status"], "RESOURCE_EXHAUSTED");
  Call("POST", "/v2/projects/big/locations/z1/nodes", NodeBody("v4-64"), {{"nodeId", "c"}});
  EXPECT_EQ(status_, 200);
}

TEST_F(ServiceTest, NoCapacityFailsTheOperationAndMakesNoNode) {
  CreateNode("a", "v4-128");  // all 64 chips
  json op = CreateNode("b", "v4-8");
  ASSERT_EQ(status_, 200);
  EXPECT_TRUE(op["done"].get<bool>());
  EXPECT_EQ(op["error"]["code"], 8);
  Call("GET", kNodes + "/b");
  EXPECT_EQ(status_, 404);
}

TEST_F(ServiceTest, ListsPageInCreationOrder) {
  for (int i = 0; i < 5; ++i) CreateNode("n" + std::to_string(i), "v4-8");
  std::vector<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    std::map<std::string, std::string> q = {{"pageSize", "2"}};
    if (!token.empty()) q["pageToken"] = token;
    json page = Call("GET", kNodes, nullptr, q);
    ASSERT_EQ(status_, 200);
    EXPECT_LE(page["nodes"].size(), 2u);
    for (const json& n : page["nodes"]) seen.push_back(n["name"]);
    token = page.value("nextPageToken", "");
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0], "projects/p/locations/z1/nodes/n0");
  EXPECT_EQ(seen[4], "projects/p/locations/z1/nodes/n4");
  Call("GET", kNodes, nullptr, {{"pageToken", "garbage"}});
  EXPECT_EQ(status_, 400);
  Call("GET", kNodes, nullptr, {{"pageSize", "-1"}});
  EXPECT_EQ(status_, 400);
}

TEST_F(ServiceTest, StopStartAndDelete) {
  CreateNode("n", "v4-8");
  json op = Call("POST", kNodes + "/n:stop");
  EXPECT_EQ(status_, 400);  // still CREATING
  EXPECT_EQ(op["error"]["status"], "FAILED_PRECONDITION");
  Advance(10);
  Call("POST", kNodes + "/n:stop");
  EXPECT_EQ(State("n"), "STOPPING");
  Advance(5);
  EXPECT_EQ(State("n"), "STOPPED");
  Call("POST", kNodes + "/n:start");
  EXPECT_EQ(State("n"), "STARTING");
  Advance(5);
  EXPECT_EQ(State("n"), "READY");
  Call("DELETE", kNodes + "/n");
  EXPECT_EQ(State("n"), "DELETING");
  Advance(5);
  Call("GET", kNodes + "/n");
  EXPECT_EQ(status_, 404);
}

TEST_F(ServiceTest, SpotNodesCannotStop) {
  CreateNode("s", "v4-8", /*spot=*/true);
  Advance(10);
  json e = Call("POST", kNodes + "/s:stop");
  EXPECT_EQ(e["error"]["status"], "FAILED_PRECONDITION");
}

TEST_F(ServiceTest, PatchFollowsTheUpdateMask) {
  CreateNode("n", "v4-8");
  json op = Call("PATCH", kNodes + "/n", {{"labels", {{"team", "a"}}}, {"description", "x"}},
                 {{"updateMask", "labels"}});
  ASSERT_EQ(status_, 200) << op.dump();
  json node = Call("GET", kNodes + "/n");
  EXPECT_EQ(node["labels"]["team"], "a");
  EXPECT_FALSE(node.contains("description"));
  Call("PATCH", kNodes + "/n", {{"state", "READY"}}, {{"updateMask", "state"}});
  EXPECT_EQ(status_, 400);
  Call("PATCH", kNodes + "/n", {{"labels", {}}});
  EXPECT_EQ(status_, 400);
}

TEST_F(ServiceTest, QueueServesInOrder) {
  CreateNode("a", "v4-64");         // 32 of 64 chips
  QueueNode("big", "b", "v4-128");  // 64 chips: waits for a
  QueueNode("small", "s", "v4-8");  // fits now, but waits behind big
  Advance(1);
  EXPECT_EQ(QueueState("big"), "WAITING_FOR_RESOURCES");
  EXPECT_EQ(QueueState("small"), "WAITING_FOR_RESOURCES");
  Advance(10);
  Call("DELETE", kNodes + "/a");
  Advance(5);
  EXPECT_EQ(QueueState("big"), "PROVISIONING");
  EXPECT_EQ(State("b"), "CREATING");
  EXPECT_EQ(Call("GET", kNodes + "/b")["queuedResource"],
            "projects/p/locations/z1/queuedResources/big");
  Advance(10);
  EXPECT_EQ(QueueState("big"), "ACTIVE");
  EXPECT_EQ(QueueState("small"), "WAITING_FOR_RESOURCES");
  Call("DELETE", kQueued + "/big");
  EXPECT_EQ(status_, 400);  // it has a node
  Call("DELETE", kQueued + "/big", nullptr, {{"force", "true"}});
  ASSERT_EQ(status_, 200);
  Advance(5);
  Advance(1);
  Call("GET", kQueued + "/big");
  EXPECT_EQ(status_, 404);
  EXPECT_EQ(QueueState("small"), "PROVISIONING");
}

TEST_F(ServiceTest, OnDemandRequestsReclaimSpotCapacity) {
  CreateNode("spot", "v4-128", /*spot=*/true);
  Advance(10);
  QueueNode("g", "g", "v4-8", {{"guaranteed", json::object()}});
  Advance(1);
  EXPECT_EQ(State("spot"), "PREEMPTED");
  EXPECT_EQ(QueueState("g"), "PROVISIONING");
  auto stats = service_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->preemptions, 1);
  EXPECT_EQ(stats->served, 1);
  EXPECT_EQ(stats->served_wait_seconds, 1);
}

TEST_F(ServiceTest, QueuedResourcesExpire) {
  CreateNode("a", "v4-128");
  QueueNode("q", "n", "v4-8", {{"queueingPolicy", {{"validUntilDuration", "5s"}}}});
  Advance(4);
  EXPECT_EQ(QueueState("q"), "WAITING_FOR_RESOURCES");
  Advance(2);
  EXPECT_EQ(QueueState("q"), "FAILED");
  QueueNode("bad", "m", "v4-8", {{"queueingPolicy", {{"validUntilDuration", "soon"}}}});
  EXPECT_EQ(status_, 400);
}

TEST_F(ServiceTest, SpotPreemptionIsSeeded) {
  const std::string world = std::string(kWorld) + "[spot]\npreemptions_per_hour = 360\n";
  auto preempted_at = [&] {
    clock_ = 1000;
    Open(":memory:", world);
    CreateNode("s", "v4-8", /*spot=*/true);
    Advance(10);
    for (int t = 0; t < 1000; ++t) {
      Advance(1);
      if (State("s") == "PREEMPTED") return t;
    }
    return -1;
  };
  const int first = preempted_at();
  EXPECT_GE(first, 0);
  EXPECT_EQ(preempted_at(), first);  // same seed, same ticks: same moment
}

TEST_F(ServiceTest, MaintenanceWindowsOpenAndClose) {
  CreateNode("n", "v4-8");
  Advance(10);
  Call("POST", kNodes + "/n:simulateMaintenance");
  ASSERT_EQ(status_, 200);
  Advance(1);
  json node = Call("GET", kNodes + "/n");
  EXPECT_EQ(node["health"], "UNHEALTHY_MAINTENANCE");
  EXPECT_EQ(node["upcomingMaintenance"]["maintenanceStatus"], "ONGOING");
  Advance(100);
  node = Call("GET", kNodes + "/n");
  EXPECT_EQ(node["health"], "HEALTHY");
  EXPECT_FALSE(node.contains("upcomingMaintenance"));
}

TEST_F(ServiceTest, StateSurvivesReopening) {
  const std::string db =
      (std::filesystem::temp_directory_path() / ("tpusim_cloud_" + std::to_string(getpid())))
          .string();
  std::filesystem::remove(db);
  Open(db, kWorld);
  CreateNode("n", "v4-8");
  const std::string created = Call("GET", kNodes + "/n")["createTime"];
  clock_ += 3;
  Open(db, kWorld);  // a restart: the simulated clock goes on from where it was
  EXPECT_EQ(State("n"), "CREATING");
  Advance(10);
  EXPECT_EQ(State("n"), "READY");
  EXPECT_EQ(Call("GET", kNodes + "/n")["createTime"], created);
  service_.reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
}

TEST_F(ServiceTest, CatalogAndJobs) {
  json types = Call("GET", "/v2/projects/p/locations/z1/acceleratorTypes");
  ASSERT_EQ(status_, 200);
  EXPECT_FALSE(types["acceleratorTypes"].empty());
  for (const json& t : types["acceleratorTypes"]) {
    EXPECT_EQ(t["type"].get<std::string>().rfind("v4-", 0), 0u);
  }
  Call("GET", "/v2/projects/p/locations/z1/acceleratorTypes/v4-8");
  EXPECT_EQ(status_, 200);
  Call("GET", "/v2/projects/p/locations/z1/runtimeVersions/tpu-ubuntu2204-base");
  EXPECT_EQ(status_, 200);
  json locations = Call("GET", "/v2/projects/p/locations");
  EXPECT_EQ(locations["locations"][0]["locationId"], "z1");

  CreateNode("n", "v4-8");
  Advance(10);
  Call("POST", kNodes + "/n:reportJob",
       {{"steps", 3}, {"stepSeconds", 0.5}, {"tensorcoreUtilization", 0.25}, {"running", true}});
  ASSERT_EQ(status_, 200);
  auto stats = service_->Stats();
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->running_jobs.size(), 1u);
  EXPECT_EQ(stats->running_jobs[0].steps, 3);
  const std::string text = WorldMetricsText(*stats);
  EXPECT_NE(text.find("tpusim_nodes{state=\"READY\"} 1"), std::string::npos);
  EXPECT_NE(
      text.find("tpusim_job_tensorcore_utilization{node=\"projects/p/locations/z1/nodes/n\"} 0.25"),
      std::string::npos);
}

TEST(WorldConfigTest, RejectsWhatItDoesNotKnow) {
  auto unknown = ParseWorldConfig("[zones.a]\nv4 = 1\n[durations]\ncreat = 3\n", "w.toml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "w.toml:4:9: unknown key 'durations.creat'");
  auto generation = ParseWorldConfig("[zones.a]\nv9 = 1\n", "w.toml");
  ASSERT_FALSE(generation.ok());
  EXPECT_NE(generation.status().message().find("unknown TPU generation 'v9'"), std::string::npos);
  EXPECT_FALSE(ParseWorldConfig("speed = 2\n", "w.toml").ok());
  EXPECT_FALSE(ParseWorldConfig("[zones.a]\nv4 = -1\n", "w.toml").ok());
  EXPECT_FALSE(ParseWorldConfig("[zones.a\n", "w.toml").ok());
}

TEST(TimeTest, Rfc3339AndDurations) {
  EXPECT_EQ(Rfc3339(0.9996), "1970-01-01T00:00:01.000Z");  // rounds into the next second
  EXPECT_EQ(Rfc3339(1767225600.25), "2026-01-01T00:00:00.250Z");
  EXPECT_EQ(ParseTime("2026-01-01T00:00:00.250Z"), 1767225600.25);
  EXPECT_EQ(ParseTime("2026-13-01T00:00:00Z"), std::nullopt);
  EXPECT_EQ(ParseTime("yesterday"), std::nullopt);
  EXPECT_EQ(ParseDuration("1.5s"), 1.5);
  EXPECT_EQ(ParseDuration("90m"), std::nullopt);  // the API's form is seconds
  EXPECT_TRUE(ValidId("v4-node-1"));
  EXPECT_FALSE(ValidId("4node"));
  EXPECT_FALSE(ValidId("node-"));
  EXPECT_FALSE(ValidId(std::string(64, 'a')));
}

TEST(FormatTest, YamlQuotesWhatYamlWouldMisread) {
  json v = {{"a", "yes"}, {"b", "2x2x4"}, {"c", "plain text"}, {"d", {1, 2}}, {"e", "x: y"}};
  EXPECT_EQ(ToYaml(v), "a: \"yes\"\nb: \"2x2x4\"\nc: plain text\nd:\n- 1\n- 2\ne: \"x: y\"\n");
  auto table = FormatValue({{"runtimeVersions", {{{"version", "v1"}}, {{"version", "v2"}}}}},
                           "table", "runtimeVersions");
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(*table, "VERSION\nv1\nv2\n");
  EXPECT_FALSE(FormatValue(json::object(), "xml", "nodes").ok());
}

TEST(MetricsTest, RouteLabelsDropIds) {
  EXPECT_EQ(RouteLabel("POST", "/v2/projects/p/locations/z/nodes/n1:stop"), "POST nodes:stop");
  EXPECT_EQ(RouteLabel("GET", "/v2/projects/p/locations/z/nodes"), "GET nodes");
  ApiMetrics m;
  m.Record("GET nodes", 200, 0.002);
  const std::string text = m.Text();
  EXPECT_NE(
      text.find("tpusim_api_request_duration_seconds_bucket{route=\"GET nodes\",le=\"0.0025\"} 1"),
      std::string::npos);
  EXPECT_NE(
      text.find("tpusim_api_request_duration_seconds_bucket{route=\"GET nodes\",le=\"0.001\"} 0"),
      std::string::npos);
}

}  // namespace
}  // namespace tpusim::cloud
