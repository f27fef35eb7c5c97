// Output formats of `tpusim cloud tpus`: gcloud's table, json and yaml.
#include <fmt/format.h>

#include <functional>
#include <map>
#include <regex>

#include "tpusim/cloud/client.h"

namespace tpusim::cloud {
namespace {

using json = nlohmann::json;

struct Column {
  const char* title;
  std::function<std::string(const json&)> value;
};

std::string Last(const json& v) {
  if (!v.is_string()) return "";
  const std::string s = v;
  return s.substr(s.rfind('/') + 1);
}

// The zone segment of "projects/p/locations/ZONE/...".
std::string ZoneOfName(const json& item) {
  const std::string name = item.value("name", "");
  size_t begin = 0;
  for (int i = 0; i < 3 && begin != std::string::npos; ++i) begin = name.find('/', begin + 1);
  if (begin == std::string::npos) return "";
  return name.substr(begin + 1, name.find('/', begin + 1) - begin - 1);
}

std::string Field(const json& item, const char* key) {
  const json v = item.value(key, json());
  return v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
}

const std::map<std::string, std::vector<Column>>& Columns() {
  static const std::map<std::string, std::vector<Column>> columns = {
      {"nodes",
       {{"NAME", [](const json& n) { return Last(n["name"]); }},
        {"ZONE", ZoneOfName},
        {"ACCELERATOR_TYPE", [](const json& n) { return Field(n, "acceleratorType"); }},
        {"TOPOLOGY",
         [](const json& n) {
           return Field(n.value("acceleratorConfig", json::object()), "topology");
         }},
        {"NETWORK",
         [](const json& n) { return Field(n.value("networkConfig", json::object()), "network"); }},
        {"STATUS", [](const json& n) { return Field(n, "state"); }}}},
      {"queuedResources",
       {{"NAME", [](const json& q) { return Last(q["name"]); }},
        {"ZONE", ZoneOfName},
        {"NODE_COUNT",
         [](const json& q) {
           int64_t n = 0;
           for (const json& s : q["tpu"]["nodeSpec"]) {
             n += s.contains("multisliceParams") ? s["multisliceParams"].value("nodeCount", 0) : 1;
           }
           return std::to_string(n);
         }},
        {"ACCELERATOR_TYPE",
         [](const json& q) {
           return Field(q["tpu"]["nodeSpec"][0].value("node", json::object()), "acceleratorType");
         }},
        {"STATE", [](const json& q) { return Field(q["state"], "state"); }}}},
      {"operations",
       {{"ID", [](const json& o) { return Last(o["name"]); }},
        {"VERB", [](const json& o) { return Field(o["metadata"], "verb"); }},
        {"TARGET", [](const json& o) { return Last(o["metadata"]["target"]); }},
        {"DONE",
         [](const json& o) { return std::string(o.value("done", false) ? "True" : "False"); }}}},
      {"acceleratorTypes", {{"ACCELERATOR_TYPE", [](const json& t) { return Field(t, "type"); }}}},
      {"runtimeVersions", {{"VERSION", [](const json& v) { return Field(v, "version"); }}}},
  };
  return columns;
}

std::string Table(const json& items, const std::vector<Column>& columns) {
  std::vector<std::vector<std::string>> rows(1);
  for (const Column& c : columns) rows[0].push_back(c.title);
  for (const json& item : items) {
    rows.emplace_back();
    for (const Column& c : columns) rows.back().push_back(c.value(item));
  }
  std::vector<size_t> width(columns.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], width[i]);
    }
    out += line + "\n";
  }
  return out;
}

// A string YAML reads back as the same string without quotes.
bool PlainScalar(const std::string& s) {
  static const std::regex plain(R"([A-Za-z_/][-A-Za-z0-9_./]*([ ][-A-Za-z0-9_./]+)*)");
  static const std::regex special(
      "(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|"
      "null|Null|NULL|~)");
  return std::regex_match(s, plain) && !std::regex_match(s, special);
}

std::string Scalar(const json& v) {
  if (v.is_string()) {
    const std::string s = v;
    return PlainScalar(s) ? s : json(s).dump();  // JSON strings are YAML double-quoted strings
  }
  return v.dump();
}

void Yaml(const json& v, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string key = PlainScalar(it.key()) ? it.key() : json(it.key()).dump();
      const json& child = *it;
      if (child.is_structured() && !child.empty()) {
        out += pad + key + ":\n";
        Yaml(child, child.is_array() ? indent : indent + 2, out);
      } else {
        out += pad + key + ": " + (child.is_structured() ? child.dump() : Scalar(child)) + "\n";
      }
    }
  } else if (v.is_array()) {
    for (const json& child : v) {
      if (child.is_structured() && !child.empty()) {
        std::string nested;
        Yaml(child, indent + 2, nested);
        out += pad + "- " + nested.substr(indent + 2);
      } else {
        out += pad + "- " + (child.is_structured() ? child.dump() : Scalar(child)) + "\n";
      }
    }
  } else {
    out += pad + Scalar(v) + "\n";
  }
}

}  // namespace

std::string ToYaml(const json& value) {
  std::string out;
  Yaml(value, 0, out);
  return out;
}

StatusOr<std::string> FormatValue(const json& value, const std::string& format,
                                  const std::string& collection) {
  const bool list = value.is_object() && value.contains(collection) && value[collection].is_array();
  const json& items = list ? value[collection] : value;
  if (format == "json") return items.dump(2) + "\n";
  if (format == "yaml") {
    if (!list) return ToYaml(items);
    std::string out;
    for (const json& item : items) out += "---\n" + ToYaml(item);
    return out;
  }
  if (format == "table") {
    auto it = Columns().find(collection);
    if (it == Columns().end()) return InvalidArgument("no table format for " + collection);
    return Table(list ? items : json::array({items}), it->second);
  }
  return InvalidArgument("unknown --format '" + format + "' (json, yaml or table)");
}

}  // namespace tpusim::cloud
