// `tpusim cloud tpus ...`: gcloud's TPU commands over the emulated API. As
// gcloud does, changes wait for their operation unless --async, and report
// progress on stderr; results go to `out` in the chosen format.
#include <regex>

#include "tpusim/cloud/client.h"

namespace tpusim::cloud {
namespace {

using json = nlohmann::json;

Status Print(Client& c, const json& value, const std::string& collection,
             const std::string& default_format, std::FILE* out) {
  const std::string format = c.options().format.empty() ? default_format : c.options().format;
  TPUSIM_ASSIGN_OR_RETURN(std::string text, FormatValue(value, format, collection));
  std::fputs(text.c_str(), out);
  return Status::Ok();
}

// gcloud's durations: "30s", "90m", "6h", "2d".
StatusOr<std::string> ApiDuration(const std::string& flag, const std::string& text) {
  static const std::regex re(R"(([0-9]+)([smhd]))");
  std::smatch m;
  if (!std::regex_match(text, m, re)) {
    return InvalidArgument(flag + ": expected a duration like 30s, 90m, 6h or 2d, got '" + text +
                           "'");
  }
  const int64_t unit = m[2] == "s" ? 1 : m[2] == "m" ? 60 : m[2] == "h" ? 3600 : 86400;
  return std::to_string(std::stoll(m[1]) * unit) + "s";
}

StatusOr<json> NodeBody(const NodeFlags& f) {
  json node = {{"acceleratorType", f.accelerator_type}, {"runtimeVersion", f.version}};
  if (!f.description.empty()) node["description"] = f.description;
  for (const std::string& label : f.labels) {
    const size_t eq = label.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("--labels: expected KEY=VALUE, got '" + label + "'");
    }
    node["labels"][label.substr(0, eq)] = label.substr(eq + 1);
  }
  if (f.spot) node["schedulingConfig"]["spot"] = true;
  if (f.preemptible) node["schedulingConfig"]["preemptible"] = true;
  return node;
}

// Waits for `op` unless --async, with gcloud's messages.
Status Finish(Client& c, const json& op, const std::string& what, const std::string& done,
              json* response) {
  if (c.options().async) {
    std::fprintf(stderr, "%s in progress.\nCheck operation [%s] for its status.\n", what.c_str(),
                 op.value("name", "").c_str());
    return Status::Ok();
  }
  std::fprintf(stderr, "Waiting for operation [%s] to complete...", op.value("name", "").c_str());
  auto result = c.Wait(op);
  std::fprintf(stderr, "%s\n", result.ok() ? "done." : "failed.");
  if (!result.ok()) return result.status();
  std::fprintf(stderr, "%s\n", done.c_str());
  if (response) *response = *result;
  return Status::Ok();
}

}  // namespace

Status CreateNode(Client& c, const std::string& name, const NodeFlags& flags) {
  TPUSIM_ASSIGN_OR_RETURN(json body, NodeBody(flags));
  TPUSIM_ASSIGN_OR_RETURN(json op, c.Call("POST", c.Parent() + "/nodes", {{"nodeId", name}}, body));
  std::fprintf(stderr, "Create request issued for: [%s]\n", name.c_str());
  return Finish(c, op, "Create request for [" + name + "]", "Created tpu [" + name + "].", nullptr);
}

Status NodeVerb(Client& c, const std::string& verb, const std::string& name, std::FILE* out) {
  const std::string path = c.Parent() + "/nodes/" + name;
  json op;
  if (verb == "delete") {
    TPUSIM_ASSIGN_OR_RETURN(op, c.Call("DELETE", path));
  } else {
    TPUSIM_ASSIGN_OR_RETURN(op, c.Call("POST", path + ":" + verb));
  }
  const std::string past = verb == "delete" ? "Deleted" : verb == "stop" ? "Stopped" : "Started";
  std::fprintf(stderr, "%c%s request issued for: [%s]\n", std::toupper(verb[0]),
               verb.substr(1).c_str(), name.c_str());
  json node;
  TPUSIM_RETURN_IF_ERROR(Finish(c, op, verb + " of [" + name + "]", past + " tpu [" + name + "].",
                                verb == "delete" ? nullptr : &node));
  if (!node.is_null() && !node.empty()) return Print(c, node, "nodes", "yaml", out);
  return Status::Ok();
}

