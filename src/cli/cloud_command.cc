#include "cli/cloud_command.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "tpusim/cloud/client.h"
#include "tpusim/cloud/server.h"
#include "tpusim/cloud/ssh.h"

namespace tpusim::cli {
namespace {

using cloud::Client;

int Report(const Status& st) {
  if (st.ok()) return 0;
  std::fprintf(stderr, "tpusim: %s\n", st.message().c_str());
  return st.ExitCode();
}

// Flags every client command takes, as gcloud's do.
struct ClientFlags {
  cloud::ClientOptions options;
  std::string token_file;
  bool quiet = false;

  void AddTo(CLI::App* cmd, bool format = true) {
    cmd->add_option("--zone", options.zone, "zone of the resource (default $TPUSIM_CLOUD_ZONE)");
    cmd->add_option("--project", options.project,
                    "project (default $TPUSIM_CLOUD_PROJECT, else my-project)");
    cmd->add_option("--endpoint", options.endpoint,
                    "the API (default $TPUSIM_CLOUD_ENDPOINT, else http://127.0.0.1:8470)");
    cmd->add_option(
        "--token-file", token_file,
        "bearer token file (default $TPUSIM_CLOUD_TOKEN, else " + cloud::DefaultTokenFile() + ")");
    cmd->add_flag("--async", options.async, "return once the change is accepted");
    cmd->add_flag("--quiet,-q", quiet, "answer yes to prompts (there are none)");
    if (format) {
      cmd->add_option("--format", options.format, "json, yaml or table")
          ->check(CLI::IsMember({"json", "yaml", "table"}));
    }
  }

