// Model families as data: the decoder-only transformers the planner builds
// programs for (Llama, Gemma, GPT-3 style, PaLM, Mixtral), read from TOML
// files (models/*.toml, built into the binary, or a user's own), with their
// sizes and the FLOPs a training step does.
#ifndef TPUSIM_MODEL_MODEL_H_
#define TPUSIM_MODEL_MODEL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"

namespace tpusim::model {

enum class Mlp : uint8_t {
  kSwiGlu,  // silu(x W_gate) * (x W_up), then W_down: three matrices
  kGeGlu,   // gelu in place of silu
  kGelu,    // gelu(x W_up) W_down: two matrices
};

enum class Norm : uint8_t { kRmsNorm, kLayerNorm };

// As model files spell them: "swiglu", "rmsnorm".
const char* MlpName(Mlp m);
const char* NormName(Norm n);

struct ModelSpec {
  std::string name;         // "llama3-8b"
  std::string description;  // "Llama 3 8B"
  std::vector<std::string> sources;
  double published_params = 0;  // as its sources give it; 0: none published
  // The size its name states where no count is published (MaxText's
  // scaled configurations: "32b" counts 31.66B); 0: none.
  double nominal_params = 0;

  int64_t layers = 0, d_model = 0, heads = 0, kv_heads = 0, head_dim = 0, d_ff = 0, vocab = 0;
  Mlp mlp = Mlp::kSwiGlu;
  Norm norm = Norm::kRmsNorm;
  bool bias = false;             // on every projection and norm
  bool tied_embeddings = false;  // the output projection is the embedding's transpose
  // PaLM's block: attention and MLP both read one norm of the layer's input
  // and add to it, x + attn(n(x)) + mlp(n(x)), in place of two in sequence.
  bool parallel_layers = false;
  int64_t position_embeddings = 0;  // learned positions (GPT-3); 0: rotary or none
  int64_t max_seq = 0;
  int64_t experts = 1, experts_per_token = 1;  // mixture of experts when experts > 1

  bool IsMoe() const { return experts > 1; }
};

// Parameter counts by where they live.
struct ParamCounts {
  int64_t embedding = 0;  // token (and position) embeddings, untied output projection
  int64_t per_layer = 0;  // attention, MLP (every expert), norms, router
  int64_t final_norm = 0;
  int64_t total = 0;
  // What one token uses: per_layer with experts_per_token of the experts,
  // and every other parameter but the embeddings' lookup tables.
  int64_t active_non_embedding = 0;
};

ParamCounts CountParams(const ModelSpec& spec);

// Model FLOPs of training on one token with `seq` tokens of context, as
// MaxText and PaLM's appendix count them: 6 per active non-embedding
// parameter (forward and backward), the output projection included, plus
// 12 * layers * heads * head_dim * seq for attention's two matmuls (causal
// masking not discounted).
double TrainingFlopsPerToken(const ModelSpec& spec, int64_t seq);

// Reads a model from TOML `text`; `filename` names it in errors, which
// give file:line:col where the text says it.
StatusOr<ModelSpec> LoadModelToml(std::string_view text, const std::string& filename);

// The models built into tpusim, by name.
const std::vector<ModelSpec>& Library();

// The library's model `name`; kNotFound naming the known ones.
StatusOr<ModelSpec> FindModel(std::string_view name);

}  // namespace tpusim::model

#endif  // TPUSIM_MODEL_MODEL_H_
