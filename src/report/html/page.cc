#include "report/html/page.h"

namespace tpusim::report::html {

// Embedded from page.css and common.js (CMakeLists.txt).
std::string_view PageCss();
std::string_view CommonJs();

namespace {

// No fetch of any kind: scripts and styles only inline, images only data.
constexpr std::string_view kPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    std::string_view ref = c == '&'    ? "&amp;"
                           : c == '<'  ? "&lt;"
                           : c == '>'  ? "&gt;"
                           : c == '"'  ? "&quot;"
                           : c == '\'' ? "&#39;"
                                       : "";
    out += ref.empty() ? std::string_view(&c, 1) : ref;
  }
  return out;
}

std::string ScriptJson(const nlohmann::json& data) {
  // Invalid UTF-8 in a name from a user's file becomes U+FFFD, not an error.
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    std::string_view escape = c == '<'   ? "\\u003c"
                              : c == '>' ? "\\u003e"
                              : c == '&' ? "\\u0026"
                                         : "";
    out += escape.empty() ? std::string_view(&c, 1) : escape;
  }
  return out;
}

nlohmann::json Columns(const nlohmann::json& objects) {
  nlohmann::json columns = nlohmann::json::array(), rows = nlohmann::json::array();
  if (!objects.is_array() || objects.empty() || !objects[0].is_object()) {
    return {{"columns", columns}, {"rows", rows}};
  }
  for (const auto& [key, value] : objects[0].items()) columns.push_back(key);
  for (const nlohmann::json& o : objects) {
    nlohmann::json row = nlohmann::json::array();
    for (const nlohmann::json& key : columns) {
      auto it = o.find(key.get<std::string>());
      row.push_back(it == o.end() ? nullptr : *it);
    }
    rows.push_back(std::move(row));
  }
  return {{"columns", std::move(columns)}, {"rows", std::move(rows)}};
}

std::string Page(std::string_view title, const nlohmann::json& data, std::string_view script) {
  const std::string t = Escape(title);
  std::string page;
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta http-equiv=\"Content-Security-Policy\" content=\"";
  page += kPolicy;
  page += "\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<title>" + t + "</title>\n<style>\n";
  page += PageCss();
  page += "</style>\n</head>\n<body>\n";
  // The script takes the SVG namespace from this element, so that the page
  // needs no URL.
  page += "<svg id=\"svg-ns\" width=\"0\" height=\"0\" aria-hidden=\"true\"></svg>\n";
  page += "<main id=\"page\"><h1>" + t + "</h1>\n";
  page += "<noscript><p>This page draws its charts with JavaScript.</p></noscript></main>\n";
  page += "<script type=\"application/json\" id=\"data\">";
  page += ScriptJson(data);
  page += "</script>\n<script>\n";
  page += CommonJs();
  page += script;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace tpusim::report::html
