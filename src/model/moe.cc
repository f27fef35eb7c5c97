// A mixture of experts' MLP in the model's steps, as MaxText's dropping MoE
// lowers it (GShard's dense dispatch by einsums): the router picks k
// experts per token, each token takes the next free slot of its experts'
// buffers of C slots per sequence (dropped past them), one-hot dispatch and
// combine tensors [b, s, E, C] move the tokens into [E, b, C, d] and back,
// and each expert is a SwiGLU (or GeGLU, GELU) MLP over its slots.
#include <algorithm>
#include <cmath>

#include "model/step_builder.h"

namespace tpusim::model {

void StepBuilder::AddMoeParams(std::vector<Param>& p) const {
  const int64_t l = m_.layers, e = m_.experts;
  const std::vector<std::string> none, expert = {"expert"}, fsdp = {"fsdp"}, tensor = {"tensor"};
  p.push_back({"router", {l, d_, e}, {none, none, none}});  // small: kept whole
  if (Gated()) p.push_back({"gate", {l, e, d_, f_}, {none, expert, fsdp, tensor}});
  p.push_back({"up", {l, e, d_, f_}, {none, expert, fsdp, tensor}});
  p.push_back({"down", {l, e, f_, d_}, {none, expert, tensor, fsdp}});
}

int64_t StepBuilder::Capacity(int64_t seq) const {
  if (o_.capacity_factor <= 0) return seq;
  const double fair = static_cast<double>(m_.experts_per_token * seq) / m_.experts;
  const auto c = static_cast<int64_t>(std::ceil(fair * o_.capacity_factor));
  return std::clamp<int64_t>(c, 1, seq);  // a token fills at most one slot per expert
}

std::string StepBuilder::ByExpert(int64_t e_dim, int64_t b_dim, int64_t rank) const {
  std::vector<std::vector<std::string>> axes(rank);
  axes[e_dim] = {"expert"};
  axes[b_dim] = {"data", "fsdp"};
  return Sharding(axes);
}

std::string StepBuilder::ByGroup(int64_t b_dim, int64_t rank) const {
  std::vector<std::vector<std::string>> axes(rank);
  axes[b_dim] = BatchAxes();
  return Sharding(axes);
}

// k rounds of a max over the experts, each masking its pick for the next:
// reduces, compares and selects, which split by token, in place of a sort.
Val StepBuilder::TopK(const Val& logits, Val& top) {
  // E - index: among equal logits the lowest index ranks highest.
  const Val rank =
      Sub(Fill(static_cast<double>(m_.experts), logits), w_.Iota(logits.shape, 2, logits.element));
  Val left = logits, chosen = Fill(0, logits);
  for (int64_t r = 0; r < m_.experts_per_token; ++r) {
    const Val best = w_.Reduce("maximum", left, {2});
    if (r == 0) top = best;
    const Val at_max = w_.Compare("EQ", left, w_.Broadcast(best, left.shape, {0, 1}));
    const Val first = w_.Reduce("maximum", w_.Select(at_max, rank, Fill(0, rank)), {2});
    const Val pick = w_.Compare("EQ", rank, w_.Broadcast(first, rank.shape, {0, 1}));
    chosen = w_.Select(pick, Fill(1, chosen), chosen);
    left = w_.Select(pick, Fill(-1e30, left), left);
  }
  return chosen;
}

// A strictly lower-triangular [s, s] matmul counts, per sequence, the
// earlier tokens that chose each expert: 0/1 operands (exact in bf16),
// sums in the chosen mask's type (exact in f32 to 2^24 tokens).
Val StepBuilder::Slots(const Val& chosen) {
  const int64_t s = chosen.shape[1];
  const Val t = w_.Iota({s, s}, 0, "i32"), earlier = w_.Iota({s, s}, 1, "i32");
  const Val one = w_.Splat(1, {s, s}, o_.dtype), zero = w_.Splat(0, {s, s}, o_.dtype);
  const Val tri = w_.Select(w_.Compare("GT", t, earlier), one, zero);
  const Val counts = w_.Dot(w_.Convert(chosen, o_.dtype), tri, {}, {}, {1}, {1}, chosen.element);
  return w_.Transpose(counts, {0, 2, 1});  // [b, E, s] -> [b, s, E]
}

Val StepBuilder::MoeMlp(const Weights& w, LayerActs& a) {
  MoeActs& m = a.moe;
  const std::string acc = WideType();
  const int64_t b = a.h2.shape[0], s = a.h2.shape[1];
  const Dims bsec = {b, s, m_.experts, Capacity(s)};
  m.logits = w_.Dot(a.h2, w.router, {}, {}, {2}, {0}, acc);
  Val top;
  m.chosen = TopK(m.logits, top);
  // Mixtral's gates: a softmax over the chosen experts' logits.
  const Val e = Mul(w_.Unary("exponential", Lead("subtract", m.logits, top)), m.chosen);
  m.gates = Lead("divide", e, w_.Reduce("add", e, {2}));
  // A chosen expert's slot past the capacity matches no slot: dropped.
  const Val slot = w_.Broadcast(Slots(m.chosen), bsec, {0, 1, 2});
  const Val at = w_.Compare("EQ", slot, w_.Iota(bsec, 3, acc));
  const Val hot = w_.Broadcast(m.chosen, bsec, {0, 1, 2});
  const Val dispatch = w_.Select(at, hot, Fill(0, hot));
  m.dispatch = w_.Convert(dispatch, o_.dtype);
  m.combine = w_.Convert(Mul(dispatch, w_.Broadcast(m.gates, bsec, {0, 1, 2})), o_.dtype);
  // [b, E, C, d]: the first all-to-all hands each device its experts' slots.
  m.x = w_.Constraint(w_.Dot(m.dispatch, a.h2, {0}, {0}, {1}, {1}), ByExpert(1, 0, 4));
  auto in = [&](const Val& wt) { return w_.Dot(m.x, wt, {1}, {0}, {3}, {1}); };  // E b C f
  m.up = in(w.up);
  if (Gated()) {
    m.gate = in(w.gate);
    m.act = Mul(Activation(m.gate), m.up);
  } else {
    m.act = Activation(m.up);
  }
  // [E, b, C, d], back to the tokens' devices by the second all-to-all.
  m.out = w_.Constraint(w_.Dot(m.act, w.down, {0}, {0}, {3}, {1}), ByGroup(1, 4));
  return w_.Dot(m.combine, m.out, {0}, {1}, {2, 3}, {0, 2});  // b s d
}

Val StepBuilder::MoeBack(const Weights& w, const LayerActs& a, const Val& dy,
                         std::map<std::string, Val>& grads) {
  const MoeActs& m = a.moe;
  const std::string acc = m.logits.element;
  // y = sum over (e, c) of combine [b, s, e, c] out [e, b, c, d].
  const Val dout = w_.Constraint(w_.Dot(m.combine, dy, {0}, {0}, {1}, {1}), ByExpert(1, 0, 4));
  const Val dcombine = w_.Dot(dy, m.out, {0}, {1}, {2}, {3}, acc);  // b s E C
  // combine = dispatch x gates: a gate's gradient is its slot's.
  const Val dgates = w_.Reduce("add", Mul(dcombine, w_.Convert(m.dispatch, acc)), {3});
  // The experts' MLPs.
  const Val dact = w_.Dot(dout, w.down, {1}, {0}, {3}, {2});  // E b C f
  grads["down"] = w_.Dot(m.act, dout, {0}, {1}, {1, 2}, {0, 2}, o_.param_dtype);
  auto back = [&](const Val& dz, const Val& wt) { return w_.Dot(dz, wt, {0}, {0}, {3}, {2}); };
  auto grad = [&](const Val& dz) {  // E d f
    return w_.Dot(m.x, dz, {1}, {0}, {0, 2}, {1, 2}, o_.param_dtype);
  };
  Val dx;
  if (Gated()) {
    const Val dgate = Mul(Mul(dact, m.up), ActivationGrad(m.gate));
    const Val dup = Mul(dact, Activation(m.gate));
    grads["gate"] = grad(dgate);
    grads["up"] = grad(dup);
    dx = Add(back(dgate, w.gate), back(dup, w.up));
  } else {
    const Val dup = Mul(dact, ActivationGrad(m.up));
    grads["up"] = grad(dup);
    dx = back(dup, w.up);
  }
  // x = sum over s of dispatch [b, s, e, c] h2 [b, s, d].
  dx = w_.Constraint(dx, ByGroup(1, 4));
  const Val dh2 = w_.Dot(m.dispatch, dx, {0}, {1}, {2, 3}, {0, 2});
  // The gates' softmax over the chosen logits; the choice itself is
  // piecewise constant, so no gradient reaches the logits through it.
  const Val dot = w_.Reduce("add", Mul(m.gates, dgates), {2});
  const Val dlogits = w_.Convert(Mul(m.gates, Lead("subtract", dgates, dot)), o_.dtype);
  grads["router"] = WeightGrad(a.h2, dlogits);
  return Add(dh2, ProjBack(dlogits, w.router));
}

Status CheckExpertAxis(const ModelSpec& spec, const TrainStepOptions& options) {
  const int64_t n = options.MeshSize("expert");
  if (n == 1) return Status::Ok();
  if (!spec.IsMoe()) {
    return InvalidArgument("mesh axis 'expert': " + spec.name + " has no experts to split");
  }
  if (spec.experts % n != 0) {
    return InvalidArgument("mesh axis 'expert' = " + std::to_string(n) + " does not divide the " +
                           std::to_string(spec.experts) + " experts of " + spec.name);
  }
  return Status::Ok();
}

}  // namespace tpusim::model
