// Rematerialization: what the forward loop keeps of each layer for the
// backward pass, and how the backward pass gets back the rest.
#include "model/step_builder.h"
#include "tpusim/model/train_step.h"

namespace tpusim::model {

const char* RematName(TrainStepOptions::Remat r) {
  switch (r) {
    case TrainStepOptions::Remat::kFull:
      return "full";
    case TrainStepOptions::Remat::kSelective:
      return "selective";
    case TrainStepOptions::Remat::kNone:
      return "none";
  }
  return "?";
}

StatusOr<TrainStepOptions::Remat> ParseRemat(const std::string& name) {
  for (auto r : {TrainStepOptions::Remat::kFull, TrainStepOptions::Remat::kSelective,
                 TrainStepOptions::Remat::kNone}) {
    if (name == RematName(r)) return r;
  }
  return InvalidArgument("remat policy '" + name + "': expected full, selective or none");
}

// Selective keeps the matmuls' outputs, as MaxText's minimal policy: the
// recomputed norms, activations and (spelled out) softmax cost no MXU time.
// A mixture of experts keeps none of its MLP's: its dispatch tensors
// would outweigh what recomputing them saves.
std::vector<SavedAct> StepBuilder::SavedActs() const {
  using Axes = std::vector<std::vector<std::string>>;
  const std::vector<std::string> batch = BatchAxes(), seq = {"sequence"}, whole,
                                 tensor = {"tensor"};
  const std::vector<std::string> kv_tensor = kv_ % o_.MeshSize("tensor") == 0 ? tensor : whole;
  const std::string& t = o_.dtype;
  // [b, s, d_model] values are stored split over tensor along d_model as
  // well: each device keeps a slice and gathers the layer's back for use.
  auto model_dim = [&](Val LayerActs::*field) {
    return SavedAct{field, {b_, s_, d_}, t, {batch, seq, whole}, {batch, seq, tensor}};
  };
  auto act = [&](Val LayerActs::*field, const Dims& shape, const std::string& element,
                 const Axes& axes) {
    return SavedAct{field, shape, element, axes, axes};
  };
  std::vector<SavedAct> out = {model_dim(&LayerActs::x)};
  if (o_.remat == TrainStepOptions::Remat::kFull) return out;
  const bool all = o_.remat == TrainStepOptions::Remat::kNone;
  if (all) out.push_back(model_dim(&LayerActs::h1));
  out.push_back(act(&LayerActs::q, {b_, s_, h_, hd_}, t, {batch, seq, tensor, whole}));
  out.push_back(act(&LayerActs::k_new, {b_, s_, kv_, hd_}, t, {batch, seq, kv_tensor, whole}));
  out.push_back(act(&LayerActs::v_new, {b_, s_, kv_, hd_}, t, {batch, seq, kv_tensor, whole}));
  if (o_.flash_attention) {
    out.push_back(act(&LayerActs::o4, {b_, s_, h_, hd_}, t, {batch, seq, tensor, whole}));
    out.push_back(act(&LayerActs::lse, {b_, h_, s_}, "f32", {batch, tensor, seq}));
  } else {
    if (all) out.push_back(act(&LayerActs::p, {b_, h_, s_, s_}, t, {batch, tensor, seq, whole}));
    out.push_back(act(&LayerActs::o, {b_, s_, h_ * hd_}, t, {batch, seq, tensor}));
  }
  if (!m_.parallel_layers) {
    out.push_back(model_dim(&LayerActs::x2));
    if (all) out.push_back(model_dim(&LayerActs::h2));
  }
  // A mixture of experts' MLP is recomputed from h2 (Restore).
  if (m_.IsMoe()) return out;
  const Axes hidden = {batch, seq, tensor};
  if (Gated()) out.push_back(act(&LayerActs::gate, {b_, s_, f_}, t, hidden));
  out.push_back(act(&LayerActs::up, {b_, s_, f_}, t, hidden));
  if (all) out.push_back(act(&LayerActs::act, {b_, s_, f_}, t, hidden));
  return out;
}

LayerActs StepBuilder::Restore(const Weights& w, const LayerActs& saved) {
  if (o_.remat == TrainStepOptions::Remat::kFull) return Forward(w, saved.x);
  LayerActs a = saved;
  a.x = w_.Constraint(saved.x, BatchSharding(3));
  if (a.h1.name.empty()) a.h1 = Norm(a.x, w.norm1, w.norm1_b);
  a.k = KvHeads(a.k_new);
  a.v = KvHeads(a.v_new);
  if (o_.flash_attention) {
    a.o = w_.Reshape(a.o4, {b_, s_, h_ * hd_});
  } else if (a.p.name.empty()) {
    a.p = Probs(a.q, a.k);
  }
  if (m_.parallel_layers) {
    a.x2 = a.x;
    a.h2 = a.h1;
  } else if (a.h2.name.empty()) {
    a.h2 = Norm(a.x2, w.norm2, w.norm2_b);
  }
  if (m_.IsMoe()) {
    MoeMlp(w, a);
  } else if (a.act.name.empty()) {
    a.act = Gated() ? Mul(Activation(a.gate), a.up) : Activation(a.up);
  }
  return a;
}

}  // namespace tpusim::model
