// GPT-3's parts of the steps, as MaxText's gpt3 decoder block has them:
// a bias on every projection and LayerNorm (with scale and shift), and a
// learned position table added to the token embeddings.
#include "model/step_builder.h"

namespace tpusim::model {

// A bias is split as its weight's output dimension is; the position table
// as the token table along d_model (over FsdpAxes).
void StepBuilder::AddBiasAndPositionParams(std::vector<Param>& p) const {
  const std::vector<std::string> none;
  if (m_.bias) {
    std::vector<Param> biases;
    for (const Param& w : p) {
      const bool norm = w.name == "norm1" || w.name == "norm2" || w.name == "final_norm";
      if (norm && !NormBias()) continue;
      if (!norm && (!w.per_layer || w.shape.size() != 3)) continue;  // tables, unembed
      // [layers, out] or [out]: the weight's last dimension.
      std::vector<std::vector<std::string>> axes = {w.axes.back()};
      Dims shape = {w.shape.back()};
      if (w.per_layer) {
        axes.insert(axes.begin(), none);
        shape.insert(shape.begin(), w.shape.front());
      }
      biases.push_back({w.name + "_bias", shape, axes, w.per_layer});
    }
    p.insert(p.end(), biases.begin(), biases.end());
  }
  if (m_.position_embeddings > 0) {
    p.push_back({"positions", {m_.position_embeddings, d_}, {none, FsdpAxes()}, false});
  }
}

void StepBuilder::BiasGrad(const std::string& name, const Val& dy,
                           std::map<std::string, Val>& grads) {
  if (!m_.bias) return;
  const Val d = w_.Convert(dy, o_.param_dtype);
  grads[name] = w_.Reduce("add", d, {0, 1});
}

Val StepBuilder::Optional(const std::map<std::string, Val>& p, const std::string& name) {
  auto it = p.find(name);
  return it == p.end() ? Val{} : w_.Convert(it->second, o_.dtype);
}

// Rows first .. first + t - 1 of the table, a static slice: its d_model
// split stays as it is.
Val StepBuilder::Embed(const std::map<std::string, Val>& p, const Val& table, const Val& tokens,
                       int64_t first) {
  const Val x = w_.Gather(table, tokens);
  if (m_.position_embeddings == 0) return x;
  const int64_t t = tokens.shape[1];
  const Val rows = w_.Slice(w_.Convert(p.at("positions"), o_.dtype), 0, first, first + t);
  return Add(x, w_.Broadcast(rows, x.shape, {1, 2}));
}

// The sum over the batch written into a zero table at row 0: rows past the
// sequence take no gradient.
Val StepBuilder::PositionGrad(const Val& dx) {
  const std::string table_sharding = Sharding({{}, FsdpAxes()});
  const Val rows = w_.Reduce("add", dx, {0});
  const Val zero =
      w_.Constraint(w_.Splat(0, {m_.position_embeddings, d_}, dx.element), table_sharding);
  const Val at = Scalar(0, "i32");
  return w_.Constraint(w_.UpdateSlice(zero, rows, {at, at}), table_sharding);
}

}  // namespace tpusim::model
