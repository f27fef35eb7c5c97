// `tpusim model`: the model library, a model's sizes, and its train step
// emitted as a global StableHLO program for `tpusim run` and the planner.
#ifndef TPUSIM_PLANNER_MODEL_COMMAND_H_
#define TPUSIM_PLANNER_MODEL_COMMAND_H_

#include <cstdio>
#include <string>

#include "tpusim/base/status.h"
#include "tpusim/model/train_step.h"

namespace tpusim::planner {

struct ModelCommand {
  bool list = false;
  std::string name;            // a library model...
  std::string file;            // ...or a TOML model file
  std::string emit;            // where the step goes; empty: describe the model
  std::string kind = "train";  // the step: train, prefill or decode
  int64_t context = -1;        // decode: tokens in the KV cache (default: seq - 1)
  std::string params;          // with a family as `name`: "8b"
  std::string mesh;            // "data=2,fsdp=4,tensor=2"
  std::string remat = "full";
  // The weights' type; empty: f32 (with f32 moments) for a train step, the
  // activations' type for a serving step, as served models are stored.
  std::string param_dtype;
  model::TrainStepOptions step;  // its param_dtype is set from the above
};

// Lists, describes or emits as `c` says, writing to `out`. Errors name the
// flag or file at fault; a file is written whole or not at all.
Status RunModelCommand(const ModelCommand& c, std::FILE* out);

}  // namespace tpusim::planner

#endif  // TPUSIM_PLANNER_MODEL_COMMAND_H_
