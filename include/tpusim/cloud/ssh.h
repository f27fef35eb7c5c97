// `tpusim cloud ssh NODE -- tpusim run ...`: runs a tpusim command "on" a
// READY node, that is, locally on the node's slice shape, for as long as the
// node lives.
#ifndef TPUSIM_CLOUD_SSH_H_
#define TPUSIM_CLOUD_SSH_H_

#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/cloud/client.h"

namespace tpusim::cloud {

// Runs `command` ({"tpusim", "run", ...}) with the tpusim binary at
// `tpusim_path`; a `run` that names no chip or slice gets the node's
// (--slice ACCELERATOR_TYPE). Its output is passed through, and the step
// times it prints are reported to the API (:reportJob) for /metrics. The
// node is watched while the command runs: when it stops being READY and
// healthy (preempted, stopped, deleted, under maintenance) the command is
// killed, as a VM's processes die with it. Returns the command's exit
// status; kFailedPrecondition if the node is not READY or is lost while the
// command runs, kUnimplemented for a command other than tpusim.
StatusOr<int> RunOnNode(Client& client, const std::string& node,
                        const std::vector<std::string>& command, const std::string& tpusim_path);

}  // namespace tpusim::cloud

#endif  // TPUSIM_CLOUD_SSH_H_
