// The builder behind the model's programs: a train step (train_step.cc)
// and the serving steps (serve_step.cc) share its layers, norms, attention
// and shardings. Internal to src/model.
#ifndef TPUSIM_SRC_MODEL_STEP_BUILDER_H_
#define TPUSIM_SRC_MODEL_STEP_BUILDER_H_

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model/hlo_writer.h"
#include "tpusim/model/model.h"
#include "tpusim/model/train_step.h"

namespace tpusim::model {

// A parameter: its name, shape and the mesh axes of each dimension.
struct Param {
  std::string name;
  Dims shape;
  std::vector<std::vector<std::string>> axes;
  bool per_layer = true;  // stacked by layer: the loops carry it
};

// One layer's weights, in the compute type; biases (`_b`) absent (no name)
// where the model has none. A mixture of experts' gate, up and down are
// [experts, ...] stacks.
struct Weights {
  Val norm1, wq, wk, wv, wo, norm2, gate, up, down, router;
  Val norm1_b, wq_b, wk_b, wv_b, wo_b, norm2_b, gate_b, up_b, down_b;
};

// What a mixture of experts' MLP computes (moe.cc), kept for its backward
// pass: the router's logits [b, s, E], the experts each token chose (a 0/1
// mask), their gate weights, the dispatch one-hots [b, s, E, C] and the
// combine weights (dispatch x gates), the experts' inputs [b, E, C, d], their
// gate, up and activation [E, b, C, f] and their outputs [E, b, C, d].
struct MoeActs {
  Val logits, chosen, gates, dispatch, combine, x, gate, up, act, out;
};

// What a layer's forward pass computes, kept for its backward pass.
struct LayerActs {
  Val x, h1, q, k, v, p, o, x2, h2, gate, up, act, y;
  Val o4, lse;       // flash attention's output per head and its log-sum-exps
  Val k_new, v_new;  // the layer's keys and values, [b, s, kv, d]: a KV cache's
  MoeActs moe;
};

// A LayerActs field that the forward loop keeps for the backward pass: its
// shape and type in one layer, its mesh axes as the layer computes it and
// as the stack stores it, and whether the stack is in host memory.
struct SavedAct {
  Val LayerActs::*field;
  Dims shape;
  std::string element;
  std::vector<std::vector<std::string>> axes, stored_axes;
  bool offload = false;
};

// A batch's gradients, by parameter name, in the parameters' type, and
// its share of the mean loss.
struct BatchGrads {
  std::map<std::string, Val> grads;
  Val loss;
};

class StepBuilder {
 public:
  StepBuilder(const ModelSpec& m, const TrainStepOptions& o)
      : m_(m),
        o_(o),
        b_(o.batch / std::max<int64_t>(o.microbatches, 1)),
        s_(o.seq > 0 ? o.seq : m.max_seq),
        d_(m.d_model),
        h_(m.heads),
        kv_(m.kv_heads),
        hd_(m.head_dim),
        f_(m.d_ff) {}

  // The programs (StableHLO text): the train step (train_step.cc); the
  // serving steps (serve_step.cc).
  std::string BuildTrain();
  std::string BuildPrefill();
  std::string BuildDecode(int64_t context);

