// The Cloud TPU emulator under load and faults.
//  1. 10,000 API calls from 50 concurrent clients (keep-alive connections)
//     against one in-process server: a mix of creates, deletes, gets and
//     lists, against the same number of calls that read a location (no state
//     touched: the transport alone), the reference of the same run. Prints
//     p50/p99 and their ratio to the reference, and any error the API does
//     not define.
//  2. 200 SIGKILL/restart cycles of a server process during creates and
//     deletes: the restart time and whether every acknowledged create is
//     still there.
// Run: build/bench/cloud_bench [calls] [cycles]
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "clock.h"
#include "tpusim/cloud/server.h"
#include "tpusim/cloud/service.h"

using tpusim::bench::Clock;
using tpusim::bench::Seconds;
namespace cloud = tpusim::cloud;

namespace {

const char* kToken = "bench-token-0123456789";
const char* kWorld = "speed = 100.0\n[durations]\ncreate = 1\ndelete = 1\n[zones.z]\nv4 = 100000\n";
const std::string kNodes = "/v2/projects/p/locations/z/nodes";
const std::string kBody = R"({"acceleratorType": "v4-8", "runtimeVersion": "tpu-ubuntu2204-base"})";

struct Latencies {
  std::vector<double> seconds;
  int unexpected = 0;
  double Quantile(double q) {
    std::sort(seconds.begin(), seconds.end());
    return seconds[std::min(seconds.size() - 1, static_cast<size_t>(q * seconds.size()))];
  }
};

// `calls` calls from `clients` threads; `mix` picks each call.
Latencies Load(int port, int calls, int clients, bool mix) {
  Latencies all;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int k = 0; k < clients; ++k) {
    threads.emplace_back([&, k] {
      httplib::Client c("127.0.0.1", port);
      c.set_bearer_token_auth(kToken);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);
      c.set_read_timeout(60);
      std::mt19937 rng(k);
      std::vector<std::string> mine;
      Latencies local;
      for (int i = 0; i < calls / clients; ++i) {
        const double r = std::uniform_real_distribution<>(0, 1)(rng);
        const auto t0 = Clock::now();
        httplib::Result res = [&] {
          if (!mix) return c.Get("/v2/projects/p/locations/z");
          if (r < 0.15) {
            const std::string name = "b" + std::to_string(k) + "-" + std::to_string(i);
            auto created = c.Post(kNodes + "?nodeId=" + name, kBody, "application/json");
            if (created && created->status == 200) mine.push_back(name);
            return created;
          }
          if (r < 0.25 && !mine.empty()) {
            const std::string victim = mine.back();
            mine.pop_back();
            return c.Delete(kNodes + "/" + victim);
          }
          if (r < 0.55) return c.Get(kNodes + "?pageSize=50");
          if (r < 0.7) return c.Get("/v2/projects/p/locations/z/operations?pageSize=20");
          return c.Get(kNodes + "/" + (mine.empty() ? std::string("missing") : mine.back()));
        }();
        local.seconds.push_back(Seconds(t0));
        const int status = res ? res->status : 0;
        if (status != 200 && status != 400 && status != 404 && status != 409) {
          if (local.unexpected++ == 0) {
            std::fprintf(stderr, "unexpected: HTTP %d %s\n", status,
                         res ? res->body.c_str() : httplib::to_string(res.error()).c_str());
          }
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      all.seconds.insert(all.seconds.end(), local.seconds.begin(), local.seconds.end());
      all.unexpected += local.unexpected;
    });
  }
  for (auto& t : threads) t.join();
  return all;
}

std::unique_ptr<cloud::Service> OpenService(const std::string& db) {
  auto world = cloud::ParseWorldConfig(kWorld, "bench");
  auto service = cloud::Service::Open(db, *world);
  if (!service.ok()) {
    std::fprintf(stderr, "%s\n", service.status().message().c_str());
    std::exit(1);
  }
  return std::move(*service);
}

cloud::ServerOptions Options(int port) {
  cloud::ServerOptions o;
  o.port = port;
  o.tokens = {kToken};
  o.rate_per_second = 1e9;
  o.burst = 1e9;
  return o;
}

int LoadBench(const std::string& db, int calls) {
  auto service = OpenService(db);
  cloud::Server server(*service, Options(0));
  auto port = server.Bind();
  if (!port.ok()) return 1;
  std::thread serving([&] { (void)server.Run(); });
  auto t0 = Clock::now();
  Latencies ref = Load(*port, calls, 50, /*mix=*/false);
  const double ref_s = Seconds(t0);
  t0 = Clock::now();
  Latencies mix = Load(*port, calls, 50, /*mix=*/true);
  const double mix_s = Seconds(t0);
  server.Stop();
  serving.join();
  std::printf(
      "load: %zu calls from 50 clients in %.2f s (%.0f/s): p50 %.2f ms, p99 %.2f ms; "
      "%d errors the API does not define\n",
      mix.seconds.size(), mix_s, mix.seconds.size() / mix_s, mix.Quantile(0.5) * 1e3,
      mix.Quantile(0.99) * 1e3, mix.unexpected);
  std::printf(
      "reference (read a location, no state): %.2f s (%.0f/s): p50 %.2f ms, p99 %.2f ms; "
      "load p99 / reference p99 = %.1f\n",
      ref_s, ref.seconds.size() / ref_s, ref.Quantile(0.5) * 1e3, ref.Quantile(0.99) * 1e3,
      mix.Quantile(0.99) / ref.Quantile(0.99));
  return mix.unexpected == 0 && ref.unexpected == 0 ? 0 : 1;
}

// A server in a child process; returns its pid once it answers.
pid_t StartChild(const std::string& db, int port) {
  const pid_t pid = fork();
  if (pid == 0) {
    auto service = OpenService(db);
    cloud::Server server(*service, Options(port));
    if (!server.Bind().ok()) _exit(3);
    (void)server.Run();
    _exit(0);
  }
  httplib::Client c("127.0.0.1", port);
  c.set_bearer_token_auth(kToken);
  while (true) {
    auto r = c.Get("/v2/projects/p/locations");
    if (r && r->status == 200) return pid;
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

int KillBench(const std::string& db, int cycles) {
  const int port = 18000 + getpid() % 20000;
  std::set<std::string> acknowledged, delete_sent;
  std::vector<double> restarts;
  std::mt19937 rng(1);
  pid_t pid = StartChild(db, port);
  int lost = 0;
  for (int cycle = 0; cycle < cycles && pid > 0; ++cycle) {
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::thread worker([&] {
      httplib::Client c("127.0.0.1", port);
      c.set_bearer_token_auth(kToken);
      for (int i = 0; !stop; ++i) {
        const std::string name = "k" + std::to_string(cycle) + "-" + std::to_string(i);
        auto r = c.Post(kNodes + "?nodeId=" + name, kBody, "application/json");
        if (!r) return;
        std::lock_guard<std::mutex> lock(mu);
        if (r->status == 200) acknowledged.insert(name);
        if (i % 3 == 2 && !acknowledged.empty()) {
          const std::string victim = *acknowledged.begin();
          delete_sent.insert(victim);
          acknowledged.erase(victim);
          if (!c.Delete(kNodes + "/" + victim)) return;
        }
      }
    });
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 40000));
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    stop = true;
    worker.join();
    const auto t0 = Clock::now();
    pid = StartChild(db, port);
    restarts.push_back(Seconds(t0));
    httplib::Client c("127.0.0.1", port);
    c.set_bearer_token_auth(kToken);
    for (const std::string& name : acknowledged) {
      auto r = c.Get(kNodes + "/" + name);
      if (!r || r->status != 200) ++lost;
    }
  }
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  std::sort(restarts.begin(), restarts.end());
  std::printf(
      "kill/restart: %zu cycles, %zu acknowledged nodes checked after each, %d lost; "
      "restart to first answer p50 %.1f ms, max %.1f ms\n",
      restarts.size(), acknowledged.size(), lost, restarts[restarts.size() / 2] * 1e3,
      restarts.back() * 1e3);
  return lost == 0 && static_cast<int>(restarts.size()) == cycles ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int cycles = argc > 2 ? std::atoi(argv[2]) : 200;
  const auto dir =
      std::filesystem::temp_directory_path() / ("cloud_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // The kill cycles fork: before the load's threads exist.
  int rc = KillBench((dir / "kill.sqlite").string(), cycles);
  rc |= LoadBench((dir / "load.sqlite").string(), calls);
  std::filesystem::remove_all(dir);
  return rc;
}
