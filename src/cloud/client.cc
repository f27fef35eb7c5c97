#include "tpusim/cloud/client.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include "cloud/api.h"

namespace tpusim::cloud {

using json = nlohmann::json;

struct Client::Http {
  httplib::Client client;
  explicit Http(const std::string& endpoint) : client(endpoint) {}
};

Status ApiStatus(const std::string& status, const std::string& message) {
  const std::string said = status + ": " + message;
  if (status == "INTERNAL" || status == "UNAVAILABLE" || status == "UNKNOWN") {
    return Status(StatusCode::kInternal, said);
  }
  if (status == "NOT_FOUND") return NotFound(said);
  if (status == "RESOURCE_EXHAUSTED") return ResourceExhausted(said);
  return InvalidArgument(said);
}

Client::Client(ClientOptions options)
    : options_(std::move(options)), http_(std::make_unique<Http>(options_.endpoint)) {
  http_->client.set_bearer_token_auth(options_.token);
  http_->client.set_connection_timeout(5);
  http_->client.set_tcp_nodelay(true);
  http_->client.set_read_timeout(60);
}

Client::~Client() = default;

std::string Client::Parent() const {
  return "/v2/projects/" + options_.project + "/locations/" + options_.zone;
}

StatusOr<json> Client::Call(const std::string& method, const std::string& path,
                            const std::vector<std::pair<std::string, std::string>>& query,
                            const json& body) {
  httplib::Params params(query.begin(), query.end());
  const std::string url = httplib::append_query_params(path, params);
  const std::string payload = body.is_null() ? "" : body.dump();
  httplib::Result r = [&] {
    httplib::Client& c = http_->client;
    if (method == "GET") return c.Get(url);
    if (method == "DELETE") return c.Delete(url);
    if (method == "PATCH") return c.Patch(url, payload, "application/json");
    return c.Post(url, payload, "application/json");
  }();
  if (!r) {
    return Status(StatusCode::kInternal,
                  "cannot reach the Cloud TPU API at " + options_.endpoint + " (" +
                      (r.error() == httplib::Error::Connection ? "nothing answers there"
                                                               : httplib::to_string(r.error())) +
                      "): start one with `tpusim cloud serve`, or point --endpoint (or "
                      "TPUSIM_CLOUD_ENDPOINT) at yours");
  }
  json reply = json::parse(r->body, nullptr, false);
  if (r->status == 200 && !reply.is_discarded()) return reply;
  if (!reply.is_discarded() && reply.contains("error") && reply["error"].is_object()) {
    const json& e = reply["error"];
    return ApiStatus(e.value("status", "UNKNOWN"), e.value("message", ""));
  }
  return Status(StatusCode::kInternal,
                "the API answered HTTP " + std::to_string(r->status) + " without an error body");
}

StatusOr<json> Client::Wait(const json& operation) {
  json op = operation;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.wait_seconds);
  double pause = 0.02;
  while (!op.value("done", false)) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Status(StatusCode::kInternal,
                    "operation " + op.value("name", "") + " did not finish in time");
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    pause = std::min(pause * 1.5, 1.0);
    TPUSIM_ASSIGN_OR_RETURN(op, Call("GET", "/v2/" + op["name"].get<std::string>()));
  }
  if (op.contains("error")) {
    return ApiStatus(RpcStatusName(op["error"].value("code", 2)), op["error"].value("message", ""));
  }
  return op.value("response", json::object());
}

}  // namespace tpusim::cloud
