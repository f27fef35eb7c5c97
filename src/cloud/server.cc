#include "tpusim/cloud/server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <thread>

#include "cloud/api.h"
#include "tpusim/cloud/metrics.h"
#include "tpusim/io/file.h"
#include "tpusim/runtime/load.h"

namespace tpusim::cloud {
namespace {

using Digest = std::array<unsigned char, SHA256_DIGEST_LENGTH>;

Digest Sha256(std::string_view s) {
  Digest d;
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d.data());
  return d;
}

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SendError(httplib::Response& res, const ApiError& e) {
  res.status = e.http;
  res.set_content(Dump(ErrorBody(e)), "application/json");
}

// Token buckets, one per bearer token.
class RateLimiter {
 public:
  RateLimiter(double rate, double burst) : rate_(rate), burst_(burst) {}
  // 0 when the call may go ahead (and is counted); otherwise the seconds
  // until the token's bucket holds a call again.
  double Admit(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    const double now = Seconds();
    auto [it, fresh] = buckets_.try_emplace(key, Bucket{burst_, now});
    Bucket& b = it->second;
    b.tokens = std::min(burst_, b.tokens + (now - b.last) * rate_);
    b.last = now;
    if (b.tokens < 1) return (1 - b.tokens) / rate_;
    b.tokens -= 1;
    return 0;
  }

 private:
  struct Bucket {
    double tokens, last;
  };
  double rate_, burst_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

// Why binding `host`:`port` fails, as the system says it ("address already
// in use"), found by trying it again.
std::string WhyNotListening(const std::string& host, int port) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) {
    return "not an address of this machine";
  }
  std::string why = "cannot bind";
  const int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (fd >= 0) {
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (bind(fd, found->ai_addr, found->ai_addrlen) != 0) why = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (why == std::strerror(EADDRINUSE)) why += " (another tpusim cloud serve?)";
  return why;
}

}  // namespace

StatusOr<std::vector<std::string>> ParseTokens(std::string_view text, const std::string& filename) {
  std::vector<std::string> tokens;
  int line_no = 0;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(begin, end - begin));
    ++line_no;
    begin = end + 1;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line.size() < 16 || line.find_first_of(" \t") != std::string::npos) {
      return InvalidArgument(filename + ":" + std::to_string(line_no) +
                             ": a token is one word of at least 16 characters");
    }
    tokens.push_back(line);
  }
  if (tokens.empty()) return InvalidArgument(filename + ": no tokens");
  return tokens;
}

struct Server::Impl {
  Service& service;
  ServerOptions options;
  httplib::Server http;
  std::vector<Digest> token_digests;
  RateLimiter limiter;
  ApiMetrics metrics;
  std::mutex mu;
  std::condition_variable stopped;
  bool stopping = false;
  int bound_port = 0;

  Impl(Service& s, ServerOptions o)
      : service(s), options(std::move(o)), limiter(options.rate_per_second, options.burst) {
    for (const std::string& t : options.tokens) token_digests.push_back(Sha256(t));
  }

  // Compares digests so that neither the length nor the content of a token
  // leaks through timing; every token is compared.
  bool Authorized(const httplib::Request& req, std::string& token) const {
    const std::string header = req.get_header_value("Authorization");
    if (header.rfind("Bearer ", 0) != 0) return false;
    token = header.substr(7);
    const Digest d = Sha256(token);
    int match = 0;
    for (const Digest& t : token_digests) match |= CRYPTO_memcmp(d.data(), t.data(), d.size()) == 0;
    return match != 0;
  }

