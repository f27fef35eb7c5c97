// Checkpoints of a training loop's state in a directory:
//
//   DIR/step-<n>/state<i>.npy   one .npy file (a shard) per state tensor
//   DIR/manifest.json           {"version": 1, "step": n, "shards": [{"file":
//                               "step-<n>/state0.npy", "dtype": "f32",
//                               "shape": [16]}, ...]}
//
// A checkpoint's shards are written and synced to disk before its manifest
// replaces the last one by an atomic rename, so a crash at any point leaves
// the previous manifest or the new one, and a manifest names only complete
// shards. The manifest's dtype is the state's own element type; a shard
// holds it as .npy does (bf16 widened to float32, io/npy.h).
//
// Not thread-safe: one writer per directory. Readers (another process
// reporting the last step) may read while it writes.
#ifndef TPUSIM_RUNTIME_CHECKPOINT_H_
#define TPUSIM_RUNTIME_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/type.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::runtime {

struct Manifest {
  struct Shard {
    std::string file;  // relative to the checkpoint directory
    ir::Type type;     // a tensor type
  };
  int64_t step = 0;
  std::vector<Shard> shards;  // one per state tensor, in order
};

// The manifest of the checkpoint in `dir`. kNotFound if there is none (no
// checkpoint yet); kInvalidArgument naming the file if it is malformed.
// Leftover temporary files of an interrupted write are ignored.
StatusOr<Manifest> ReadManifest(const std::string& dir);

// Writes `tensors` as the checkpoint of step `step` into `dir` (created if
// missing) and publishes its manifest; then removes the step directories
// but this one and the one before. REQUIRES: every tensor is an array
// (kInvalidArgument otherwise). kResourceExhausted if a file cannot be
// written; the previous checkpoint then stays the current one.
Status WriteCheckpoint(const std::string& dir, int64_t step, const std::vector<Tensor>& tensors);

// The tensors of `manifest`'s checkpoint in `dir`, checked against `types`
// (what the caller's state is): kInvalidArgument if the manifest holds
// other types or a shard other values than it says, kNotFound for a
// missing shard.
StatusOr<std::vector<Tensor>> LoadCheckpoint(const std::string& dir, const Manifest& manifest,
                                             const std::vector<ir::Type>& types);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_CHECKPOINT_H_
