#include "tpusim/cloud/ssh.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <regex>
#include <thread>

namespace tpusim::cloud {
namespace {

using json = nlohmann::json;

// Why a node cannot run commands, or empty if it can.
std::string Unusable(const json& node) {
  const std::string state = node.value("state", "UNKNOWN");
  if (state != "READY") return "the node is " + state;
  if (node.value("health", "") == "UNHEALTHY_MAINTENANCE")
    return "the node's host is under maintenance";
  return "";
}

std::vector<std::string> NodeCommand(const json& node, const std::vector<std::string>& command) {
  std::vector<std::string> args(command.begin() + 1, command.end());
  if (!args.empty() && args[0] == "run") {
    const bool has_device = std::any_of(args.begin(), args.end(), [](const std::string& a) {
      for (const char* flag : {"--slice", "--chip", "--chip-file", "--topology"}) {
        if (a == flag || a.rfind(std::string(flag) + "=", 0) == 0) return true;
      }
      return false;
    });
    if (!has_device) {
      args.push_back("--slice");
      args.push_back(node.value("acceleratorType", ""));
    }
  }
  return args;
}

// Seconds of "1.23 ms".
double ToSeconds(double value, const std::string& unit) {
  if (unit == "s") return value;
  if (unit == "ms") return value * 1e-3;
  if (unit == "us") return value * 1e-6;
  return value * 1e-9;
}

// What the running command has printed about its steps.
struct JobProgress {
  std::mutex mu;
  int64_t steps = 0;
  double step_seconds = 0, utilization = 0;
  bool changed = false;

  // Reads `tpusim run`'s step lines ("step 3: 1.23 ms ...") and its report's
  // time and MXU utilization lines.
  void Read(const std::string& line) {
    static const std::regex step(R"(^step (\d+): ([0-9.]+(?:e[-+]?\d+)?) (s|ms|us|ns)\b.*)");
    static const std::regex time(R"(^  time +([0-9.]+) (s|ms|us|ns)\s*$)");
    static const std::regex mxu(R"(MXU(?: utilization)? +([0-9.]+)%)");
    std::smatch m;
    std::lock_guard<std::mutex> lock(mu);
    if (std::regex_match(line, m, step)) {
      steps = std::stoll(m[1]);
      step_seconds = ToSeconds(std::stod(m[2]), m[3]);
      changed = true;
    } else if (std::regex_match(line, m, time)) {
      step_seconds = ToSeconds(std::stod(m[1]), m[2]);
      steps = std::max<int64_t>(steps, 1);
      changed = true;
    }
    if (std::regex_search(line, m, mxu)) {
      utilization = std::stod(m[1]) / 100;
      changed = true;
    }
  }
};

void Report(Client& c, const std::string& path, JobProgress& p, bool running) {
  json body;
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (running && !p.changed) return;
    p.changed = false;
    body = {{"steps", p.steps},
            {"stepSeconds", p.step_seconds},
            {"tensorcoreUtilization", p.utilization},
            {"running", running}};
  }
  (void)c.Call("POST", path + ":reportJob", {}, body);  // metrics only: best effort
}

// Copies the child's output through, line by line, reading its progress.
void Relay(int fd, JobProgress& progress) {
  std::FILE* in = fdopen(fd, "r");
  char buf[4096];
  std::string line;
  while (std::fgets(buf, sizeof buf, in) != nullptr) {
    std::fputs(buf, stdout);
    line += buf;
    if (line.back() != '\n') continue;
    std::fflush(stdout);
    line.pop_back();
    progress.Read(line);
    line.clear();
  }
  std::fclose(in);
}

pid_t Spawn(const std::string& path, const std::vector<std::string>& args, int out_fd) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(path.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);
    execv(path.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

StatusOr<int> RunOnNode(Client& client, const std::string& node_id,
                        const std::vector<std::string>& command, const std::string& tpusim_path) {
  if (command.empty() || command[0] != "tpusim") {
    return Unimplemented("simulated TPU VMs run tpusim commands only: tpusim cloud ssh " + node_id +
                         " -- tpusim run ...");
  }
  const std::string path = client.Parent() + "/nodes/" + node_id;
  TPUSIM_ASSIGN_OR_RETURN(json node, client.Call("GET", path));
  if (std::string why = Unusable(node); !why.empty()) {
    return FailedPrecondition("cannot connect to " + node_id + ": " + why);
  }
  int fds[2];
  if (pipe(fds) != 0) return Status(StatusCode::kInternal, "pipe failed");
  const pid_t pid = Spawn(tpusim_path, NodeCommand(node, command), fds[1]);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return Status(StatusCode::kInternal, "fork failed");
  }
  JobProgress progress;
  std::thread relay([&] { Relay(fds[0], progress); });
  std::string lost;
  int status = 0;
  auto next_check = std::chrono::steady_clock::now();
  while (waitpid(pid, &status, WNOHANG) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (std::chrono::steady_clock::now() < next_check) continue;
    next_check += std::chrono::milliseconds(200);
    auto now = client.Call("GET", path);
    lost = now.ok() ? Unusable(*now) : "the node is gone (" + now.status().message() + ")";
    if (!lost.empty()) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    Report(client, path, progress, /*running=*/true);
  }
  relay.join();
  Report(client, path, progress, /*running=*/false);
  if (!lost.empty()) {
    return FailedPrecondition("connection to " + node_id + " closed: " + lost);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace tpusim::cloud