  httplib::Server::HandlerResponse Admit(const httplib::Request& req, httplib::Response& res) {
    // The discovery document is public, as Google's are.
    if (req.path == "/$discovery/rest" || req.path == "/discovery/v1/apis/tpu/v2/rest") {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    std::string token;
    if (!Authorized(req, token)) {
      // With parameters, as RFC 6750 writes it: some clients (httplib2)
      // cannot parse a bare "Bearer".
      res.set_header("WWW-Authenticate", R"(Bearer realm="tpusim", error="invalid_token")");
      SendError(res, {401, "UNAUTHENTICATED",
                      "Request is missing a valid bearer token (Authorization: Bearer TOKEN)"});
      return httplib::Server::HandlerResponse::Handled;
    }
    if (const double wait = limiter.Admit(token); wait > 0) {
      // Whole seconds, as HTTP's Retry-After takes them; Google's clients
      // back off at least that long.
      res.set_header("Retry-After", std::to_string(static_cast<int64_t>(std::ceil(wait))));
      SendError(res, ResourceExhaustedError(fmt::format(
                         "Rate limit exceeded: at most {:g} calls per second per token",
                         options.rate_per_second)));
      return httplib::Server::HandlerResponse::Handled;
    }
    // A request with neither Content-Length nor a chunked body has no body
    // (RFC 9112, 6.3), as `curl -X POST` sends it; httplib would refuse it.
    if (req.method != "GET" && !req.has_header("Content-Length") &&
        !req.has_header("Transfer-Encoding")) {
      Api(req, res);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  void Api(const httplib::Request& req, httplib::Response& res) {
    const double start = Seconds();
    // A POST with no body (curl -X POST .../nodes/n:stop) is an empty request.
    ApiRequest r{req.method, req.path, {},
                 req.body.empty() && req.method == "POST" ? "{}" : req.body};
    for (const auto& [k, v] : req.params) r.query[k] = v;
    ApiResponse out = service.Handle(r);
    res.status = out.http_status;
    res.set_content(out.body, "application/json");
    metrics.Record(RouteLabel(req.method, req.path), out.http_status, Seconds() - start);
  }

  // The discovery document, pointing the client back at this server (the
  // address it was reached at), as the real service points at itself.
  void Discovery(const httplib::Request& req, httplib::Response& res) {
    if (req.path.rfind("/$discovery/", 0) == 0 && req.get_param_value("version") != "v2") {
      SendError(res, NotFoundError("only version=v2 of the tpu API is served"));
      return;
    }
    static const json document = json::parse(DiscoveryDocument());
    json doc = document;
    const std::string host = req.get_header_value("Host");
    const std::string root =
        "http://" + (host.empty() ? options.host + ":" + std::to_string(bound_port) : host) + "/";
    doc["rootUrl"] = root;
    doc["baseUrl"] = root;
    doc["batchPath"] = "batch";
    res.set_content(Dump(doc), "application/json");
  }

  void Metrics(httplib::Response& res) {
    auto stats = service.Stats();
    if (!stats.ok()) {
      SendError(res, InternalError(stats.status()));
      return;
    }
    res.set_content(WorldMetricsText(*stats) + metrics.Text(), "text/plain; version=0.0.4");
  }

  void Routes() {
    auto api = [this](const httplib::Request& q, httplib::Response& s) { Api(q, s); };
    const char* pattern = R"(/v2/.*)";
    http.Get(pattern, api).Post(pattern, api).Patch(pattern, api).Delete(pattern, api);
    http.Get(R"(/v1/.*)", api);
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& s) { Metrics(s); });
    auto discovery = [this](const httplib::Request& q, httplib::Response& s) { Discovery(q, s); };
    http.Get(R"(/\$discovery/rest)", discovery).Get("/discovery/v1/apis/tpu/v2/rest", discovery);
    http.set_pre_routing_handler(
        [this](const httplib::Request& q, httplib::Response& s) { return Admit(q, s); });
    // httplib's own refusals (unknown path, body too large) in Google's form.
    http.set_error_handler([](const httplib::Request& q, httplib::Response& s) {
      if (!s.body.empty()) return;
      if (s.status == 404) {
        SendError(s, NotFoundError("The requested URL " + q.path + " was not found on this server."));
      } else if (s.status == 413) {
        SendError(s, {413, "INVALID_ARGUMENT", "Request body too large"});
      } else {
        SendError(s, {s.status, s.status < 500 ? "INVALID_ARGUMENT" : "INTERNAL",
                      "The request could not be read (HTTP " + std::to_string(s.status) + ")"});
      }
    });
    http.set_payload_max_length(options.max_body_bytes);
    // SO_REUSEADDR alone: httplib's default SO_REUSEPORT would let a second
    // server listen on the same port and take half of the calls.
    http.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    // Headers and body go out as separate writes: without this, Nagle and
    // delayed ACKs add 40 ms to every reply.
    http.set_tcp_nodelay(true);
    // Clients keep connections open: closing them every few calls races
    // with a client's next request.
    http.set_keep_alive_max_count(10000);
    http.set_keep_alive_timeout(60);
    const int threads = options.threads;
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  }

  void TickLoop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      lock.unlock();
      if (Status st = service.Tick(); !st.ok()) {
        std::fprintf(stderr, "tpusim cloud: %s\n", st.message().c_str());
      }
      lock.lock();
      stopped.wait_for(lock, std::chrono::duration<double>(options.tick_seconds),
                       [this] { return stopping; });
    }
  }
};

Server::Server(Service& service, ServerOptions options)
    : impl_(std::make_unique<Impl>(service, std::move(options))) {
  impl_->Routes();
}