 private:
  bool Gated() const { return m_.mlp != Mlp::kGelu; }
  // Kv heads the tensor axis cannot split go to flash attention repeated
  // once per query head, so that it splits the query heads; their
  // gradients then sum over each group (Megatron's multi-query layout).
  bool RepeatKv() const { return kv_ != h_ && kv_ % o_.MeshSize("tensor") != 0; }
  // [b, s, kv, d] to [b, s, heads, d], each kv head serving heads / kv; and
  // back, summing a group's gradients.
  Val RepeatHeads(const Val& x) {
    const int64_t t = x.shape[1];  // s_, or a KV cache's length
    return w_.Reshape(w_.Broadcast(x, {b_, t, kv_, h_ / kv_, hd_}, {0, 1, 2, 4}), {b_, t, h_, hd_});
  }
  Val SumGroups(const Val& x) {
    return w_.Reduce("add", w_.Reshape(x, {b_, s_, kv_, h_ / kv_, hd_}), {3});
  }
  std::vector<Param> Params() const;
  // The mesh axes that split the batch, and those that split a weight's
  // model dimension (FSDP's): "expert" is in both, as in MaxText's
  // activation_batch and embed rules, but a server keeps its weights whole
  // along d_model and splits only the experts over it. "sequence" splits
  // the model dimension too (MaxText's embed rule), not the batch.
  std::vector<std::string> BatchAxes() const { return {"data", "fsdp", "expert"}; }
  std::vector<std::string> FsdpAxes() const {
    return serving_ ? std::vector<std::string>{"fsdp"}
                    : std::vector<std::string>{"fsdp", "sequence", "expert"};
  }
  std::string Sharding(const std::vector<std::vector<std::string>>& axes) const;
  // Activations split by batch and sequence (and the logits by vocabulary
  // over tensor): constraints as MaxText puts them, where the partitioner
  // would otherwise follow a weight's sharding.
  std::string BatchSharding(int64_t rank) const;
  std::string LogitsSharding() const { return Sharding({BatchAxes(), {"sequence"}, {"tensor"}}); }
  // Sequence (context) parallelism: sequence_parallel.cc.
  // The query rows' positions, for flash attention's causal mask.
  Val Positions() { return w_.Iota({s_}, 0, "i32"); }
  // dk or dv ([b, t, heads, d], or [b, heads, t, d] when `heads_first`),
  // partial sums over the sequence axis, reduce-scattered along t.
  Val SplitKvGrad(const Val& x, bool heads_first);
  // The embedding table gathered over fsdp for the lookup, as FSDP gathers
  // every weight before use: each device then looks up its own tokens.
  Val LookupTable(const Val& embed) { return w_.Constraint(embed, Sharding({{"tensor"}, {}})); }
  Val Scalar(double v, const std::string& element) { return w_.Splat(v, {}, element); }
  Val Fill(double v, const Val& like) { return w_.Splat(v, like.shape, like.element); }
  // a (op) b, b's dimensions the leading ones of a's.
  Val Lead(const std::string& op, const Val& a, const Val& b) { return w_.BinaryLeading(op, a, b); }
  // a (op) b for b of a's last dimension.
  Val Trail(const std::string& op, const Val& a, const Val& b) {
    return w_.Binary(op, a, w_.Broadcast(b, a.shape, {a.rank() - 1}));
  }
  Val Add(const Val& a, const Val& b) { return w_.Binary("add", a, b); }
  Val Mul(const Val& a, const Val& b) { return w_.Binary("multiply", a, b); }
  Val Sub(const Val& a, const Val& b) { return w_.Binary("subtract", a, b); }
  // A projection's three matmuls, in fp8 or int8 with options.fp8 or
  // options.int8 (quantized_matmul.cc).
  // x W (+ b) over x's last dimension and W's first.
  Val Proj(const Val& x, const Val& w, const Val& b = {}) {
    return Biased(Matmul(x, kE4M3, w, kE4M3, {2}, {0}, o_.dtype), b);
  }
  // dy W^T.
  Val ProjBack(const Val& dy, const Val& w) {
    return Matmul(dy, kE5M2, w, kE4M3, {2}, {1}, o_.dtype);
  }
  // x^T dy over the batch and sequence: a weight's gradient, accumulated
  // into the parameters' type as the MXU does (its partial sums over the
  // batch then reduce-scatter straight into the weight's sharding).
  Val WeightGrad(const Val& x, const Val& dy) {
    return Matmul(x, kE4M3, dy, kE5M2, {0, 1}, {0, 1}, o_.param_dtype);
  }
  // fp8 formats: activations and weights, and gradients (wider range).
  static constexpr const char* kE4M3 = "f8E4M3FN";
  static constexpr const char* kE5M2 = "f8E5M2";
  // a . b contracting `ca` with `cb`, in `out`; with options.fp8, a in
  // format `fa` and b in `fb`, each scaled to its format's range; with
  // options.int8, both in int8.
  Val Matmul(const Val& a, const char* fa, const Val& b, const char* fb, const Dims& ca,
             const Dims& cb, const std::string& out);
  // x's absolute maximum over `largest`: the scalar x is divided by.
  Val Scale(const Val& x, double largest);
  // x in fp8 `format`, divided by `scale` (an f32 scalar: x's absolute
  // maximum over the format's largest value).
  Val Quantize(const Val& x, const char* format, Val& scale);
  // x rounded to int8 after division by `scale` (an f32 scalar: x's
  // absolute maximum over 127).
  Val QuantizeInt8(const Val& x, Val& scale);

