#include "report/slice_section.h"

#include <gtest/gtest.h>

#include <map>

#include "testing/test_util.h"
#include "tpusim/pod/collective_cost.h"
#include "tpusim/report/report.h"
#include "tpusim/timing/timing.h"

namespace tpusim::report {
namespace {

// An all_reduce of 1 MiB per device on v5e-8 (a 2x4 open mesh): a box of
// both axes, so both axes' links carry bytes.
constexpr const char* kAllReduce = R"(
module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<512x512xf32>) -> tensor<512x512xf32> {
    %s = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    return %s : tensor<512x512xf32>
  }
})";

// The timeline names ops of the module, which must outlive it.
const ir::Module& Program() {
  static const auto* module = test::ParseVerified(kAllReduce).release();
  return *module;
}

timing::Timeline TimeAllReduce() {
  auto slice = pod::FindSlice("v5e-8");
  auto pricer = pod::CollectivePricer::Create(*slice, 1, 8);
  timing::StaticOptions options{.pod = &*pricer};
  auto t = timing::TimeStatically(Program(), "main", slice->chip, options);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *std::move(t);
}

TEST(SliceSection, LinkBytesAddUpToTheSlicesTraffic) {
  timing::Timeline t = TimeAllReduce();
  Summary s = Summarize(t);
  ASSERT_EQ(s.link_bytes.size(), static_cast<size_t>(t.slice()->LinkSlots()));
  double sum = 0;
  for (double b : s.link_bytes) sum += b;
  EXPECT_GT(s.ici_bytes, 0);
  EXPECT_NEAR(sum, s.ici_bytes, 1e-6 * s.ici_bytes);
  nlohmann::json j = SliceSectionJson(t, s);
  double listed = 0;
  for (const auto& link : j["links"]) {
    listed += link["bytes"].get<double>();
    EXPECT_TRUE(link["axis"] == "x" || link["axis"] == "y") << link;
    EXPECT_EQ(link["chip"].size(), 2u);
  }
  EXPECT_NEAR(listed, s.ici_bytes, 1e-6 * s.ici_bytes);
  EXPECT_NE(SliceSectionText(t, s).find("  ICI links        one way, busiest and mean per axis: x "),
            std::string::npos);
}

TEST(SliceSection, DevicesAlikeAreOneRowAndTheSlowestSetsTheSliceMfu) {
  timing::Timeline t = TimeAllReduce();
  timing::DeviceTotals fast{.seconds = 1.0, .exposed_communication_seconds = 0.25, .flops = 100};
  timing::DeviceTotals slow{.seconds = 2.0, .exposed_communication_seconds = 0.5, .flops = 100};
  t.set_devices({fast, fast, fast, slow});
  Summary s = Summarize(t);
  EXPECT_DOUBLE_EQ(s.slice_seconds, 2.0);
  EXPECT_DOUBLE_EQ(s.slice_mfu, 400 / (4 * s.peak_flops_per_s * 2.0));
  const std::string text = SliceSectionText(t, s);
  EXPECT_NE(text.find("  devices          4, the slowest 2.000 s;"), std::string::npos) << text;
  EXPECT_NE(text.find("    0-2       time 1.000 s, compute 750.00 ms, exposed communication "
                      "250.00 ms\n    3         time 2.000 s"),
            std::string::npos)
      << text;
  nlohmann::json j = SliceSectionJson(t, s);
  ASSERT_EQ(j["device_totals"].size(), 4u);
  EXPECT_EQ(j["device_totals"][3]["compute_seconds"], 1.5);
}

// Trace events by process name, each a map from track name to span names.
std::map<std::string, std::map<std::string, std::vector<std::string>>> TraceTracks(
    const timing::Timeline& t) {
  auto doc = nlohmann::json::parse(PerfettoTrace(t));
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> tracks;
  for (const auto& e : doc["traceEvents"]) {
    if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["name"] == "thread_name") tracks[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  std::map<std::string, std::map<std::string, std::vector<std::string>>> out;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    out[processes.at(e["pid"])][tracks.at({e["pid"], e["tid"]})].push_back(e["name"]);
  }
  return out;
}

TEST(SliceTrace, OneProcessStandsForDevicesAlike) {
  timing::Timeline t = TimeAllReduce();
  t.set_devices(std::vector<timing::DeviceTotals>(8, t.Totals()));
  auto tracks = TraceTracks(t);
  ASSERT_EQ(tracks.size(), 2u);
  const auto& device = tracks.at("devices 0-7 (v5e; one SPMD program stands for all)");
  EXPECT_EQ(device.at("collectives"), std::vector<std::string>{"stablehlo.all_reduce"});
  EXPECT_EQ(device.count("ops"), 0u);  // nothing but the collective
  const auto& links = tracks.at("slice v5litepod-8: links (busiest of each axis)");
  EXPECT_EQ(links.count("ici x"), 1u);
  EXPECT_EQ(links.count("ici y"), 1u);
}

TEST(SliceTrace, DevicesThatRanApartHaveAProcessEach) {
  timing::Timeline t = TimeAllReduce();
  std::vector<std::vector<timing::Span>> spans(3, t.Spans());
  spans[2].push_back({.name = "stablehlo.add", .start_s = 1e-3, .seconds = 1e-6});
  t.set_device_spans(spans);
  auto tracks = TraceTracks(t);
  EXPECT_EQ(tracks.at("device 0 (v5e)").at("collectives").size(), 1u);
  EXPECT_EQ(tracks.at("device 1").at("collectives"),
            std::vector<std::string>{"stablehlo.all_reduce"});
  EXPECT_EQ(tracks.at("device 1").count("ops"), 0u);
  EXPECT_EQ(tracks.at("device 2").at("ops"), std::vector<std::string>{"stablehlo.add"});
}

}  // namespace
}  // namespace tpusim::report
