#include "tpusim/model/serve_step.h"

#include "model/step_builder.h"

namespace tpusim::model {

// The weights, unsharded by fsdp (a server keeps them whole per tensor
// shard), as read-only arguments. The embedding table is kept whole on
// every device, so that a step's few lookups gather nothing.
std::map<std::string, Val> StepBuilder::ServingWeights(std::map<std::string, Val>& stacks) {
  serving_ = true;
  std::map<std::string, Val> p;
  for (const Param& q : Params()) {
    const std::string sharding = q.name == "embed" ? Sharding({{}, {}}) : Sharding(q.axes);
    const Val v = Arg(q.name, q.shape, o_.param_dtype, sharding, false);
    p[q.name] = v;
    if (q.per_layer) stacks[q.name] = v;
  }
  return p;
}

// [layers, batch, length, kv heads, d]: split by batch, and by kv head where
// the tensor axis divides them.
std::string StepBuilder::CacheSharding() const {
  std::vector<std::string> kv;
  if (kv_ % o_.MeshSize("tensor") == 0) kv = {"tensor"};
  return Sharding({{}, BatchAxes(), {}, kv, {}});
}

// The final norm and the logits of `x` [b, 1, d]: [b, vocab], in f32 (or
// f64 for f64 activations).
Val StepBuilder::Logits(const std::map<std::string, Val>& p, const Val& x) {
  const Val hf = Norm(x, w_.Convert(p.at("final_norm"), o_.dtype), Optional(p, "final_norm_bias"));
  const std::string f = WideType();
  const Val logits = m_.tied_embeddings
                         ? w_.Dot(hf, w_.Convert(p.at("embed"), o_.dtype), {}, {}, {2}, {1}, f)
                         : w_.Dot(hf, w_.Convert(p.at("unembed"), o_.dtype), {}, {}, {2}, {0}, f);
  return w_.Reshape(logits, {b_, m_.vocab});
}

std::string StepBuilder::ServingStep(const std::string& name, const Val& k_cache,
                                     const Val& v_cache, const Val& tokens, int64_t first,
                                     const std::map<std::string, Val>& p,
                                     const std::map<std::string, Val>& stacks,
                                     const ServingLayer& layer) {
  std::vector<std::string> names;
  std::vector<Val> init = {
      Scalar(0, "i32"),
      w_.Constraint(Embed(p, w_.Convert(p.at("embed"), o_.dtype), tokens, first), BatchSharding(3)),
      k_cache, v_cache};
  for (const auto& [stack, v] : stacks) {
    names.push_back(stack);
    init.push_back(v);
  }
  const std::vector<Val> out = Loop(init, [&](const std::vector<Val>& a) {
    std::map<std::string, Val> st;
    for (size_t k = 0; k < names.size(); ++k) st[names[k]] = a[4 + k];
    std::vector<Val> next = {Add(a[0], Scalar(1, "i32"))};
    const std::vector<Val> done = layer(LayerWeights(st, a[0]), a[0], a[1], a[2], a[3]);
    next.insert(next.end(), done.begin(), done.end());
    next.insert(next.end(), a.begin() + 4, a.end());
    return next;
  });
  const Val last = out[1].shape[1] == 1 ? out[1] : w_.Slice(out[1], 1, s_ - 1, s_);
  const Val logits = Logits(p, last);
  w_.Line("return " + logits.name + ", " + out[2].name + ", " + out[3].name + " : " +
          logits.Type() + ", " + out[2].Type() + ", " + out[3].Type());
  const std::string cache = o_.mesh.empty() ? "" : " {sdy.sharding = " + CacheSharding() + "}";
  return Module(name, logits.Type() + ", " + out[2].Type() + cache + ", " + out[3].Type() + cache);
}

std::string StepBuilder::BuildPrefill() {
  std::map<std::string, Val> stacks;
  const std::map<std::string, Val> p = ServingWeights(stacks);
  const Val tokens = Arg("tokens", {b_, s_}, "i32", BatchSharding(2), false);
  const Val cache =
      w_.Constraint(w_.Splat(0, {m_.layers, b_, s_, kv_, hd_}, o_.dtype), CacheSharding());
  return ServingStep(
      "prefill_step", cache, cache, tokens, 0, p, stacks,
      [&](const Weights& w, const Val& i, const Val& x, const Val& kc,
          const Val& vc) -> std::vector<Val> {
        const LayerActs acts = Forward(w, x);
        return {acts.y, w_.SetLayer(kc, acts.k_new, i), w_.SetLayer(vc, acts.v_new, i)};
      });
}

std::string StepBuilder::BuildDecode(int64_t context) {
  std::map<std::string, Val> stacks;
  const std::map<std::string, Val> p = ServingWeights(stacks);
  const Dims cache_shape = {m_.layers, b_, context + 1, kv_, hd_};
  const Val k_cache = Arg("k_cache", cache_shape, o_.dtype, CacheSharding(), true);
  const Val v_cache = Arg("v_cache", cache_shape, o_.dtype, CacheSharding(), true);
  const Val tokens = Arg("tokens", {b_, 1}, "i32", BatchSharding(2), false);
  return ServingStep(
      "decode_step", k_cache, v_cache, tokens, context, p, stacks,
      [&](const Weights& w, const Val& i, const Val& x, const Val& k_stack,
          const Val& v_stack) -> std::vector<Val> {
        LayerActs acts;
        acts.x = w_.Constraint(x, BatchSharding(3));
        acts.h1 = Norm(acts.x, w.norm1, w.norm1_b);
        acts.q = w_.Reshape(Proj(acts.h1, w.wq, w.wq_b), {b_, 1, h_, hd_});
        // The new token's key and value go in at `context`; attention reads
        // the layer's whole cache, every position valid (no mask).
        const Val zero = Scalar(0, "i32"), at = Scalar(static_cast<double>(context), "i32");
        auto store = [&](const Val& stack, const Val& wkv, const Val& bias) {
          const Val kv = w_.Reshape(Proj(acts.h1, wkv, bias), {1, b_, 1, kv_, hd_});
          return w_.UpdateSlice(stack, kv, {i, zero, at, zero, zero});
        };
        const Val kc = store(k_stack, w.wk, w.wk_b), vc = store(v_stack, w.wv, w.wv_b);
        acts.k = w_.Layer(kc, i);
        acts.v = w_.Layer(vc, i);
        if (RepeatKv()) {
          acts.k = RepeatHeads(acts.k);
          acts.v = RepeatHeads(acts.v);
        }
        const std::string scale = FlashAttrs().substr(FlashAttrs().find("scale"));
        const std::vector<Val> r =
            w_.Generic("tpusim.flash_attention", {acts.q, acts.k, acts.v},
                       {acts.q, {"", {b_, h_, 1}, "f32"}}, "causal = false, " + scale);
        acts.o = w_.Reshape(r[0], {b_, 1, h_ * hd_});
        FinishLayer(w, acts);
        return {acts.y, kc, vc};
      });
}

namespace {

// Serving keeps each sequence on one device: its cache is split by batch
// and kv head only.
Status NoSequenceAxis(const ModelSpec& spec, const TrainStepOptions& options,
                      const std::string& step) {
  if (options.MeshSize("sequence") <= 1) return Status::Ok();
  return Unimplemented("the " + step + " of " + spec.name +
                       ": a sequence axis is not built yet (serving splits the batch and heads)");
}

}  // namespace

StatusOr<std::string> EmitPrefillStep(const ModelSpec& spec, const TrainStepOptions& options) {
  TPUSIM_RETURN_IF_ERROR(NoSequenceAxis(spec, options, "prefill step"));
  TPUSIM_RETURN_IF_ERROR(CheckStep(spec, options, "prefill step"));
  TrainStepOptions flash = options;
  flash.flash_attention = true;  // the cache keeps the kernel's keys and values
  return StepBuilder(spec, flash).BuildPrefill();
}

StatusOr<std::string> EmitDecodeStep(const ModelSpec& spec, const TrainStepOptions& options,
                                     int64_t context) {
  if (context < 0) return InvalidArgument("the context must be >= 0 tokens");
  TPUSIM_RETURN_IF_ERROR(NoSequenceAxis(spec, options, "decode step"));
  if (spec.position_embeddings > 0 && context >= spec.position_embeddings) {
    return InvalidArgument("the decode step of " + spec.name + ": position " +
                           std::to_string(context) + " is past the " +
                           std::to_string(spec.position_embeddings) +
                           " positions of its position table");
  }
  TrainStepOptions one = options;
  one.seq = 1;
  TPUSIM_RETURN_IF_ERROR(CheckStep(spec, one, "decode step"));
  return StepBuilder(spec, one).BuildDecode(context);
}

}  // namespace tpusim::model
