#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/report/report.h"
#include "tpusim/timing/timing.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::report {
namespace {

using nlohmann::json;

// A matmul then an add, from a file whose name is markup.
constexpr const char* kProgram = R"(
func.func public @main(%x: tensor<8x128xf32>, %w: tensor<128x128xf32>) -> tensor<8x128xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
  %1 = stablehlo.add %0, %x : tensor<8x128xf32>
  return %1 : tensor<8x128xf32>
}
)";

struct Timed {
  std::unique_ptr<ir::Module> module;  // the events point into it
  std::optional<timing::Timeline> timeline;
};

Timed Time(const std::string& text, const std::string& file) {
  Timed t;
  auto m = frontend::ParseStableHlo(text, file);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return t;
  t.module = std::move(m).value();
  EXPECT_TRUE(verify::VerifyModule(*t.module).ok());
  auto tl = timing::TimeStatically(*t.module, "main", *hw::FindPreset("v5e"), {});
  EXPECT_TRUE(tl.ok()) << tl.status().ToString();
  if (tl.ok()) t.timeline = std::move(tl).value();
  return t;
}

// The page's data: the JSON in its <script id="data"> element.
json PageData(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"data\">";
  size_t begin = page.find(open);
  if (begin == std::string::npos) return nullptr;
  begin += open.size();
  return json::parse(page.substr(begin, page.find("</script>", begin) - begin));
}

TEST(HtmlReport, DrawsTheJsonReportsNumbers) {
  Timed t = Time(kProgram, "</script><img src=x onerror=alert(1)>.mlir");
  ASSERT_TRUE(t.timeline);
  Summary s = Summarize(*t.timeline);
  std::string page = HtmlReport(*t.timeline, s);
  // The hostile file name is data, never markup.
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("http:"), std::string::npos);
  EXPECT_EQ(page.find("https:"), std::string::npos);
  json data = PageData(page);
  json report = json::parse(JsonReport(*t.timeline, s));
  ASSERT_TRUE(data.contains("report"));
  EXPECT_EQ(data["report"]["ops"]["rows"].size(), s.ops.size());
  EXPECT_EQ(data["report"]["total_seconds"], report["total_seconds"]);
  EXPECT_EQ(data["report"]["time_by_unit"], report["time_by_unit"]);
  const json& columns = data["report"]["ops"]["columns"];
  const auto location = std::find(columns.begin(), columns.end(), "location") - columns.begin();
  EXPECT_EQ(data["report"]["ops"]["rows"][0][location], report["ops"][0]["location"]);
  // A span per op on the "ops" track, and each names its op.
  int on_ops_track = 0;
  for (const json& span : data["timeline"]["spans"]) {
    on_ops_track += span[0] == 0;
    EXPECT_GE(span[3].get<int>(), 0);
    EXPECT_LT(span[3].get<size_t>(), s.ops.size());
  }
  EXPECT_EQ(on_ops_track, 2);
}

// 10,000 ops stay within a few MB: the page's op list is columns, not
// objects.
TEST(HtmlReport, TenThousandOpsStaySmall) {
  std::string text = "func.func public @main(%v0: tensor<8x128xf32>) -> tensor<8x128xf32> {\n";
  constexpr int kOps = 10000;
  for (int i = 1; i <= kOps; ++i) {
    text += "  %v" + std::to_string(i) + " = stablehlo.add %v" + std::to_string(i - 1) + ", %v0" +
            " : tensor<8x128xf32>\n";
  }
  text += "  return %v" + std::to_string(kOps) + " : tensor<8x128xf32>\n}\n";
  Timed t = Time(text, "big.mlir");
  ASSERT_TRUE(t.timeline);
  Summary s = Summarize(*t.timeline);
  ASSERT_EQ(s.ops.size(), static_cast<size_t>(kOps));
  std::string page = HtmlReport(*t.timeline, s);
  EXPECT_LT(page.size(), size_t{5} << 20);
  EXPECT_EQ(PageData(page)["report"]["ops"]["rows"].size(), static_cast<size_t>(kOps));
}

}  // namespace
}  // namespace tpusim::report