  // The client, with defaults from the environment for what flags left out.
  StatusOr<std::unique_ptr<Client>> Connect() {
    cloud::ClientOptions o = options;
    auto env = [](const char* name) -> std::string {
      const char* v = std::getenv(name);
      return v ? v : "";
    };
    if (o.zone.empty()) o.zone = env("TPUSIM_CLOUD_ZONE");
    if (o.zone.empty()) return InvalidArgument("--zone is required (or set TPUSIM_CLOUD_ZONE)");
    if (o.project == cloud::ClientOptions().project && !env("TPUSIM_CLOUD_PROJECT").empty()) {
      o.project = env("TPUSIM_CLOUD_PROJECT");
    }
    if (o.endpoint == cloud::ClientOptions().endpoint && !env("TPUSIM_CLOUD_ENDPOINT").empty()) {
      o.endpoint = env("TPUSIM_CLOUD_ENDPOINT");
    }
    if (!token_file.empty() || env("TPUSIM_CLOUD_TOKEN").empty()) {
      TPUSIM_ASSIGN_OR_RETURN(
          o.token,
          cloud::ReadOrCreateToken(token_file.empty() ? cloud::DefaultTokenFile() : token_file,
                                   /*create=*/false));
    } else {
      o.token = env("TPUSIM_CLOUD_TOKEN");
    }
    return std::make_unique<Client>(o);
  }
};

// A client command: `run` gets the connected client.
void Leaf(CLI::App* parent, const char* name, const char* help, std::function<int()>& action,
          const std::shared_ptr<ClientFlags>& flags, std::function<Status(Client&)> run,
          std::function<void(CLI::App*)> extra = nullptr) {
  CLI::App* cmd = parent->add_subcommand(name, help);
  flags->AddTo(cmd);
  if (extra) extra(cmd);
  cmd->callback([&action, flags, run] {
    action = [flags, run] {
      auto client = flags->Connect();
      if (!client.ok()) return Report(client.status());
      return Report(run(**client));
    };
  });
}

void AddNodeFlags(CLI::App* cmd, cloud::NodeFlags& f, const char* version_flag) {
  cmd->add_option("--accelerator-type", f.accelerator_type, "v4-32, v5p-128, v5litepod-16...")
      ->required();
  cmd->add_option(version_flag, f.version, "runtime version (tpu-ubuntu2204-base...)")->required();
  cmd->add_option("--description", f.description, "a description");
  cmd->add_option("--labels", f.labels, "KEY=VALUE labels")->delimiter(',');
  cmd->add_flag("--spot", f.spot, "a spot node: cheaper, preempted when capacity is needed");
}

void AddTpuVm(CLI::App* tpus, std::function<int()>& action) {
  CLI::App* vm = tpus->add_subcommand("tpu-vm", "TPU VMs (nodes)")->require_subcommand(1);
  auto flags = std::make_shared<ClientFlags>();
  auto name = std::make_shared<std::string>();
  auto node = std::make_shared<cloud::NodeFlags>();
  auto positional = [name](CLI::App* c) { c->add_option("name", *name, "the node")->required(); };
  Leaf(
      vm, "create", "create a TPU VM", action, flags,
      [name, node](Client& c) { return cloud::CreateNode(c, *name, *node); },
      [name, node, positional](CLI::App* c) {
        positional(c);
        AddNodeFlags(c, *node, "--version");
        c->add_flag("--preemptible", node->preemptible, "a preemptible node (older form of spot)");
      });
  for (const char* verb : {"delete", "start", "stop"}) {
    Leaf(
        vm, verb, (std::string(verb) + " a TPU VM").c_str(), action, flags,
        [name, verb](Client& c) { return cloud::NodeVerb(c, verb, *name, stdout); }, positional);
  }
  Leaf(
      vm, "describe", "show a TPU VM", action, flags,
      [name](Client& c) { return cloud::DescribeResource(c, "nodes", *name, stdout); }, positional);
  Leaf(vm, "list", "list the TPU VMs of a zone", action, flags,
       [](Client& c) { return cloud::ListResources(c, "nodes", stdout); });
}

void AddQueuedResources(CLI::App* tpus, std::function<int()>& action) {
  CLI::App* qr = tpus->add_subcommand("queued-resources", "requests that wait for capacity")
                     ->require_subcommand(1);
  auto flags = std::make_shared<ClientFlags>();
  auto id = std::make_shared<std::string>();
  auto f = std::make_shared<cloud::QueuedResourceFlags>();
  auto force = std::make_shared<bool>(false);
  auto positional = [id](CLI::App* c) {
    c->add_option("id", *id, "the queued resource")->required();
  };
  Leaf(
      qr, "create", "queue a request for one or more slices", action, flags,
      [id, f](Client& c) { return cloud::CreateQueuedResource(c, *id, *f); },
      [f, positional](CLI::App* c) {
        positional(c);
        AddNodeFlags(c, f->node, "--runtime-version");
        c->add_option("--node-id", f->node_id, "the node to make");
        c->add_option("--node-count", f->node_count, "multislice: this many nodes");
        c->add_option("--node-prefix", f->node_prefix, "multislice: their names' prefix");
        c->add_flag("--guaranteed", f->guaranteed, "not preemptible");
        c->add_flag("--best-effort", f->best_effort, "best-effort tier");
        c->add_option("--valid-until-duration", f->valid_until_duration, "give up after (6h)");
        c->add_option("--valid-until-time", f->valid_until_time, "give up at (RFC 3339)");
        c->add_option("--valid-after-duration", f->valid_after_duration, "not before (30m)");
        c->add_option("--valid-after-time", f->valid_after_time, "not before (RFC 3339)");
      });
  Leaf(
      qr, "delete", "delete a queued resource", action, flags,
      [id, force](Client& c) { return cloud::DeleteQueuedResource(c, *id, *force); },
      [force, positional](CLI::App* c) {
        positional(c);
        c->add_flag("--force", *force, "delete its nodes too");
      });
  Leaf(
      qr, "describe", "show a queued resource", action, flags,
      [id](Client& c) { return cloud::DescribeResource(c, "queuedResources", *id, stdout); },
      positional);
  Leaf(qr, "list", "list the queued resources of a zone", action, flags,
       [](Client& c) { return cloud::ListResources(c, "queuedResources", stdout); });
}

void AddCatalog(CLI::App* tpus, std::function<int()>& action) {
  auto flags = std::make_shared<ClientFlags>();
  auto id = std::make_shared<std::string>();
  for (auto [group, collection] :
       {std::pair{"accelerator-types", "acceleratorTypes"},
        std::pair{"versions", "runtimeVersions"}, std::pair{"operations", "operations"}}) {
    CLI::App* g =
        tpus->add_subcommand(group, std::string("the zone's ") + group)->require_subcommand(1);
    const std::string coll = collection;
    Leaf(g, "list", "list them", action, flags,
         [coll](Client& c) { return cloud::ListResources(c, coll, stdout); });
    Leaf(
        g, "describe", "show one", action, flags,
        [coll, id](Client& c) { return cloud::DescribeResource(c, coll, *id, stdout); },
        [id](CLI::App* c) { c->add_option("id", *id, "its id")->required(); });
  }
}

void AddServe(CLI::App* cloud_cmd, std::function<int()>& action) {
  auto config = std::make_shared<cloud::ServeConfig>();
  CLI::App* serve = cloud_cmd->add_subcommand("serve", "serve the Cloud TPU API on localhost");
  serve->add_option("--db", config->db, "SQLite state file")->capture_default_str();
  serve->add_option("--capacity", config->capacity_file,
                    "the world: zones, capacity, quotas (TOML); default the built-in "
                    "worlds/default.toml");
  serve->add_option("--port", config->server.port, "port; 0 picks a free one")
      ->capture_default_str();
  serve->add_option("--host", config->server.host, "address to listen on")->capture_default_str();
  serve->add_option(
      "--tokens", config->tokens_file,
      "bearer tokens, one per line (default " + cloud::DefaultTokenFile() + ", made if missing)");
  serve->add_option("--port-file", config->port_file, "write the bound port here");
  serve
      ->add_option("--rate", config->server.rate_per_second,
                   "calls per second per token, in bursts of up to twice that")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  serve->add_option("--max-body", config->server.max_body_bytes, "largest request body, bytes")
      ->capture_default_str();
  serve->callback([&action, config] {
    config->server.burst = 2 * config->server.rate_per_second;
    action = [config] { return Report(cloud::Serve(*config, stdout)); };
  });
}

void AddSsh(CLI::App* cloud_cmd, std::function<int()>& action) {
  auto flags = std::make_shared<ClientFlags>();
  auto node = std::make_shared<std::string>();
  auto command = std::make_shared<std::vector<std::string>>();
  CLI::App* ssh = cloud_cmd->add_subcommand(
      "ssh", "run a tpusim command on a READY node's slice: ssh NODE -- tpusim run step.hlo");
  flags->AddTo(ssh, /*format=*/false);
  ssh->add_option("node", *node, "the node")->required();
  ssh->add_option("command", *command, "the command, after --")->required();
  ssh->callback([&action, flags, node, command] {
    action = [flags, node, command] {
      auto client = flags->Connect();
      if (!client.ok()) return Report(client.status());
      auto code = cloud::RunOnNode(**client, *node, *command, "/proc/self/exe");
      // ssh's own failures exit 255, as ssh's do.
      if (!code.ok()) {
        Report(code.status());
        return 255;
      }
      return *code;
    };
  });
}

}  // namespace

void AddCloudCommands(CLI::App& app, std::function<int()>& action) {
  CLI::App* cloud_cmd =
      app.add_subcommand("cloud", "Cloud TPU, emulated: the API server and a gcloud-shaped client")
          ->require_subcommand(1);
  AddServe(cloud_cmd, action);
  CLI::App* tpus =
      cloud_cmd->add_subcommand("tpus", "as gcloud compute tpus")->require_subcommand(1);
  AddTpuVm(tpus, action);
  AddQueuedResources(tpus, action);
  AddCatalog(tpus, action);
  AddSsh(cloud_cmd, action);
  auto flags = std::make_shared<ClientFlags>();
  auto node = std::make_shared<std::string>();
  for (auto [name, verb, help] :
       {std::tuple{"preempt", "simulatePreemption", "preempt a spot node now"},
        std::tuple{"maintenance", "simulateMaintenance",
                   "start a maintenance window on a node now"}}) {
    const std::string v = verb;
    Leaf(
        cloud_cmd, name, help, action, flags,
        [v, node](Client& c) { return cloud::SimulateEvent(c, v, *node, stdout); },
        [node](CLI::App* c) { c->add_option("node", *node, "the node")->required(); });
  }
}

}  // namespace tpusim::cli
