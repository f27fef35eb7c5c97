#include "report/html/page.h"

#include <gtest/gtest.h>

#include <string>

namespace tpusim::report::html {
namespace {

using nlohmann::json;

TEST(HtmlPage, EscapesMarkup) {
  EXPECT_EQ(Escape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(Escape("plain f.mlir:3:5"), "plain f.mlir:3:5");
}

TEST(HtmlPage, ScriptJsonCannotEndItsElement) {
  json data = {{"name", "</script><script>alert(1)</script><!--"}, {"n", 3}};
  std::string text = ScriptJson(data);
  EXPECT_EQ(text.find('<'), std::string::npos) << text;
  EXPECT_EQ(text.find('>'), std::string::npos) << text;
  EXPECT_EQ(json::parse(text), data);  // what the page's JSON.parse reads back
}

TEST(HtmlPage, ScriptJsonReplacesInvalidUtf8) {
  std::string text = ScriptJson(json{{"location", std::string("f\xff.mlir")}});
  EXPECT_EQ(json::parse(text)["location"], "f\xEF\xBF\xBD.mlir");
}

TEST(HtmlPage, ColumnsKeepEachValueOnce) {
  json rows = json::array({{{"a", 1}, {"b", "x"}}, {{"a", 2}}});
  EXPECT_EQ(Columns(rows), json::parse(R"({"columns":["a","b"],"rows":[[1,"x"],[2,null]]})"));
  EXPECT_EQ(Columns(json::array()), json::parse(R"({"columns":[],"rows":[]})"));
  EXPECT_EQ(Columns(json(3)), json::parse(R"({"columns":[],"rows":[]})"));
}

TEST(HtmlPage, IsSelfContained) {
  std::string page = Page("a <b> & c", json{{"x", 1}}, "drawPage();\n");
  EXPECT_NE(page.find("<title>a &lt;b&gt; &amp; c</title>"), std::string::npos);
  EXPECT_NE(page.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  // No URL of any kind: nothing the browser could fetch.
  EXPECT_EQ(page.find("http:"), std::string::npos);
  EXPECT_EQ(page.find("https:"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("href="), std::string::npos);
  EXPECT_NE(page.find("<script type=\"application/json\" id=\"data\">{\"x\":1}</script>"),
            std::string::npos);
  EXPECT_NE(page.find("drawPage();\n</script>"), std::string::npos);
}

TEST(HtmlPage, ScriptsHoldNoUrl) {
  for (std::string_view script : {RunPageJs(), PlanPageJs()}) {
    EXPECT_FALSE(script.empty());
    EXPECT_EQ(script.find("http"), std::string_view::npos);
    EXPECT_EQ(script.find("innerHTML"), std::string_view::npos);  // text goes in as text
    EXPECT_EQ(script.find("</script"), std::string_view::npos);
  }
}

}  // namespace
}  // namespace tpusim::report::html