  Val Rsqrt(const Val& x);
  // The model's norm (RMSNorm or LayerNorm) over the last dimension, scaled
  // by g (and shifted by b).
  Val Norm(const Val& x, const Val& g, const Val& b = {});
  // dx of Norm(x, g) for dy; its scale's gradient in `dg`.
  Val NormBack(const Val& x, const Val& g, const Val& dy, Val& dg);
  Val RmsNormBack(const Val& x, const Val& g, const Val& dy, Val& dg);
  Val LayerNormBack(const Val& x, const Val& g, const Val& dy, Val& dg);
  // x - mean(x) over the last dimension, and 1 / sqrt(mean(x^2) + eps) of
  // what that leaves (of x itself for RMSNorm).
  Val Centered(const Val& x);
  Val InvRms(const Val& x);
  Val Mean(const Val& x) {
    const Val s = w_.Reduce("add", x, {2});
    return w_.Binary("divide", s, Fill(static_cast<double>(d_), s));
  }
  Val Activation(const Val& x);      // silu or gelu
  Val ActivationGrad(const Val& x);  // its derivative
  LayerActs Forward(const Weights& w, const Val& x);
  // The layer's first norm and its q, k and v (a.h1, a.q, a.k_new, a.v_new,
  // each unless already set; a.k and a.v as attention reads them).
  void Qkv(const Weights& w, LayerActs& a);
  // Attention's output (a.o, and for flash attention a.o4 and a.lse; else
  // the probabilities a.p) from a.q, a.k and a.v, each unless already set.
  void Attend(LayerActs& a);
  // [b, s, kv, d] keys or values as attention reads them (repeated per
  // query head where it must).
  Val KvHeads(const Val& kv);
  // Causal softmax(q k^T / sqrt(d)): [b, heads, s, t].
  Val Probs(const Val& q, const Val& k);
  // What the forward loop keeps, by options.remat (remat.cc).
  std::vector<SavedAct> SavedActs() const;
  // A layer's activations from what was kept of them, the rest recomputed.
  LayerActs Restore(const Weights& w, const LayerActs& saved);
  // Forward and backward over `tokens` [b, s] (the whole batch or one
  // microbatch) with parameters `p`.
  BatchGrads Gradients(const std::vector<Param>& params, const std::map<std::string, Val>& p,
                       const Val& tokens, const Val& targets);
  // The batch's microbatches in a loop, their gradients summed.
  BatchGrads Accumulate(const std::vector<Param>& params, const std::vector<Val>& ps,
                        const Val& tokens, const Val& targets);
  // The rest of the layer once attention's output a.o is known.
  LayerActs FinishLayer(const Weights& w, LayerActs& a);

  // Mixture of experts (moe.cc), as MaxText's dropping MoE lowers it.
  // The router [d, E] and the experts' [E, d, f], [E, f, d] weights.
  void AddMoeParams(std::vector<Param>& p) const;
  // Slots per expert per sequence: ceil(k seq capacity_factor / E), at
  // most seq; seq where capacity_factor <= 0 (no token dropped).
  int64_t Capacity(int64_t seq) const;
  // The MLP's output [b, s, d] for a.h2; its intermediates in a.moe.
  Val MoeMlp(const Weights& w, LayerActs& a);
  // The router's picks: a 0/1 mask [b, s, E] of the k largest logits per
  // token (ties to the lower index), and in `top` the largest logit.
  Val TopK(const Val& logits, Val& top);
  // Each chosen (token, expert)'s slot in its expert's buffer: the count of
  // earlier tokens of its sequence that chose the expert, [b, s, E].
  Val Slots(const Val& chosen);
  // dh2 for dy of the MLP's output; the weights' gradients in `grads`.
  Val MoeBack(const Weights& w, const LayerActs& a, const Val& dy,
              std::map<std::string, Val>& grads);
  // The experts' activations, E split over expert and the batch over the
  // rest of its axes; and their outputs back with the batch split over
  // every batch axis. Each change is an all-to-all over expert.
  std::string ByExpert(int64_t e_dim, int64_t b_dim, int64_t rank) const;
  std::string ByGroup(int64_t b_dim, int64_t rank) const;
  void AttentionBack(const LayerActs& a, const Val& dx2, const Weights& w, Val& dq2, Val& dk2,
                     Val& dv2);
  std::string FlashAttrs() const {
    char scale[64];
    std::snprintf(scale, sizeof scale, "%.17g", 1 / std::sqrt(static_cast<double>(hd_)));
    return std::string("causal = true, scale = ") + scale + " : f64";
  }
  // dx for dy; the weights' gradients in `grads` (by parameter name).
  Val Backward(const Weights& w, const LayerActs& a, const Val& dy,
               std::map<std::string, Val>& grads);
  Weights LayerWeights(const std::map<std::string, Val>& stacks, const Val& i);
  Val Loss(const Val& logits, const Val& targets, Val& dlogits);
  void AdamW(const Val& p, const Val& g, const Val& m, const Val& v, const Val& step,
             std::vector<Val>& out_p, std::vector<Val>& out_m, std::vector<Val>& out_v);
  // A while loop of `trips` iterations carrying `init` (the counter
  // first); `body` maps the carried values to their next ones. Returns the
  // results. Without `trips`, one iteration per layer.
  using LoopBody = std::function<std::vector<Val>(const std::vector<Val>&)>;
  std::vector<Val> Loop(int64_t trips, const std::vector<Val>& init, const LoopBody& body);
  std::vector<Val> Loop(const std::vector<Val>& init, const LoopBody& body) {
    return Loop(m_.layers, init, body);
  }
  // Where sums need more than the activations' type: the loss, the logits
  // and the router's scores, in f32 (f64 for f64 activations).
  std::string WideType() const { return o_.dtype == "f64" ? "f64" : "f32"; }

