// The frame of tpusim's HTML pages (docs/report.md): one self-contained file
// a browser draws offline. The page carries its data as JSON and a small
// script draws the charts from it; a Content-Security-Policy forbids every
// fetch, and the page holds no URL at all.
#ifndef TPUSIM_REPORT_HTML_PAGE_H_
#define TPUSIM_REPORT_HTML_PAGE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tpusim::report::html {

// `text` with &, <, >, " and ' as character references: safe as an
// element's text or a quoted attribute's value.
std::string Escape(std::string_view text);

// `data` as JSON that cannot end the <script> element holding it: '<', '>'
// and '&' (only ever inside strings) as \u escapes, which JSON.parse undoes.
std::string ScriptJson(const nlohmann::json& data);

// An array of objects of the same keys as {"columns": [keys], "rows":
// [[values]]}, the keys of the first object naming the columns: the page's
// op list without its keys repeated 10,000 times. Other values as they are.
nlohmann::json Columns(const nlohmann::json& objects);

// A whole page titled `title`: the shared style and script, `data` in
// <script type="application/json" id="data">, then `script`, which draws
// the page from it into <main id="page">.
std::string Page(std::string_view title, const nlohmann::json& data, std::string_view script);

// The page scripts, embedded from src/report/html/*.js.
std::string_view RunPageJs();
std::string_view PlanPageJs();

}  // namespace tpusim::report::html

#endif  // TPUSIM_REPORT_HTML_PAGE_H_
