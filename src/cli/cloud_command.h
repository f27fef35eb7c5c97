// `tpusim cloud ...`: the Cloud TPU emulator's server and its gcloud-shaped
// client, as CLI11 subcommands.
#ifndef TPUSIM_CLI_CLOUD_COMMAND_H_
#define TPUSIM_CLI_CLOUD_COMMAND_H_

#include <CLI/CLI.hpp>
#include <functional>

namespace tpusim::cli {

// Adds `cloud` and its subcommands to `app`. After parsing, `action` holds
// the chosen command (returning the exit status), or stays empty.
void AddCloudCommands(CLI::App& app, std::function<int()>& action);

}  // namespace tpusim::cli

#endif  // TPUSIM_CLI_CLOUD_COMMAND_H_
