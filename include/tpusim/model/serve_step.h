// A model's serving steps as global StableHLO programs, as JetStream-style
// servers run them: prefill (a batch of prompts through every layer, their
// keys and values kept as the KV cache) and decode (one new token per
// sequence, attending to the cache). Weights in the activations' type,
// sharded over a mesh of data (sequences) and tensor (heads, MLP units),
// and expert (a mixture's experts, and sequences) for a mixture of experts.
#ifndef TPUSIM_MODEL_SERVE_STEP_H_
#define TPUSIM_MODEL_SERVE_STEP_H_

#include <cstdint>
#include <string>

#include "tpusim/base/status.h"
#include "tpusim/model/model.h"
#include "tpusim/model/train_step.h"

namespace tpusim::model {

// @main(weights..., tokens [batch, seq]) -> (logits [batch, vocab] of the
// last position, k cache, v cache [layers, batch, seq, kv_heads, head_dim]).
// options.seq is the prompt length; options.mesh names data and tensor (a
// sequence axis is kUnimplemented).
// Errors as EmitTrainStep.
StatusOr<std::string> EmitPrefillStep(const ModelSpec& spec, const TrainStepOptions& options);

// @main(weights..., k cache, v cache [layers, batch, context + 1, kv_heads,
// head_dim], tokens [batch, 1]) -> (logits [batch, vocab], the caches with
// the new token's keys and values at position `context`; donated).
// Attention reads the whole cache: `context` tokens and the new one.
StatusOr<std::string> EmitDecodeStep(const ModelSpec& spec, const TrainStepOptions& options,
                                     int64_t context);

}  // namespace tpusim::model

#endif  // TPUSIM_MODEL_SERVE_STEP_H_
