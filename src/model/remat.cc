// Rematerialization: what the forward loop keeps of each layer for the
// backward pass, and how the backward pass gets back the rest.
#include <set>
#include <string>
#include <string_view>

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
    case TrainStepOptions::Remat::kCustom:
      return "custom";
  }
  return "?";
}

namespace {

// The tensors a layer can keep, by the names MaxText's decoder layers give
// them (checkpoint_name), and the MaxText policies that keep a fixed set
// of them on the device (save_only_these_names).
const std::set<std::string> kTensorNames = {"decoder_layer_input",
                                            "query_proj",
                                            "key_proj",
                                            "value_proj",
                                            "qkv_proj",
                                            "context",
                                            "out_proj",
                                            "mlpwi",
                                            "mlpwi_0",
                                            "mlpwi_1",
                                            "mlpwo"};
// MaxText's named policies: the tensors each keeps on the device
// (save_only_these_names) or sends to host memory (the *_offloaded ones,
// save_and_offload_only_these_names).
struct NamedPolicy {
  std::set<std::string> keep, offload;
};
const std::map<std::string, NamedPolicy>& NamedPolicies() {
  // checkpoint_dots_with_no_batch_dims: every projection's output.
  static const std::set<std::string> kMinimal = {"qkv_proj", "out_proj", "mlpwi", "mlpwo"};
  static const auto* policies = new std::map<std::string, NamedPolicy>{
      {"minimal", {.keep = kMinimal}},
      {"minimal_with_context", {.keep = {"qkv_proj", "context", "out_proj", "mlpwi", "mlpwo"}}},
      {"save_dot_with_context_except_mlp", {.keep = {"qkv_proj", "context", "out_proj"}}},
      {"save_dot_except_mlpwi", {.keep = {"qkv_proj", "out_proj", "mlpwo"}}},
      {"save_dot_except_mlp", {.keep = {"qkv_proj", "out_proj"}}},
      {"save_qkv_proj", {.keep = {"qkv_proj"}}},
      {"save_out_proj", {.keep = {"out_proj"}}},
      {"qkv_proj_offloaded", {.offload = {"qkv_proj"}}},
      {"minimal_offloaded", {.offload = kMinimal}},
  };
  return *policies;
}

std::string NamedPolicyList() {
  std::string out;
  for (const auto& [name, policy] : NamedPolicies()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// "custom:query_proj=device,mlpwi=offload" -> the names kept on the device
// and those sent to host memory.
Status ParseCustom(const std::string& policy, TrainStepOptions& options) {
  const std::string spec = policy.substr(std::string("custom:").size());
  size_t begin = 0;
  while (begin <= spec.size()) {
    size_t end = spec.find(',', begin);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(begin, end - begin);
    begin = end + 1;
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq),
                      where = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (!kTensorNames.count(name)) {
      std::string known;
      for (const std::string& n : kTensorNames) known += (known.empty() ? "" : ", ") + n;
      return InvalidArgument("remat policy '" + policy + "': unknown tensor '" + name +
                             "' (expected " + known + ")");
    }
    if (where == "device") {
      options.keep.insert(name);
    } else if (where == "offload") {
      options.offload.insert(name);
    } else if (where != "remat") {
      return InvalidArgument("remat policy '" + policy + "': " + name +
                             " must be device, offload or remat, not '" + where + "'");
    }
  }
  return Status::Ok();
}

}  // namespace

Status SetRemat(const std::string& policy, TrainStepOptions& options) {
  options.keep.clear();
  options.offload.clear();
  for (auto r : {TrainStepOptions::Remat::kFull, TrainStepOptions::Remat::kSelective,
                 TrainStepOptions::Remat::kNone}) {
    if (policy == RematName(r)) {
      options.remat = r;
      return Status::Ok();
    }
  }
  if (auto it = NamedPolicies().find(policy); it != NamedPolicies().end()) {
    options.remat = TrainStepOptions::Remat::kCustom;
    options.keep = it->second.keep;
    options.offload = it->second.offload;
    return Status::Ok();
  }
  if (policy.rfind("custom:", 0) == 0) {
    options.remat = TrainStepOptions::Remat::kCustom;
    return ParseCustom(policy, options);
  }
  return InvalidArgument("remat policy '" + policy +
                         "': expected full, selective, none, one of MaxText's (" +
                         NamedPolicyList() + ") or custom:NAME=device|offload|remat,...");
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
  const bool custom = o_.remat == TrainStepOptions::Remat::kCustom;
  auto names = [](const std::set<std::string>& set, const char* name, const char* group) {
    return set.count(name) > 0 || set.count(group) > 0;
  };
  std::vector<SavedAct> out = {model_dim(&LayerActs::x)};
  out[0].offload = custom && o_.offload.count("decoder_layer_input") > 0;
  if (o_.remat == TrainStepOptions::Remat::kFull) return out;
  // Selective and none keep every projection's output and attention's;
  // none also the norms, the activation and the spelled-out softmax.
  const bool all = o_.remat == TrainStepOptions::Remat::kNone;
  const std::set<std::string> kSelective = {"qkv_proj", "context", "out_proj", "mlpwi"};
  const std::set<std::string>& kept = custom ? o_.keep : kSelective;
  // Where a policy puts tensor `n` of group `g`; kept on the device wins
  // where it names the tensor both ways (by itself and by its group).
  auto host = [&](const char* n, const char* g) {
    return custom && !names(kept, n, g) && names(o_.offload, n, g);
  };
  auto keeps = [&](const char* n, const char* g) { return names(kept, n, g) || host(n, g); };
  // Appends `a` if the policy keeps it.
  auto save = [&](const char* n, const char* g, SavedAct a) {
    if (!keeps(n, g)) return;
    a.offload = host(n, g);
    out.push_back(std::move(a));
  };
  if (all) out.push_back(model_dim(&LayerActs::h1));
  save("query_proj", "qkv_proj",
       act(&LayerActs::q, {b_, s_, h_, hd_}, t, {batch, seq, tensor, whole}));
  save("key_proj", "qkv_proj",
       act(&LayerActs::k_new, {b_, s_, kv_, hd_}, t, {batch, seq, kv_tensor, whole}));
  save("value_proj", "qkv_proj",
       act(&LayerActs::v_new, {b_, s_, kv_, hd_}, t, {batch, seq, kv_tensor, whole}));
  if (o_.flash_attention) {
    save("context", "context",
         act(&LayerActs::o4, {b_, s_, h_, hd_}, t, {batch, seq, tensor, whole}));
    save("context", "context", act(&LayerActs::lse, {b_, h_, s_}, "f32", {batch, tensor, seq}));
  } else if (keeps("context", "context")) {
    if (all) out.push_back(act(&LayerActs::p, {b_, h_, s_, s_}, t, {batch, tensor, seq, whole}));
    save("context", "context", act(&LayerActs::o, {b_, s_, h_ * hd_}, t, {batch, seq, tensor}));
  }
  // out_proj's output makes the mid-layer residual; mlpwo's output is not
  // read by the layer's backward pass, so keeping it saves nothing here.
  if (keeps("out_proj", "out_proj") && !m_.parallel_layers) {
    save("out_proj", "out_proj", model_dim(&LayerActs::x2));
    if (all) out.push_back(model_dim(&LayerActs::h2));
  }
  // A mixture of experts' MLP is recomputed from h2 (Restore).
  if (m_.IsMoe()) return out;
  const Axes hidden = {batch, seq, tensor};
  if (Gated()) save("mlpwi_0", "mlpwi", act(&LayerActs::gate, {b_, s_, f_}, t, hidden));
  save(Gated() ? "mlpwi_1" : "mlpwi_0", "mlpwi", act(&LayerActs::up, {b_, s_, f_}, t, hidden));
  if (all) out.push_back(act(&LayerActs::act, {b_, s_, f_}, t, hidden));
  return out;
}

// Whatever the forward loop did not keep is recomputed from what it did, as
// the layer's forward pass computes it.
LayerActs StepBuilder::Restore(const Weights& w, const LayerActs& saved) {
  if (o_.remat == TrainStepOptions::Remat::kFull) return Forward(w, saved.x);
  LayerActs a = saved;
  a.x = w_.Constraint(saved.x, BatchSharding(3));
  Qkv(w, a);
  Attend(a);
  if (m_.parallel_layers) {
    a.x2 = a.x;
    a.h2 = a.h1;
  } else {
    if (a.x2.name.empty()) a.x2 = Add(a.x, Proj(a.o, w.wo, w.wo_b));
    if (a.h2.name.empty()) a.h2 = Norm(a.x2, w.norm2, w.norm2_b);
  }
  if (m_.IsMoe()) {
    MoeMlp(w, a);
    return a;
  }
  if (a.up.name.empty()) a.up = Proj(a.h2, w.up, w.up_b);
  if (Gated() && a.gate.name.empty()) a.gate = Proj(a.h2, w.gate, w.gate_b);
  if (a.act.name.empty()) a.act = Gated() ? Mul(Activation(a.gate), a.up) : Activation(a.up);
  return a;
}

}  // namespace tpusim::model
