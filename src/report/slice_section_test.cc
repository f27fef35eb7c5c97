#include "report/slice_section.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"
#include "tpusim/pod/collective_cost.h"
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

}  // namespace
}  // namespace tpusim::report
