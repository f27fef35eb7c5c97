#include "tpusim/model/train_step.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "model/step_builder.h"

namespace tpusim::model {

std::vector<Param> StepBuilder::Params() const {
  const int64_t l = m_.layers, q = h_ * hd_, k = kv_ * hd_;
  const std::vector<std::string> none, fsdp = FsdpAxes(), tensor = {"tensor"};
  // Fewer kv heads than the tensor axis (multi-query attention): every
  // device keeps all of them, as Megatron does.
  const std::vector<std::string> kv_tensor = kv_ % o_.MeshSize("tensor") == 0 ? tensor : none;
  std::vector<Param> p = {
      {"embed", {m_.vocab, d_}, {tensor, fsdp}, false}, {"norm1", {l, d_}, {none, none}},
      {"wq", {l, d_, q}, {none, fsdp, tensor}},         {"wk", {l, d_, k}, {none, fsdp, kv_tensor}},
      {"wv", {l, d_, k}, {none, fsdp, kv_tensor}},      {"wo", {l, q, d_}, {none, tensor, fsdp}},
  };
  if (!m_.parallel_layers) p.push_back({"norm2", {l, d_}, {none, none}});
  if (m_.IsMoe()) {
    AddMoeParams(p);
  } else {
    if (Gated()) p.push_back({"gate", {l, d_, f_}, {none, fsdp, tensor}});
    p.push_back({"up", {l, d_, f_}, {none, fsdp, tensor}});
    p.push_back({"down", {l, f_, d_}, {none, tensor, fsdp}});
  }
  p.push_back({"final_norm", {d_}, {none}, false});
  if (!m_.tied_embeddings) p.push_back({"unembed", {d_, m_.vocab}, {fsdp, tensor}, false});
  AddBiasAndPositionParams(p);
  return p;
}

// Axes the mesh lacks (or has of size 1) drop out.
std::string StepBuilder::Sharding(const std::vector<std::vector<std::string>>& axes) const {
  if (o_.mesh.empty()) return "";
  std::string s = "#sdy.sharding<@mesh, [";
  for (size_t d = 0; d < axes.size(); ++d) {
    std::string dim;
    for (const std::string& a : axes[d]) {
      for (const auto& [name, size] : o_.mesh) {
        if (name == a && size > 1) dim += std::string(dim.empty() ? "" : ", ") + "\"" + a + "\"";
      }
    }
    s += std::string(d ? ", " : "") + "{" + dim + "}";
  }
  return s + "]>";
}

std::string StepBuilder::BatchSharding(int64_t rank) const {
  std::vector<std::vector<std::string>> axes(rank);
  axes[0] = BatchAxes();
  if (rank > 1) axes[1] = {"sequence"};
  return Sharding(axes);
}

Val StepBuilder::Rsqrt(const Val& x) { return w_.Unary("rsqrt", x); }

Val StepBuilder::Centered(const Val& x) {
  return m_.norm == Norm::kLayerNorm ? Lead("subtract", x, Mean(x)) : x;
}

Val StepBuilder::InvRms(const Val& xc) {
  const Val ms = Mean(Mul(xc, xc));
  return Rsqrt(Add(ms, Fill(o_.norm_epsilon, ms)));
}

Val StepBuilder::Norm(const Val& x, const Val& g, const Val& b) {
  const Val xc = Centered(x);
  return Biased(Trail("multiply", Lead("multiply", xc, InvRms(xc)), g), b);
}

Val StepBuilder::NormBack(const Val& x, const Val& g, const Val& dy, Val& dg) {
  return m_.norm == Norm::kLayerNorm ? LayerNormBack(x, g, dy, dg) : RmsNormBack(x, g, dy, dg);
}

// y = g x r with r = (mean(x^2) + eps)^-1/2:
// dx = r (g dy) - x r^3 mean(g dy x), dg = sum(dy x r).
Val StepBuilder::RmsNormBack(const Val& x, const Val& g, const Val& dy, Val& dg) {
  const Val r = InvRms(x);
  dg = w_.Reduce("add", Mul(dy, Lead("multiply", x, r)), {0, 1});
  const Val gdy = Trail("multiply", dy, g);
  const Val r3c = Mul(Mul(Mul(r, r), r), Mean(Mul(gdy, x)));
  return Sub(Lead("multiply", gdy, r), Lead("multiply", x, r3c));
}

// y = g xh with xh = (x - mean(x)) r, r = (var(x) + eps)^-1/2:
// dx = r (g dy - mean(g dy) - xh mean(g dy xh)), dg = sum(dy xh).
Val StepBuilder::LayerNormBack(const Val& x, const Val& g, const Val& dy, Val& dg) {
  const Val xc = Centered(x);
  const Val r = InvRms(xc);
  const Val xh = Lead("multiply", xc, r);
  dg = w_.Reduce("add", Mul(dy, xh), {0, 1});
  const Val gdy = Trail("multiply", dy, g);
  const Val centered = Lead("subtract", gdy, Mean(gdy));
  return Lead("multiply", Sub(centered, Lead("multiply", xh, Mean(Mul(gdy, xh)))), r);
}

// silu(x) = x sigmoid(x); gelu by its tanh approximation, as JAX's default.
Val StepBuilder::Activation(const Val& x) {
  if (m_.mlp == Mlp::kSwiGlu) return Mul(x, w_.Unary("logistic", x));
  const Val x3 = Mul(Mul(x, x), x);
  const Val u = Mul(Fill(std::sqrt(2 / M_PI), x), Add(x, Mul(Fill(0.044715, x), x3)));
  return Mul(Mul(Fill(0.5, x), x), Add(Fill(1, x), w_.Unary("tanh", u)));
}

Val StepBuilder::ActivationGrad(const Val& x) {
  if (m_.mlp == Mlp::kSwiGlu) {
    const Val s = w_.Unary("logistic", x);
    return Mul(s, Add(Fill(1, x), Mul(x, Sub(Fill(1, x), s))));
  }
  const Val c = Fill(std::sqrt(2 / M_PI), x), a = Fill(0.044715, x), one = Fill(1, x);
  const Val xx = Mul(x, x);
  const Val t = w_.Unary("tanh", Mul(c, Add(x, Mul(a, Mul(xx, x)))));
  const Val du = Mul(c, Add(one, Mul(Fill(3 * 0.044715, x), xx)));
  const Val half = Fill(0.5, x);
  return Add(Mul(half, Add(one, t)), Mul(Mul(half, x), Mul(Sub(one, Mul(t, t)), du)));
}

LayerActs StepBuilder::Forward(const Weights& w, const Val& x) {
  LayerActs a;
  a.x = w_.Constraint(x, BatchSharding(3));
  Qkv(w, a);
  Attend(a);
  return FinishLayer(w, a);
}

void StepBuilder::Qkv(const Weights& w, LayerActs& a) {
  if (a.h1.name.empty()) a.h1 = Norm(a.x, w.norm1, w.norm1_b);
  if (a.q.name.empty()) a.q = w_.Reshape(Proj(a.h1, w.wq, w.wq_b), {b_, s_, h_, hd_});
  if (a.k_new.name.empty()) a.k_new = w_.Reshape(Proj(a.h1, w.wk, w.wk_b), {b_, s_, kv_, hd_});
  if (a.v_new.name.empty()) a.v_new = w_.Reshape(Proj(a.h1, w.wv, w.wv_b), {b_, s_, kv_, hd_});
  a.k = KvHeads(a.k_new);
  a.v = KvHeads(a.v_new);
}

void StepBuilder::Attend(LayerActs& a) {
  if (o_.flash_attention) {
    if (a.o4.name.empty()) {
      const std::vector<Val> r = w_.Generic("tpusim.flash_attention", {a.q, a.k, a.v, Positions()},
                                            {a.q, {"", {b_, h_, s_}, "f32"}}, FlashAttrs());
      a.o4 = r[0];
      a.lse = r[1];
    }
    a.o = w_.Reshape(a.o4, {b_, s_, h_ * hd_});
    return;
  }
  if (a.p.name.empty()) a.p = Probs(a.q, a.k);
  if (a.o.name.empty()) {
    const Val o = w_.Dot(a.p, a.v, {0, 1}, {0, 2}, {3}, {1});  // b h s d
    a.o = w_.Reshape(w_.Transpose(o, {0, 2, 1, 3}), {b_, s_, h_ * hd_});
  }
}

Val StepBuilder::KvHeads(const Val& kv) {
  const bool repeat = o_.flash_attention ? RepeatKv() : kv_ != h_;
  return repeat ? RepeatHeads(kv) : kv;
}

Val StepBuilder::Probs(const Val& q, const Val& k) {
  Val scores = w_.Dot(q, k, {0, 2}, {0, 2}, {3}, {3});  // b h s t
  scores = Mul(scores, Fill(1 / std::sqrt(static_cast<double>(hd_)), scores));
  // The causal mask, made once per (s, t) and broadcast over batch and heads.
  const Val is = w_.Iota({s_, s_}, 0, "i32"), it = w_.Iota({s_, s_}, 1, "i32");
  const Val causal = w_.Broadcast(w_.Compare("GE", is, it), scores.shape, {2, 3});
  scores = w_.Select(causal, scores, Fill(-1e9, scores));
  const Val e =
      w_.Unary("exponential", Lead("subtract", scores, w_.Reduce("maximum", scores, {3})));
  return Lead("divide", e, w_.Reduce("add", e, {3}));
}

LayerActs StepBuilder::FinishLayer(const Weights& w, LayerActs& a) {
  const Val attn = Proj(a.o, w.wo, w.wo_b);
  a.x2 = m_.parallel_layers ? a.x : Add(a.x, attn);
  a.h2 = m_.parallel_layers ? a.h1 : Norm(a.x2, w.norm2, w.norm2_b);
  Val mlp;
  if (m_.IsMoe()) {
    mlp = MoeMlp(w, a);
  } else {
    a.up = Proj(a.h2, w.up, w.up_b);
    if (Gated()) {
      a.gate = Proj(a.h2, w.gate, w.gate_b);
      a.act = Mul(Activation(a.gate), a.up);
    } else {
      a.act = Activation(a.up);
    }
    mlp = Proj(a.act, w.down, w.down_b);
  }
  // Side by side, the two branches' sums (partial over a tensor axis) add
  // before they meet the residual: one all-reduce for both, as in PaLM.
  a.y = m_.parallel_layers ? Add(a.x, Add(attn, mlp)) : Add(a.x2, mlp);
  return a;
}

Val StepBuilder::Backward(const Weights& w, const LayerActs& a, const Val& dy,
                          std::map<std::string, Val>& grads) {
  // MLP.
  Val dh2;
  if (m_.IsMoe()) {
    dh2 = MoeBack(w, a, dy, grads);
  } else {
    const Val dact = ProjBack(dy, w.down);
    grads["down"] = WeightGrad(a.act, dy);
    BiasGrad("down_bias", dy, grads);
    if (Gated()) {
      const Val dgate = Mul(Mul(dact, a.up), ActivationGrad(a.gate));
      const Val dup = Mul(dact, Activation(a.gate));
      grads["gate"] = WeightGrad(a.h2, dgate);
      grads["up"] = WeightGrad(a.h2, dup);
      BiasGrad("gate_bias", dgate, grads);
      BiasGrad("up_bias", dup, grads);
      dh2 = Add(ProjBack(dgate, w.gate), ProjBack(dup, w.up));
    } else {
      const Val dup = Mul(dact, ActivationGrad(a.up));
      grads["up"] = WeightGrad(a.h2, dup);
      BiasGrad("up_bias", dup, grads);
      dh2 = ProjBack(dup, w.up);
    }
  }
  // In a parallel block the MLP reads norm1's output: its gradient joins
  // attention's there, and the residual carries dy to x unchanged.
  const Val dx2 = m_.parallel_layers ? dy : Add(dy, NormBack(a.x2, w.norm2, dh2, grads["norm2"]));
  if (NormBias() && !m_.parallel_layers) BiasGrad("norm2_bias", dh2, grads);
  // Attention.
  grads["wo"] = WeightGrad(a.o, dx2);
  BiasGrad("wo_bias", dx2, grads);
  Val dq2, dk2, dv2;
  if (o_.flash_attention) {
    const Val dout4 = w_.Reshape(ProjBack(dx2, w.wo), {b_, s_, h_, hd_});
    const std::vector<Val> d =
        w_.Generic("tpusim.flash_attention_grad", {a.q, a.k, a.v, a.o4, a.lse, dout4, Positions()},
                   {a.q, a.k, a.v}, FlashAttrs());
    dq2 = w_.Reshape(d[0], {b_, s_, h_ * hd_});
    const Val dk = SplitKvGrad(d[1], false), dv = SplitKvGrad(d[2], false);
    dk2 = w_.Reshape(RepeatKv() ? SumGroups(dk) : dk, {b_, s_, kv_ * hd_});
    dv2 = w_.Reshape(RepeatKv() ? SumGroups(dv) : dv, {b_, s_, kv_ * hd_});
  } else {
    AttentionBack(a, dx2, w, dq2, dk2, dv2);
  }
  grads["wq"] = WeightGrad(a.h1, dq2);
  grads["wk"] = WeightGrad(a.h1, dk2);
  grads["wv"] = WeightGrad(a.h1, dv2);
  BiasGrad("wq_bias", dq2, grads);
  BiasGrad("wk_bias", dk2, grads);
  BiasGrad("wv_bias", dv2, grads);
  // The query's and (side by side) the MLP's input gradients, both partial
  // sums over a tensor axis, add first: one all-reduce for the two.
  Val dh1 = ProjBack(dq2, w.wq);
  if (m_.parallel_layers) dh1 = Add(dh1, dh2);
  dh1 = Add(Add(dh1, ProjBack(dk2, w.wk)), ProjBack(dv2, w.wv));
  if (NormBias()) BiasGrad("norm1_bias", dh1, grads);
  return Add(dx2, NormBack(a.x, w.norm1, dh1, grads["norm1"]));
}

// The spelled-out attention's backward pass: the gradients of the
// projections' outputs, [b, s, heads x d] each.
void StepBuilder::AttentionBack(const LayerActs& a, const Val& dx2, const Weights& w, Val& dq2,
                                Val& dk2, Val& dv2) {
  const Val dout = w_.Transpose(w_.Reshape(ProjBack(dx2, w.wo), {b_, s_, h_, hd_}), {0, 2, 1, 3});
  const Val dp = w_.Dot(dout, a.v, {0, 1}, {0, 2}, {3}, {3});                     // b h s t
  const Val dv = SplitKvGrad(w_.Dot(a.p, dout, {0, 1}, {0, 1}, {2}, {2}), true);  // b h t d
  const Val rowsum = w_.Reduce("add", Mul(dp, a.p), {3});
  Val dscores = Mul(a.p, Lead("subtract", dp, rowsum));
  dscores = Mul(dscores, Fill(1 / std::sqrt(static_cast<double>(hd_)), dscores));
  const Val dq = w_.Dot(dscores, a.k, {0, 1}, {0, 2}, {3}, {1});                     // b h s d
  const Val dk = SplitKvGrad(w_.Dot(dscores, a.q, {0, 1}, {0, 2}, {2}, {1}), true);  // b h t d
  const int64_t g = h_ / kv_;
  auto flat = [&](const Val& bhsd, int64_t heads) {
    Val bshd = w_.Transpose(bhsd, {0, 2, 1, 3});
    if (heads != h_) {  // a kv head's gradient sums its query heads'
      bshd = w_.Reduce("add", w_.Reshape(bshd, {b_, s_, heads, g, hd_}), {3});
    }
    return w_.Reshape(bshd, {b_, s_, heads * hd_});
  };
  dq2 = flat(dq, h_);
  dk2 = flat(dk, kv_);
  dv2 = flat(dv, kv_);
}

Weights StepBuilder::LayerWeights(const std::map<std::string, Val>& stacks, const Val& i) {
  static const std::pair<const char*, Val Weights::*> kFields[] = {
      {"norm1", &Weights::norm1},
      {"wq", &Weights::wq},
      {"wk", &Weights::wk},
      {"wv", &Weights::wv},
      {"wo", &Weights::wo},
      {"norm2", &Weights::norm2},
      {"gate", &Weights::gate},
      {"up", &Weights::up},
      {"down", &Weights::down},
      {"norm1_bias", &Weights::norm1_b},
      {"wq_bias", &Weights::wq_b},
      {"wk_bias", &Weights::wk_b},
      {"wv_bias", &Weights::wv_b},
      {"wo_bias", &Weights::wo_b},
      {"norm2_bias", &Weights::norm2_b},
      {"gate_bias", &Weights::gate_b},
      {"up_bias", &Weights::up_b},
      {"down_bias", &Weights::down_b},
      {"router", &Weights::router},
  };
  Weights w;
  for (const auto& [name, field] : kFields) {
    auto it = stacks.find(name);
    if (it != stacks.end()) w.*field = w_.Convert(w_.Layer(it->second, i), o_.dtype);
  }
  return w;
}

// Mean cross-entropy of `logits` (f32) against `targets`; its gradient in
// `dlogits`.
Val StepBuilder::Loss(const Val& logits, const Val& targets, Val& dlogits) {
  // Each kernel that reads the logits widens them itself and each that
  // reads the one-hot targets makes its own, as XLA duplicates a cheap
  // producer into its users: the logits stay in HBM in their own type and
  // no [b, s, vocab] mask is stored.
  auto wide = [&] { return w_.Convert(logits, WideType()); };
  auto hot = [&] {
    const Val vocab = w_.Constraint(w_.Iota(logits.shape, 2, "i32"), LogitsSharding());
    return w_.Compare("EQ", vocab, w_.Broadcast(targets, logits.shape, {0, 1}));
  };
  const Val mx = w_.Reduce("maximum", wide(), {2});
  const Val z = w_.Reduce("add", w_.Unary("exponential", Lead("subtract", wide(), mx)), {2});
  const Val lse = Add(w_.Unary("log", z), mx);
  auto splat = [&](double v) { return w_.Splat(v, logits.shape, WideType()); };
  const Val picked = w_.Reduce("add", w_.Select(hot(), wide(), splat(0)), {2});
  // The mean over the whole batch: microbatches' losses and gradients sum.
  const double tokens = static_cast<double>(o_.batch * s_);
  const Val loss =
      w_.Binary("divide", w_.Reduce("add", Sub(lse, picked), {0, 1}), Scalar(tokens, mx.element));
  // The gradient recomputes the probabilities from the logits and their
  // log-sum-exp in one kernel, as the cross entropy's VJP does.
  const Val softmax = w_.Unary("exponential", Lead("subtract", wide(), lse));
  const Val onehot = w_.Select(hot(), splat(1), splat(0));
  dlogits = w_.Binary("divide", Sub(softmax, onehot), splat(tokens));
  return loss;
}

void StepBuilder::AdamW(const Val& p, const Val& g, const Val& m, const Val& v, const Val& step,
                        std::vector<Val>& out_p, std::vector<Val>& out_m, std::vector<Val>& out_v) {
  const Val m2 = Add(Mul(Fill(o_.beta1, m), m), Mul(Fill(1 - o_.beta1, g), g));
  const Val v2 = Add(Mul(Fill(o_.beta2, v), v), Mul(Fill(1 - o_.beta2, g), Mul(g, g)));
  const Val t = w_.Convert(step, p.element);
  auto correction = [&](double beta) {  // 1 - beta^step
    const Val s = w_.Binary("power", Scalar(beta, t.element), t);
    return w_.Broadcast(Sub(Scalar(1, t.element), s), p.shape, {});
  };
  const Val mhat = w_.Binary("divide", m2, correction(o_.beta1));
  const Val vhat = w_.Binary("divide", v2, correction(o_.beta2));
  const Val update =
      Add(w_.Binary("divide", mhat, Add(w_.Unary("sqrt", vhat), Fill(o_.epsilon, p))),
          Mul(Fill(o_.weight_decay, p), p));
  out_p.push_back(Sub(p, Mul(Fill(o_.learning_rate, p), update)));
  out_m.push_back(m2);
  out_v.push_back(v2);
}

std::vector<Val> StepBuilder::Loop(int64_t trips, const std::vector<Val>& init,
                                   const LoopBody& body) {
  std::vector<Val> args;
  std::string header, types;
  for (size_t i = 0; i < init.size(); ++i) {
    args.push_back({w_.Fresh(), init[i].shape, init[i].element});
    header += std::string(i ? ", " : "") + args[i].name + " = " + init[i].name;
    types += std::string(i ? ", " : "") + init[i].Type();
  }
  const std::string name = w_.Fresh();
  w_.Line(name + ":" + std::to_string(init.size()) + " = stablehlo.while(" + header +
          ") : " + types);
  w_.Line("cond {");
  const Val limit = Scalar(static_cast<double>(trips), "i32");
  const Val more = w_.Compare("LT", args[0], limit);
  w_.Line("  stablehlo.return " + more.name + " : tensor<i1>");
  w_.Line("} do {");
  std::map<std::string, std::pair<Val, Val>> outer = std::move(quantized_);
  quantized_.clear();
  std::vector<Val> next = body(args);
  quantized_ = std::move(outer);
  std::string names;
  for (size_t i = 0; i < next.size(); ++i) names += std::string(i ? ", " : "") + next[i].name;
  w_.Line("  stablehlo.return " + names + " : " + types);
  w_.Line("}");
  std::vector<Val> results;
  for (size_t i = 0; i < init.size(); ++i) {
    results.push_back({name + "#" + std::to_string(i), init[i].shape, init[i].element});
  }
  return results;
}

BatchGrads StepBuilder::Gradients(const std::vector<Param>& params,
                                  const std::map<std::string, Val>& p, const Val& tokens,
                                  const Val& targets) {
  std::vector<std::string> layer_names;
  // A layer's gradient is sharded as its weight, so that the partial sums
  // over the batch reduce-scatter rather than all-reduce whole.
  std::vector<std::string> layer_shardings;
  for (const Param& q : params) {
    if (!q.per_layer) continue;
    layer_names.push_back(q.name);
    layer_shardings.push_back(Sharding({q.axes.begin() + 1, q.axes.end()}));
  }
  const size_t n = layer_names.size();
  const std::vector<SavedAct> saved = SavedActs();
  const size_t ns = saved.size();
  const Val one = Scalar(1, "i32");

  // Forward: the layers in a loop that keeps what the backward pass reads,
  // stacked by layer.
  const Val embed = w_.Convert(p.at("embed"), o_.dtype);
  std::vector<Val> init = {
      Scalar(0, "i32"), w_.Constraint(Embed(p, LookupTable(embed), tokens, 0), BatchSharding(3))};
  for (const SavedAct& sa : saved) {
    Dims shape = sa.shape;
    shape.insert(shape.begin(), m_.layers);
    std::vector<std::vector<std::string>> axes = sa.stored_axes;
    axes.insert(axes.begin(), std::vector<std::string>{});
    init.push_back(w_.Constraint(w_.Splat(0, shape, sa.element), Sharding(axes)));
  }
  for (const std::string& name : layer_names) init.push_back(p.at(name));
  const std::vector<Val> fwd = Loop(init, [&](const std::vector<Val>& a) {
    std::map<std::string, Val> st;
    for (size_t k = 0; k < n; ++k) st[layer_names[k]] = a[2 + ns + k];
    const LayerActs acts = Forward(LayerWeights(st, a[0]), a[1]);
    std::vector<Val> next = {Add(a[0], one), acts.y};
    for (size_t k = 0; k < ns; ++k) {
      Val layer = acts.*saved[k].field;
      // Stored as the stack is split, then moved: each device its own shard.
      if (saved[k].offload) {
        layer = w_.Place(w_.Constraint(layer, Sharding(saved[k].stored_axes)), "pinned_host");
      }
      next.push_back(w_.SetLayer(a[2 + k], layer, a[0]));
    }
    next.insert(next.end(), a.begin() + 2 + static_cast<int64_t>(ns), a.end());
    return next;
  });

  // The head and the loss.
  const Val final_norm = w_.Convert(p.at("final_norm"), o_.dtype);
  const Val hf =
      w_.Constraint(Norm(fwd[1], final_norm, Optional(p, "final_norm_bias")), BatchSharding(3));
  const Val out = m_.tied_embeddings ? embed : w_.Convert(p.at("unembed"), o_.dtype);
  const Val logits =
      w_.Constraint(w_.Dot(hf, out, {}, {}, {2}, {m_.tied_embeddings ? 1 : 0}), LogitsSharding());
  Val dlogits;
  BatchGrads r;
  r.loss = Loss(logits, targets, dlogits);
  dlogits = w_.Convert(dlogits, o_.dtype);
  const Val dhf = w_.Dot(dlogits, out, {}, {}, {2}, {m_.tied_embeddings ? 0 : 1});
  const Val dout = w_.Dot(hf, dlogits, {}, {}, {0, 1}, {0, 1}, o_.param_dtype);  // d x vocab
  Val dfinal;
  const Val dx_last = NormBack(fwd[1], final_norm, dhf, dfinal);

  // Backward: the layers in reverse, each restored from what was kept.
  std::vector<Val> binit = {Scalar(0, "i32"), dx_last};
  binit.insert(binit.end(), fwd.begin() + 2, fwd.begin() + 2 + static_cast<int64_t>(ns));
  for (const std::string& name : layer_names) binit.push_back(p.at(name));
  for (const Param& q : params) {
    if (q.per_layer) {
      binit.push_back(w_.Constraint(w_.Splat(0, q.shape, o_.param_dtype), Sharding(q.axes)));
    }
  }
  const size_t weights_at = 2 + ns, grads_at = weights_at + n;
  const std::vector<Val> bwd = Loop(binit, [&](const std::vector<Val>& a) {
    const Val i = Sub(Scalar(static_cast<double>(m_.layers - 1), "i32"), a[0]);
    std::map<std::string, Val> st;
    for (size_t k = 0; k < n; ++k) st[layer_names[k]] = a[weights_at + k];
    const Weights weights = LayerWeights(st, i);
    LayerActs kept;
    for (size_t k = 0; k < ns; ++k) {
      Val layer = w_.Layer(a[2 + k], i);
      if (saved[k].offload) layer = w_.Place(layer, "device");
      // Restore constrains the layer's input as Forward does.
      kept.*saved[k].field = k == 0 ? layer : w_.Constraint(layer, Sharding(saved[k].axes));
    }
    std::map<std::string, Val> grads;
    const Val dx = Backward(weights, Restore(weights, kept), a[1], grads);
    std::vector<Val> next = {Add(a[0], one), dx};
    next.insert(next.end(), a.begin() + 2, a.begin() + static_cast<int64_t>(grads_at));
    for (size_t k = 0; k < n; ++k) {
      const Val g =
          w_.Constraint(w_.Convert(grads[layer_names[k]], o_.param_dtype), layer_shardings[k]);
      next.push_back(w_.SetLayer(a[grads_at + k], g, i));
    }
    return next;
  });

  for (size_t k = 0; k < n; ++k) r.grads[layer_names[k]] = bwd[grads_at + k];
  // The embedding's gradient split over fsdp (and expert, sequence) along
  // d_model, as the table is: the tokens' gradients trade their fsdp split
  // of the batch (and sequence split) for one of d_model (all-to-alls), so
  // that no device holds the whole table.
  const Val dtokens =
      w_.Constraint(w_.Convert(bwd[1], o_.param_dtype), Sharding({{"data"}, {}, FsdpAxes()}));
  Val dembed = w_.Constraint(w_.ScatterAdd(tokens, dtokens, m_.vocab), Sharding({{}, FsdpAxes()}));
  const Val dout_p = w_.Convert(dout, o_.param_dtype);
  if (m_.tied_embeddings) {
    dembed = Add(dembed, w_.Transpose(dout_p, {1, 0}));
  } else {
    r.grads["unembed"] = dout_p;
  }
  r.grads["embed"] = dembed;
  r.grads["final_norm"] = w_.Convert(dfinal, o_.param_dtype);
  if (NormBias()) BiasGrad("final_norm_bias", dhf, r.grads);
  if (m_.position_embeddings > 0) r.grads["positions"] = PositionGrad(dtokens);
  return r;
}

// Microbatch m takes rows b x M + m of the batch: split over the mesh as
// the batch is, so that taking one moves nothing between devices.
BatchGrads StepBuilder::Accumulate(const std::vector<Param>& params, const std::vector<Val>& ps,
                                   const Val& tokens, const Val& targets) {
  const int64_t mb = o_.microbatches;
  auto split = [&](const Val& t) {
    return w_.Constraint(w_.Reshape(t, {b_, mb, s_}), BatchSharding(3));
  };
  std::vector<Val> init = {Scalar(0, "i32"), split(tokens), split(targets), Scalar(0, WideType())};
  init.insert(init.end(), ps.begin(), ps.end());
  for (const Param& q : params) {
    init.push_back(w_.Constraint(w_.Splat(0, q.shape, o_.param_dtype), Sharding(q.axes)));
  }
  const size_t n = params.size(), grads_at = 4 + n;
  const std::vector<Val> out = Loop(mb, init, [&](const std::vector<Val>& a) {
    std::map<std::string, Val> p;
    for (size_t k = 0; k < n; ++k) p[params[k].name] = a[4 + k];
    auto take = [&](const Val& t) { return w_.Constraint(w_.Take(t, 1, a[0]), BatchSharding(2)); };
    BatchGrads g = Gradients(params, p, take(a[1]), take(a[2]));
    std::vector<Val> next = {Add(a[0], Scalar(1, "i32")), a[1], a[2], Add(a[3], g.loss)};
    next.insert(next.end(), a.begin() + 4, a.begin() + static_cast<int64_t>(grads_at));
    for (size_t k = 0; k < n; ++k) {
      next.push_back(Add(a[grads_at + k], g.grads.at(params[k].name)));
    }
    return next;
  });
  BatchGrads r;
  r.loss = out[3];
  for (size_t k = 0; k < n; ++k) r.grads[params[k].name] = out[grads_at + k];
  return r;
}

std::string StepBuilder::BuildTrain() {
  const std::vector<Param> params = Params();
  std::map<std::string, Val> p;
  std::vector<Val> ps, ms, vs;
  for (const char* prefix : {"", "m_", "v_"}) {
    for (const Param& q : params) {
      Val v = Arg(prefix + q.name, q.shape, o_.param_dtype, Sharding(q.axes), true);
      (prefix[0] == 0 ? ps : prefix[0] == 'm' ? ms : vs).push_back(v);
      if (prefix[0] == 0) p[q.name] = v;
    }
  }
  const Val step = Arg("step", {}, "f32", "", false);
  const Dims batch = {o_.batch, s_};
  const Val tokens = Arg("tokens", batch, "i32", BatchSharding(2), false);
  const Val targets = Arg("targets", batch, "i32", BatchSharding(2), false);
  const BatchGrads g = o_.microbatches > 1 ? Accumulate(params, ps, tokens, targets)
                                           : Gradients(params, p, tokens, targets);

  std::vector<Val> new_p, new_m, new_v;
  for (size_t k = 0; k < params.size(); ++k) {
    AdamW(ps[k], g.grads.at(params[k].name), ms[k], vs[k], step, new_p, new_m, new_v);
  }
  std::string returned, result_types, sharded_types;
  for (const std::vector<Val>* group : {&new_p, &new_m, &new_v}) {
    for (size_t k = 0; k < group->size(); ++k) {
      returned += (returned.empty() ? "" : ", ") + (*group)[k].name;
      result_types += (result_types.empty() ? "" : ", ") + (*group)[k].Type();
      const std::string s = Sharding(params[k].axes);
      sharded_types += std::string(sharded_types.empty() ? "" : ", ") + (*group)[k].Type() +
                       (s.empty() ? "" : " {sdy.sharding = " + s + "}");
    }
  }
  returned += ", " + g.loss.name;
  result_types += ", " + g.loss.Type();
  sharded_types += ", " + g.loss.Type();
  w_.Line("return " + returned + " : " + result_types);

  return Module("train_step", sharded_types);
}

Val StepBuilder::Arg(const std::string& name, const Dims& shape, const std::string& element,
                     const std::string& sharding, bool donate) {
  Val v{"%" + name, shape, element};
  signature_ += std::string(signature_.empty() ? "" : ",\n      ") + v.name + ": " + v.Type();
  std::vector<std::string> attrs;
  if (!sharding.empty()) attrs.push_back("sdy.sharding = " + sharding);
  if (donate) attrs.push_back("tf.aliasing_output = " + std::to_string(donated_++) + " : i32");
  for (size_t i = 0; i < attrs.size(); ++i) signature_ += (i ? ", " : " {") + attrs[i];
  if (!attrs.empty()) signature_ += "}";
  return v;
}

std::string StepBuilder::Module(const std::string& name, const std::string& result_types) const {
  std::string module = "module @" + name;
  int64_t devices = 1;
  std::string mesh;
  for (const auto& [axis, size] : o_.mesh) {
    devices *= size;
    mesh += std::string(mesh.empty() ? "" : ", ") + "\"" + axis + "\"=" + std::to_string(size);
  }
  if (!o_.mesh.empty()) {
    module += " attributes {mhlo.num_partitions = " + std::to_string(devices) +
              " : i32, mhlo.num_replicas = 1 : i32}";
  }
  module += " {\n";
  if (!o_.mesh.empty()) module += "  sdy.mesh @mesh = <[" + mesh + "]>\n";
  module += "  func.func public @main(" + signature_ + ")\n      -> (" + result_types + ") {\n";
  return module + w_.text() + "  }\n}\n";
}

Status CheckStep(const ModelSpec& spec, const TrainStepOptions& options, const std::string& step) {
  const int64_t seq = options.seq > 0 ? options.seq : spec.max_seq;
  if (options.batch <= 0 || seq <= 0) return InvalidArgument("batch and seq must be > 0");
  if (spec.position_embeddings > 0 && seq > spec.position_embeddings) {
    return InvalidArgument("the " + step + " of " + spec.name + ": seq " + std::to_string(seq) +
                           " exceeds the " + std::to_string(spec.position_embeddings) +
                           " positions of its position table");
  }
  int64_t batch_split = 1;
  for (const auto& [name, size] : options.mesh) {
    if (name != "data" && name != "fsdp" && name != "expert" && name != "tensor" &&
        name != "sequence") {
      return InvalidArgument("mesh axis '" + name +
                             "': expected data, fsdp, expert, tensor or sequence");
    }
    if (size < 1) return InvalidArgument("mesh axis '" + name + "' must have size >= 1");
    if (name != "tensor" && name != "sequence") batch_split *= size;
  }
  TPUSIM_RETURN_IF_ERROR(CheckSequenceSplit(options, seq));
  const int64_t mb = options.microbatches;
  if (mb < 1 || options.batch % mb != 0) {
    return InvalidArgument("a batch of " + std::to_string(options.batch) + " does not split into " +
                           std::to_string(mb) + " microbatches");
  }
  if (options.batch / mb % batch_split != 0) {
    return InvalidArgument(
        (mb > 1 ? "a microbatch of " : "a batch of ") + std::to_string(options.batch / mb) +
        " does not split over data x fsdp x expert = " + std::to_string(batch_split));
  }
  TPUSIM_RETURN_IF_ERROR(CheckExpertAxis(spec, options));
  // Query heads and the MLP split evenly over tensor, as Megatron splits
  // them (kv heads it cannot split are kept whole on every device).
  if (const int64_t t = options.MeshSize("tensor"); spec.heads % t != 0 || spec.d_ff % t != 0) {
    return InvalidArgument("mesh axis 'tensor' = " + std::to_string(t) +
                           " does not divide the " + std::to_string(spec.heads) +
                           " query heads and the MLP's " + std::to_string(spec.d_ff) +
                           " hidden units of " + spec.name);
  }
  if (options.fp8 && options.int8) return InvalidArgument("--fp8 and --int8: choose one");
  for (const std::string& t : {options.dtype, options.param_dtype}) {
    if (t != "f32" && t != "bf16" && t != "f64") {
      return InvalidArgument("element type '" + t + "': expected f32, bf16 or f64");
    }
  }
  return Status::Ok();
}

StatusOr<std::string> EmitTrainStep(const ModelSpec& spec, const TrainStepOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckStep(spec, options, "train step"));
  return StepBuilder(spec, options).BuildTrain();
}

}  // namespace tpusim::model
