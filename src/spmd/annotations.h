// What a global program says about shardings, read onto the device mesh:
// its arguments' and results' `mhlo.sharding` / `sdy.sharding`, its
// constraint ops and ops' own shardings. Internal to src/spmd.
#ifndef TPUSIM_SPMD_ANNOTATIONS_H_
#define TPUSIM_SPMD_ANNOTATIONS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spmd/mesh.h"
#include "tpusim/ir/ir.h"

namespace tpusim::spmd {

// GSPMD's `custom_call @Sharding` or Shardy's sharding_constraint / reshard:
// the value, to be held as the op says.
bool IsShardingConstraint(const ir::Operation& op);

// An op only a per-device program has: a collective, partition_id, or a
// shard_map region's boundary.
bool WorksPerDevice(const ir::Operation& op);

bool HasSharding(const ir::AttributeMap& attrs);

// Whether `op` names the {manual} sharding (a GSPMD manual region's).
bool HasManualSharding(const ir::Module& module, const ir::Operation& op);

// `custom_call @target`.
bool IsCustomCall(const ir::Operation& op, std::string_view target);

// Reads shardings of `module`'s values onto `mesh`, checking that each
// sharded dimension divides evenly.
class Annotations {
 public:
  Annotations(const ir::Module& module, const Mesh& mesh) : module_(module), mesh_(mesh) {}

  // Replicated where the program says nothing.
  StatusOr<Sharding> Arg(const ir::Function& f, int i) const;
  StatusOr<Sharding> Result(const ir::Function& f, int i) const;
  // The sharding of constraint `op` (IsShardingConstraint).
  StatusOr<Sharding> Constraint(const ir::Operation& op) const;
  // The shardings `op` gives its results; nullopt when it names none, and
  // for results beyond a tuple sharding's elements.
  StatusOr<std::vector<std::optional<Sharding>>> OpResults(const ir::Operation& op) const;

  StatusOr<Sharding> OnMesh(const ir::HloSharding& s, const ir::Type& type) const;
  // A `#sdy.sharding` attribute for a value of `type`.
  StatusOr<Sharding> Sdy(const ir::Attribute& sharding, const ir::Type& type) const;

 private:
  StatusOr<Sharding> OrReplicated(const StatusOr<std::optional<ir::HloSharding>>& s,
                                  const ir::Type& type) const;

  const ir::Module& module_;
  const Mesh& mesh_;
  // Sdy's results by the attribute's text and the value's rank: a program
  // names few shardings, each checked device by device once.
  mutable std::map<std::pair<std::string, int64_t>, Sharding> sdy_;
};

}  // namespace tpusim::spmd

#endif  // TPUSIM_SPMD_ANNOTATIONS_H_
