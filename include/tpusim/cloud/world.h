// The simulated world behind the Cloud TPU emulator (tpusim cloud serve):
// which zones exist and how many chips of each generation they hold, what
// each project may use, how fast simulated time runs and how often spot
// nodes are preempted and maintenance comes. A capacity TOML file gives it;
// docs/cloud.md describes the file.
#ifndef TPUSIM_CLOUD_WORLD_H_
#define TPUSIM_CLOUD_WORLD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"

namespace tpusim::cloud {

struct Zone {
  std::string name;                      // "us-central2-b"
  std::map<std::string, int64_t> chips;  // by generation ("v4", "v5p", "v5litepod")
};

struct WorldConfig {
  std::vector<Zone> zones;
  // Chips of a generation one project may hold in one zone; a generation
  // missing from both maps is not limited.
  std::map<std::string, int64_t> default_quota;
  std::map<std::string, std::map<std::string, int64_t>> project_quota;
  std::vector<std::string> runtime_versions;

  uint64_t seed = 1;  // of the preemption and maintenance processes
  // Simulated time at which a new state starts (Unix seconds); unset: the
  // real time then.
  std::optional<double> start;
  double speed = 1;  // simulated seconds per real second
  // Simulated seconds each long-running change takes.
  double create_seconds = 120, delete_seconds = 30, stop_seconds = 30, start_seconds = 60;
  double spot_preemptions_per_hour = 0;  // per spot or preemptible node
  double maintenance_per_day = 0;        // per node
  double maintenance_notice_seconds = 3600, maintenance_seconds = 1800;

  // Null if no zone has that name.
  const Zone* FindZone(std::string_view name) const;
  // The chips of `generation` that `project` may hold in a zone, or nullopt
  // for no limit.
  std::optional<int64_t> Quota(const std::string& project, const std::string& generation) const;
};

// Reads a capacity file. kInvalidArgument with file:line:col for malformed
// TOML, unknown keys, negative numbers, unknown generations or a world
// without zones.
StatusOr<WorldConfig> ParseWorldConfig(std::string_view text, const std::string& filename);

// The generation part of a canonical accelerator type ("v5p" of "v5p-128").
std::string GenerationOf(std::string_view accelerator_type);

}  // namespace tpusim::cloud

#endif  // TPUSIM_CLOUD_WORLD_H_
