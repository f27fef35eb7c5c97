// `run --mesh data=2,model=4` and `--shard arg0=data,_`: a device mesh and
// shardings given on the command line, written into a program as the
// Shardy attributes JAX would have printed, so that the SPMD partitioner
// splits it as if it had been lowered that way.
#ifndef TPUSIM_RUNTIME_SHARDING_FLAGS_H_
#define TPUSIM_RUNTIME_SHARDING_FLAGS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::runtime {

// Adds `mesh` ("name=size,..."; empty: none) to `module` as `sdy.mesh @mesh`
// and sets its partition count to the mesh's devices; then gives each
// argument or result named in `shards` ("arg0=data,_", "x=data+model,_",
// "result0=_,model": per dimension `_` or axes joined by '+') that sharding
// over the mesh, replacing any it had. kInvalidArgument names the flag and
// what is wrong: a malformed flag, a program with meshes of its own given
// --mesh, an unknown argument or axis, an axis used twice, a dimension
// count that is not the value's rank.
// A mesh flag ("data=2,fsdp=4") as (axis, size) pairs, major first.
// kInvalidArgument naming the flag: a malformed entry, a size outside
// 1..4096, an axis named twice, more than 65536 devices.
StatusOr<std::vector<std::pair<std::string, int64_t>>> ParseMeshFlag(const std::string& spec);

Status ApplyShardingFlags(const std::string& mesh, const std::vector<std::string>& shards,
                          ir::Module& module, ir::Function& f);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_SHARDING_FLAGS_H_
