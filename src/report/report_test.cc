#include "tpusim/report/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/timing/timing.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::report {
namespace {

// A 5-token sequence: padded to 8 rows of the (8, 128) tile, and 64 of 128
// lanes, so most of what it moves is padding.
constexpr const char* kProgram = R"(
func.func public @main(%x: tensor<5x64xf32>, %w: tensor<64x64xf32>) -> tensor<5x64xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<5x64xf32>, tensor<64x64xf32>) -> tensor<5x64xf32>
  %1 = stablehlo.add %0, %x : tensor<5x64xf32>
  return %1 : tensor<5x64xf32>
}
)";

timing::Timeline TimeProgram() {
  auto m = frontend::ParseStableHlo(kProgram, "p.mlir");
  EXPECT_TRUE(m.ok());
  EXPECT_TRUE(verify::VerifyModule(**m).ok());
  static std::unique_ptr<ir::Module> keep;  // events point into the module
  keep = std::move(m).value();
  auto t = timing::TimeStatically(*keep, "main", *hw::FindPreset("v5e"), {});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

TEST(ReportTest, SummaryAddsUpTheEvents) {
  timing::Timeline t = TimeProgram();
  Summary s = Summarize(t);
  ASSERT_EQ(s.ops.size(), 2u);
  EXPECT_DOUBLE_EQ(s.total_seconds, s.ops[0].seconds + s.ops[1].seconds);
  EXPECT_EQ(s.ops[0].name, "%0");
  EXPECT_EQ(s.ops[0].location, "p.mlir:3:3");
  EXPECT_EQ(s.flops, 2 * 5 * 64 * 64 + 5 * 64);
  EXPECT_GT(s.padding_bytes, 0);
  EXPECT_GT(s.mfu, 0);
  EXPECT_LT(s.mfu, 1);
}

TEST(ReportTest, TextNamesThePaddingWaste) {
  timing::Timeline t = TimeProgram();
  std::string text = TextReport(t, Summarize(t));
  EXPECT_NE(text.find("chip: v5e"), std::string::npos) << text;
  EXPECT_NE(text.find("most padding"), std::string::npos) << text;
  EXPECT_NE(text.find("p.mlir:3:3"), std::string::npos) << text;
  EXPECT_NE(text.find("MFU"), std::string::npos);
}

// A move to host memory runs beside the matmul: the ops' busy times add up
// to more than the step, so the text gives them as shares of their sum.
TEST(ReportTest, BusyTimeSharesAddUpWhenTransfersOverlap) {
  auto m = frontend::ParseStableHlo(R"(
func.func public @main(%x: tensor<1024x1024xf32>, %w: tensor<2048x2048xbf16>) -> (tensor<1024x1024xf32>, tensor<2048x2048xf32>) {
  %h = stablehlo.custom_call @annotate_device_placement(%x) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %d = stablehlo.dot_general %w, %w, contracting_dims = [1] x [0] : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xf32>
  return %h, %d : tensor<1024x1024xf32>, tensor<2048x2048xf32>
})",
                                    "o.mlir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto t = timing::TimeStatically(**m, "main", *hw::FindPreset("v5e"), {.overlap = true});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Summary s = Summarize(*t);
  double busy = 0;
  for (double seconds : s.bound_seconds) busy += seconds;
  ASSERT_GT(busy, s.total_seconds * 1.01);  // the transfer overlapped
  const std::string text = TextReport(*t, s);
  const size_t line = text.find("busy time by bound:");
  ASSERT_NE(line, std::string::npos) << text;
  double shares = 0;
  for (size_t at = text.find('(', line); at < text.find('\n', line); at = text.find('(', at + 1)) {
    shares += std::stod(text.substr(at + 1));
  }
  EXPECT_NEAR(shares, 100, 0.3) << text.substr(line, text.find('\n', line) - line);
}

TEST(ReportTest, JsonHasEveryDocumentedField) {
  timing::Timeline t = TimeProgram();
  auto doc = nlohmann::json::parse(JsonReport(t, Summarize(t)));
  for (const char* key : {"schema", "chip", "total_seconds", "flops", "achieved_flops_per_s",
                          "peak_flops_per_s", "mfu", "mxu_utilization", "hbm_bytes",
                          "hbm_bandwidth_utilization", "padding_bytes", "tiling_bytes",
                          "time_by_unit", "time_by_bound", "unpriced_ops", "notes", "ops"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  ASSERT_EQ(doc["ops"].size(), 2u);
  const auto& dot = doc["ops"][0];
  EXPECT_EQ(dot["op"], "stablehlo.dot_general");
  EXPECT_EQ(dot["location"], "p.mlir:3:3");
  EXPECT_GT(dot["mxu_cycles"].get<int64_t>(), 0);
  for (const char* key : {"name", "seconds", "flops", "bytes_read", "bytes_written", "unit",
                          "bound", "padding_bytes", "hbm_bytes", "count"}) {
    EXPECT_TRUE(dot.contains(key)) << key;
  }
}

TEST(ReportTest, TraceHasATrackPerUnit) {
  timing::Timeline t = TimeProgram();
  auto doc = nlohmann::json::parse(PerfettoTrace(t));
  std::set<std::string> tracks;
  int slices = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks.insert(e["args"]["name"]);
    if (e["ph"] == "X") ++slices;
  }
  EXPECT_EQ(tracks, (std::set<std::string>{"ops", "mxu", "vpu", "xlu", "hbm", "ici", "host"}));
  EXPECT_GE(slices, 2);
}

TEST(ReportTest, UnitsAPersonReads) {
  EXPECT_EQ(FormatSeconds(412e-9), "412 ns");
  EXPECT_EQ(FormatSeconds(3.2e-3), "3.20 ms");
  EXPECT_EQ(FormatSeconds(87.99e-6), "87.99 us");
  EXPECT_EQ(FormatBytes(1.5e9), "1.50 GB");
  EXPECT_EQ(FormatRate(819e9, "B"), "819.00 GB/s");
  EXPECT_EQ(FormatRate(197e12, "FLOP"), "197.00 TFLOP/s");
}

}  // namespace
}  // namespace tpusim::report