  // Serving: the weights as @main's arguments (per-layer stacks also in
  // `stacks`), the KV cache's sharding, and the last position's logits.
  std::map<std::string, Val> ServingWeights(std::map<std::string, Val>& stacks);
  std::string CacheSharding() const;
  Val Logits(const std::map<std::string, Val>& p, const Val& x);
  // One layer of a serving step: (weights, layer index, input, k and v
  // cache stacks) -> (output, the stacks updated).
  using ServingLayer = std::function<std::vector<Val>(const Weights&, const Val&, const Val&,
                                                      const Val&, const Val&)>;
  // @main's body: the embeddings of the tokens (at positions `first` on)
  // through the layers, carrying the caches, then the last position's
  // logits; returns the module.
  std::string ServingStep(const std::string& name, const Val& k_cache, const Val& v_cache,
                          const Val& tokens, int64_t first, const std::map<std::string, Val>& p,
                          const std::map<std::string, Val>& stacks, const ServingLayer& layer);
  // An argument of @main: its sharding, and whether its buffer is donated
  // (argument i's holds result i, as jax.jit's donate_argnums).
  Val Arg(const std::string& name, const Dims& shape, const std::string& element,
          const std::string& sharding, bool donate);
  // The module around @main's body, with the mesh and the results' types.
  std::string Module(const std::string& name, const std::string& result_types) const;

  // GPT-3's parts (gpt3_parts.cc): biases and learned positions.
  // The biases' and the position table's parameters, appended to `p`.
  void AddBiasAndPositionParams(std::vector<Param>& p) const;
  // LayerNorm's shift, on LayerNorm models with biases (RMSNorm has none).
  bool NormBias() const { return m_.bias && m_.norm == Norm::kLayerNorm; }
  // x + b along x's last dimension; x where b is absent.
  Val Biased(const Val& x, const Val& b) { return b.name.empty() ? x : Trail("add", x, b); }
  // grads[name] = dy summed over batch and sequence, in the parameters'
  // type: the gradient of the bias that was added to what dy is of.
  void BiasGrad(const std::string& name, const Val& dy, std::map<std::string, Val>& grads);
  // Parameter `name` of `p` in the compute type; absent if the model has none.
  Val Optional(const std::map<std::string, Val>& p, const std::string& name);
  // The rows of `table` (the token embeddings in the compute type) for
  // `tokens` [b, t], plus the learned embeddings of positions first ..
  // first + t - 1 where the model has them: [b, t, d].
  Val Embed(const std::map<std::string, Val>& p, const Val& table, const Val& tokens,
            int64_t first);
  // The position table's gradient from the embeddings' gradient `dx`
  // [b, s, d] (in the parameters' type): rows 0 .. s - 1, the rest zero.
  Val PositionGrad(const Val& dx);

  std::string signature_;
  int donated_ = 0;
  bool serving_ = false;  // ServingWeights sets it
  // Quantize's results in the region being written, by value and format
  // (scaled value, scale): a tensor two matmuls read (a weight forward and
  // backward, a layer input and its weight's gradient, a gradient dy) is
  // scaled and cast once. Loop bodies start afresh, and their entries go
  // with them.
  std::map<std::string, std::pair<Val, Val>> quantized_;
  const ModelSpec& m_;
  const TrainStepOptions& o_;
  const int64_t b_, s_, d_, h_, kv_, hd_, f_;
  HloWriter w_;
};

// OK, or why the sequence axis of `options` cannot split `seq` tokens
// (kInvalidArgument): sequence_parallel.cc.
Status CheckSequenceSplit(const TrainStepOptions& options, int64_t seq);

// OK, or why `spec` and `options` make no `step` ("train step"): what is not
// built yet (kUnimplemented), impossible options (kInvalidArgument).
Status CheckStep(const ModelSpec& spec, const TrainStepOptions& options, const std::string& step);
// OK, or why the mesh's expert axis cannot split `spec`'s experts (moe.cc).
Status CheckExpertAxis(const ModelSpec& spec, const TrainStepOptions& options);

}  // namespace tpusim::model

#endif  // TPUSIM_SRC_MODEL_STEP_BUILDER_H_
