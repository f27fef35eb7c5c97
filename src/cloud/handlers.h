// The emulated API's methods, one function each, as service.cc routes calls
// to them: nodes.cc, queued_resources.cc, catalog.cc. Each reads `call`,
// changes the world through `ctx` and sets `out` to the response body.
#ifndef TPUSIM_CLOUD_HANDLERS_H_
#define TPUSIM_CLOUD_HANDLERS_H_

#include <map>
#include <string>

#include "cloud/api.h"

namespace tpusim::cloud {

struct Call {
  std::string collection;  // "nodes", "queuedResources", ...
  std::string parent;      // "projects/p/locations/z"
  std::string id;          // the resource's id, or empty for collection calls
  std::string name;        // parent + "/<collection>/" + id
  std::map<std::string, std::string> query;
  json body;  // parsed request body (null when empty)
};

using Handler = ApiError (*)(Context& ctx, const Call& call, json& out);

// A list call's page: pageSize (absent or 0: the most a page holds) and
// pageToken; kInvalidArgument for a malformed size.
struct Paging {
  int64_t size = 0;
  std::string token;
};
ApiError ReadPaging(const Call& call, Paging& out);
// Sets out[call.collection] to the page of `items` the call asks for, and
// nextPageToken when more follow: lists computed, not stored.
ApiError ListPage(std::vector<json> items, const Call& call, json& out);

// Get and list of stored resources (nodes, queuedResources, operations),
// with pageSize and pageToken.
ApiError GetResource(Context&, const Call&, json&);
ApiError ListResources(Context&, const Call&, json&);
// google.longrunning's delete (forgets a record) and cancel (refused).
ApiError DeleteOperation(Context&, const Call&, json&);
ApiError CancelOperation(Context&, const Call&, json&);

ApiError CreateNode(Context&, const Call&, json&);
ApiError DeleteNode(Context&, const Call&, json&);
ApiError StartNode(Context&, const Call&, json&);
ApiError StopNode(Context&, const Call&, json&);
ApiError PatchNode(Context&, const Call&, json&);
ApiError GetGuestAttributes(Context&, const Call&, json&);
// tpusim extensions.
ApiError SimulatePreemption(Context&, const Call&, json&);
ApiError SimulateMaintenance(Context&, const Call&, json&);
ApiError ReportJob(Context&, const Call&, json&);

ApiError CreateQueuedResource(Context&, const Call&, json&);
ApiError DeleteQueuedResource(Context&, const Call&, json&);
ApiError ResetQueuedResource(Context&, const Call&, json&);

ApiError ListAcceleratorTypes(Context&, const Call&, json&);
ApiError GetAcceleratorType(Context&, const Call&, json&);
ApiError ListRuntimeVersions(Context&, const Call&, json&);
ApiError GetRuntimeVersion(Context&, const Call&, json&);

// The world's own changes up to ctx.now (simulation.cc): long-running
// changes finish, queued resources are served or expire, spot nodes are
// preempted and maintenance windows open and close. `elapsed` is the
// simulated time since the last tick, for the random processes.
ApiError AdvanceWorld(Context& ctx, double elapsed);

}  // namespace tpusim::cloud

#endif  // TPUSIM_CLOUD_HANDLERS_H_
