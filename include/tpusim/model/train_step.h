// A model's training step as a global StableHLO program, as JAX lowers a
// jitted step: forward, backward and AdamW over parameters stacked by
// layer, the layers a loop (a scan), shardings on a named mesh for the SPMD
// partitioner to split.
#ifndef TPUSIM_MODEL_TRAIN_STEP_H_
#define TPUSIM_MODEL_TRAIN_STEP_H_

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/model/model.h"

namespace tpusim::model {

struct TrainStepOptions {
  int64_t batch = 1;  // global, in sequences
  int64_t seq = 0;    // 0: the model's max_seq
  // Element type of activations and matmul inputs; parameters and the
  // optimizer's moments are kept in `param_dtype`.
  std::string dtype = "bf16";
  std::string param_dtype = "f32";
  // The mesh: axes from "data" (splits the batch), "fsdp" (splits the batch
  // and every weight's model dimension), "expert" (a mixture of experts'
  // only: splits the batch, the experts, and the other weights' model
  // dimension as fsdp does), "tensor" (splits heads and the MLP's hidden
  // units) and "sequence" (splits the sequence, and with fsdp the weights;
  // the train step only), with their sizes. Empty: no shardings.
  std::vector<std::pair<std::string, int64_t>> mesh;
  int64_t MeshSize(const std::string& axis) const {
    for (const auto& [name, size] : mesh) {
      if (name == axis) return size;
    }
    return 1;
  }
  double learning_rate = 1e-4, beta1 = 0.9, beta2 = 0.95, epsilon = 1e-8, weight_decay = 0.1;
  double norm_epsilon = 1e-5;
  // Attention as one fused kernel (tpusim.flash_attention), as MaxText runs
  // it on TPUs; false spells it out in matmuls and a softmax, the [S, S]
  // scores in HBM.
  bool flash_attention = true;
  // What the forward pass keeps for the backward pass (MaxText's
  // remat_policy): kFull keeps each layer's input and recomputes the layer;
  // kSelective also keeps every matmul's output (the projections and
  // attention's output) and recomputes norms, activations and attention's
  // probabilities; kNone keeps all of it. kCustom keeps the layer's input
  // and the tensors `keep` names, by MaxText's names (query_proj, key_proj,
  // value_proj, context, out_proj, mlpwi_0, mlpwi_1, mlpwo), sends those
  // `offload` names to host memory (decoder_layer_input too) and brings
  // them back for the backward pass, and recomputes the rest.
  enum class Remat { kFull, kSelective, kNone, kCustom } remat = Remat::kFull;
  std::set<std::string> keep, offload;
  // The batch as this many microbatches in sequence, their gradients summed
  // before one AdamW update (MaxText's gradient_accumulation_steps).
  int64_t microbatches = 1;
  // The projections' matmuls in fp8, as Transformer Engine's recipe: e4m3
  // activations and weights, e5m2 gradients, each scaled per tensor by its
  // absolute maximum, f32 accumulation; the master weights stay in
  // param_dtype. The logits' projection and attention stay in dtype.
  bool fp8 = false;
  // The same matmuls in int8, as MaxText's quantization=int8 (AQT's
  // symmetric int8): each operand scaled per tensor by its absolute maximum
  // over 127 and rounded, i32 accumulation, the product scaled back in f32.
  // Not with fp8.
  bool int8 = false;
  // A mixture of experts' slots per expert and sequence, as a multiple of
  // its fair share (k seq / experts): tokens past them are dropped (their
  // expert adds nothing), as GShard and MaxText do. <= 0: none dropped.
  double capacity_factor = 1.25;
};

// As the command line spells them: "full", "selective", "none", "custom".
const char* RematName(TrainStepOptions::Remat r);
// Sets options.remat (and options.keep, options.offload) from a policy as
// --remat spells it: full, selective or none; MaxText's remat_policy names
// (minimal, minimal_with_context, save_dot_with_context_except_mlp,
// save_dot_except_mlpwi, save_dot_except_mlp, save_qkv_proj, save_out_proj,
// qkv_proj_offloaded, minimal_offloaded); or
// "custom:NAME=device|offload|remat,...".
Status SetRemat(const std::string& policy, TrainStepOptions& options);

// The step as StableHLO text: @main(parameters..., first moments...,
// second moments..., step, tokens, targets) -> (the same updated..., loss).
// The backward pass recomputes what options.remat did not keep; with
// microbatches, a loop over them sums the gradients. kInvalidArgument for
// options that cannot be (a microbatch the mesh's batch axes do not
// divide, an expert axis that does not divide the experts, a seq its
// sequence axis does not divide or longer than the model's learned
// position table).
StatusOr<std::string> EmitTrainStep(const ModelSpec& spec, const TrainStepOptions& options);

}  // namespace tpusim::model

#endif  // TPUSIM_MODEL_TRAIN_STEP_H_
