// The Cloud TPU emulator over HTTP (tpusim cloud serve): the v2 REST API of
// cloud/service.h under /v2/ and Prometheus metrics at /metrics, on
// cpp-httplib. Every call needs a bearer token from the server's token list
// (compared in constant time); request bodies are bounded in size and each
// token's calls in rate; the world ticks in the background.
#ifndef TPUSIM_CLOUD_SERVER_H_
#define TPUSIM_CLOUD_SERVER_H_

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/cloud/service.h"

namespace tpusim::cloud {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8470;  // 0: any free port
  std::vector<std::string> tokens;
  size_t max_body_bytes = 1 << 20;
  double rate_per_second = 1000;  // per token, sustained
  double burst = 2000;            // per token
  int threads = 64;               // connections served at once
  double tick_seconds = 0.02;     // real time between ticks of the world
};

// Tokens from a token file's text: one per line; blank lines and lines
// starting with '#' skipped. kInvalidArgument if none, or one shorter than
// 16 characters.
StatusOr<std::vector<std::string>> ParseTokens(std::string_view text, const std::string& filename);

// The token file both `tpusim cloud serve` and the client use when given
// none: $XDG_CONFIG_HOME/tpusim/cloud-token (~/.config/...).
std::string DefaultTokenFile();
// The first token of the file at `path`; if there is no such file and
// `create`, a new random token written there first (mode 0600).
StatusOr<std::string> ReadOrCreateToken(const std::string& path, bool create);

class Server {
 public:
  Server(Service& service, ServerOptions options);
  ~Server();

  // Binds the port; returns the port bound (the free one for port 0).
  // kInvalidArgument if it cannot bind.
  StatusOr<int> Bind();
  // Serves until Stop(). REQUIRES: Bind() succeeded.
  Status Run();
  // Makes Run() return; safe from any thread.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `tpusim cloud serve`: opens the state and serves it until SIGINT or
// SIGTERM, logging to `log`. The bound port is written to `port_file` when
// given (for port 0).
struct ServeConfig {
  std::string db = "tpusim-cloud.sqlite";
  std::string capacity_file;  // the world (cloud/world.h); empty: BuiltinWorldToml()
  std::string tokens_file;    // empty: DefaultTokenFile(), created if missing
  std::string port_file;
  ServerOptions server;
};
Status Serve(const ServeConfig& config, std::FILE* log);

// The world served without a capacity file (worlds/default.toml, built in).
std::string_view BuiltinWorldToml();
// The API's discovery document (src/cloud/tpu_v2_discovery.json, built in),
// which the server gives Google's discovery-based clients.
std::string_view DiscoveryDocument();

}  // namespace tpusim::cloud

#endif  // TPUSIM_CLOUD_SERVER_H_