Status DescribeResource(Client& c, const std::string& collection, const std::string& name,
                        std::FILE* out) {
  TPUSIM_ASSIGN_OR_RETURN(json value, c.Call("GET", c.Parent() + "/" + collection + "/" + name));
  return Print(c, value, collection, "yaml", out);
}

Status ListResources(Client& c, const std::string& collection, std::FILE* out) {
  // Every page, as gcloud does.
  json all = {{collection, json::array()}};
  std::string token;
  do {
    std::vector<std::pair<std::string, std::string>> query;
    if (!token.empty()) query.push_back({"pageToken", token});
    TPUSIM_ASSIGN_OR_RETURN(json page, c.Call("GET", c.Parent() + "/" + collection, query));
    for (const json& item : page.value(collection, json::array())) all[collection].push_back(item);
    token = page.value("nextPageToken", "");
  } while (!token.empty());
  return Print(c, all, collection, "table", out);
}

Status CreateQueuedResource(Client& c, const std::string& id, const QueuedResourceFlags& f) {
  TPUSIM_ASSIGN_OR_RETURN(json node, NodeBody(f.node));
  json spec = {{"parent", c.Parent().substr(4)}, {"node", node}};
  if (f.node_count > 0) {
    if (f.node_prefix.empty()) return InvalidArgument("--node-count needs --node-prefix");
    spec["multisliceParams"] = {{"nodeCount", f.node_count}, {"nodeIdPrefix", f.node_prefix}};
  } else {
    if (f.node_id.empty())
      return InvalidArgument("give --node-id, or --node-count and --node-prefix");
    spec["nodeId"] = f.node_id;
  }
  json body = {{"tpu", {{"nodeSpec", json::array({spec})}}}};
  if (f.spot + f.guaranteed + f.best_effort > 1) {
    return InvalidArgument("choose one of --spot, --guaranteed and --best-effort");
  }
  if (f.spot) body["spot"] = json::object();
  if (f.guaranteed) body["guaranteed"] = json::object();
  if (f.best_effort) body["bestEffort"] = json::object();
  json& policy = body["queueingPolicy"] = json::object();
  if (!f.valid_until_duration.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(policy["validUntilDuration"],
                            ApiDuration("--valid-until-duration", f.valid_until_duration));
  }
  if (!f.valid_after_duration.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(policy["validAfterDuration"],
                            ApiDuration("--valid-after-duration", f.valid_after_duration));
  }
  if (!f.valid_until_time.empty()) policy["validUntilTime"] = f.valid_until_time;
  if (!f.valid_after_time.empty()) policy["validAfterTime"] = f.valid_after_time;
  if (policy.empty()) body.erase("queueingPolicy");
  TPUSIM_ASSIGN_OR_RETURN(
      json op, c.Call("POST", c.Parent() + "/queuedResources", {{"queuedResourceId", id}}, body));
  std::fprintf(stderr, "Create request issued for: [%s]\n", id.c_str());
  return Finish(c, op, "Create request for [" + id + "]", "Created queued resource [" + id + "].",
                nullptr);
}

Status DeleteQueuedResource(Client& c, const std::string& id, bool force) {
  std::vector<std::pair<std::string, std::string>> query;
  if (force) query.push_back({"force", "true"});
  TPUSIM_ASSIGN_OR_RETURN(json op, c.Call("DELETE", c.Parent() + "/queuedResources/" + id, query));
  std::fprintf(stderr, "Delete request issued for: [%s]\n", id.c_str());
  return Finish(c, op, "Delete of [" + id + "]", "Deleted queued resource [" + id + "].", nullptr);
}

Status SimulateEvent(Client& c, const std::string& verb, const std::string& name, std::FILE* out) {
  TPUSIM_ASSIGN_OR_RETURN(json node, c.Call("POST", c.Parent() + "/nodes/" + name + ":" + verb));
  return Print(c, node, "nodes", "table", out);
}

}  // namespace tpusim::cloud