Server::~Server() { Stop(); }

StatusOr<int> Server::Bind() {
  Impl& s = *impl_;
  const int port =
      s.options.port == 0
          ? s.http.bind_to_any_port(s.options.host)
          : (s.http.bind_to_port(s.options.host, s.options.port) ? s.options.port : -1);
  if (port < 0) {
    return InvalidArgument("cannot listen on " + s.options.host + ":" +
                           std::to_string(s.options.port) + ": " +
                           WhyNotListening(s.options.host, s.options.port));
  }
  s.bound_port = port;
  return port;
}

Status Server::Run() {
  std::thread ticker([this] { impl_->TickLoop(); });
  const bool ok = impl_->http.listen_after_bind();
  Stop();
  ticker.join();
  return ok ? Status::Ok() : Status(StatusCode::kInternal, "the HTTP server failed");
}

void Server::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->stopped.notify_all();
  impl_->http.stop();
}

}  // namespace tpusim::cloud

namespace tpusim::cloud {

std::string DefaultTokenFile() {
  const char* config = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  const std::string dir = config && *config ? config : std::string(home ? home : ".") + "/.config";
  return dir + "/tpusim/cloud-token";
}

StatusOr<std::string> ReadOrCreateToken(const std::string& path, bool create) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && create) {
    unsigned char bytes[24];
    if (RAND_bytes(bytes, sizeof bytes) != 1) return Status(StatusCode::kInternal, "no randomness");
    std::string token;
    for (unsigned char b : bytes) token += fmt::format("{:02x}", b);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const mode_t old = umask(077);
    Status st = io::WriteFileAtomically(path, "# tpusim cloud API token\n" + token + "\n");
    umask(old);
    TPUSIM_RETURN_IF_ERROR(st);
  }
  auto text = runtime::ReadTextFile(path);
  if (!text.ok()) {
    return NotFound("no token file " + path + " (give --token-file, or set TPUSIM_CLOUD_TOKEN)");
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<std::string> tokens, ParseTokens(*text, path));
  return tokens.front();
}

namespace {

int g_signal_pipe[2] = {-1, -1};

}  // namespace

Status Serve(const ServeConfig& config, std::FILE* log) {
  std::string capacity(BuiltinWorldToml());
  if (!config.capacity_file.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(capacity, runtime::ReadTextFile(config.capacity_file));
  }
  const std::string world_file =
      config.capacity_file.empty() ? "worlds/default.toml" : config.capacity_file;
  TPUSIM_ASSIGN_OR_RETURN(WorldConfig world, ParseWorldConfig(capacity, world_file));
  const std::string tokens_file =
      config.tokens_file.empty() ? DefaultTokenFile() : config.tokens_file;
  if (config.tokens_file.empty())
    TPUSIM_RETURN_IF_ERROR(ReadOrCreateToken(tokens_file, true).status());
  TPUSIM_ASSIGN_OR_RETURN(std::string tokens_text, runtime::ReadTextFile(tokens_file));
  ServerOptions options = config.server;
  TPUSIM_ASSIGN_OR_RETURN(options.tokens, ParseTokens(tokens_text, tokens_file));
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<Service> service,
                          Service::Open(config.db, std::move(world)));

  Server server(*service, options);
  TPUSIM_ASSIGN_OR_RETURN(int port, server.Bind());
  if (!config.port_file.empty()) {
    TPUSIM_RETURN_IF_ERROR(io::WriteFileAtomically(config.port_file, std::to_string(port) + "\n"));
  }
  std::fprintf(log,
               "tpusim cloud: serving the Cloud TPU API on http://%s:%d (state %s, tokens %s)\n",
               options.host.c_str(), port, config.db.c_str(), tokens_file.c_str());
  std::fflush(log);
  // SIGINT and SIGTERM stop the server through a pipe: a handler may only
  // write, and libraries' threads (OpenBLAS's) would get a blocked signal.
  if (pipe(g_signal_pipe) != 0) return Status(StatusCode::kInternal, "pipe failed");
  struct sigaction action {};
  action.sa_handler = [](int) { (void)!write(g_signal_pipe[1], "x", 1); };
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::thread waiter([&] {
    char c;
    (void)!read(g_signal_pipe[0], &c, 1);
    server.Stop();
  });
  Status st = server.Run();
  (void)!write(g_signal_pipe[1], "x", 1);  // wakes the waiter if the server stopped by itself
  waiter.join();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  close(g_signal_pipe[0]);
  close(g_signal_pipe[1]);
  return st;
}

}  // namespace tpusim::cloud
