#include "tpusim/model/model.h"

#include <toml++/toml.h>

#include <algorithm>

#include "base/toml_reader.h"
#include "model/library_data.h"

namespace tpusim::model {
namespace {

using base::TableReader;
using base::Where;

Status ReadArchitecture(const toml::table& t, const std::string& file, ModelSpec& m) {
  TableReader r(t, file, "architecture.");
  for (auto [key, field] : {std::pair{"layers", &m.layers},
                            {"d_model", &m.d_model},
                            {"heads", &m.heads},
                            {"kv_heads", &m.kv_heads},
                            {"head_dim", &m.head_dim},
                            {"d_ff", &m.d_ff},
                            {"vocab", &m.vocab},
                            {"position_embeddings", &m.position_embeddings},
                            {"max_seq", &m.max_seq}}) {
    TPUSIM_RETURN_IF_ERROR(r.Read(key, *field));
  }
  TPUSIM_RETURN_IF_ERROR(
      r.ReadEnum("mlp", m.mlp, {Mlp::kSwiGlu, Mlp::kGeGlu, Mlp::kGelu}, MlpName));
  TPUSIM_RETURN_IF_ERROR(r.ReadEnum("norm", m.norm, {Norm::kRmsNorm, Norm::kLayerNorm}, NormName));
  TPUSIM_RETURN_IF_ERROR(r.Read("bias", m.bias));
  TPUSIM_RETURN_IF_ERROR(r.Read("tied_embeddings", m.tied_embeddings));
  TPUSIM_RETURN_IF_ERROR(r.Read("parallel_layers", m.parallel_layers));
  return r.RejectUnknown();
}

Status ReadMoe(const toml::table& t, const std::string& file, ModelSpec& m) {
  TableReader r(t, file, "moe.");
  TPUSIM_RETURN_IF_ERROR(r.Read("experts", m.experts));
  TPUSIM_RETURN_IF_ERROR(r.Read("experts_per_token", m.experts_per_token));
  return r.RejectUnknown();
}

// What no model can be; `file` names it.
Status Validate(const ModelSpec& m, const std::string& file) {
  auto bad = [&](const std::string& why) { return InvalidArgument(file + ": " + why); };
  if (m.name.empty()) return bad("the model has no name");
  if (m.published_params > 0 && m.nominal_params > 0) {
    return bad(
        "published_params and nominal_params: give the published count or, where none "
        "is published, the size the name states");
  }
  for (auto [key, v] : {std::pair{"layers", m.layers},
                        {"d_model", m.d_model},
                        {"heads", m.heads},
                        {"kv_heads", m.kv_heads},
                        {"head_dim", m.head_dim},
                        {"d_ff", m.d_ff},
                        {"vocab", m.vocab},
                        {"max_seq", m.max_seq}}) {
    if (v <= 0) return bad(std::string("architecture.") + key + " must be > 0");
  }
  if (m.heads % m.kv_heads != 0) {
    return bad("heads (" + std::to_string(m.heads) + ") must be a multiple of kv_heads (" +
               std::to_string(m.kv_heads) + ")");
  }
  if (m.position_embeddings < 0) return bad("architecture.position_embeddings must be >= 0");
  if (m.experts < 1 || m.experts_per_token < 1 || m.experts_per_token > m.experts) {
    return bad("moe: need 1 <= experts_per_token <= experts");
  }
  // Counted in doubles first, so that no count overflows int64 later.
  auto f = [](int64_t v) { return static_cast<double>(v); };
  const double d = f(m.d_model);
  const double per_layer =
      2 * d * (f(m.heads) + f(m.kv_heads)) * f(m.head_dim) + 3 * d * f(m.d_ff) * f(m.experts);
  const double total = per_layer * f(m.layers) + d * (2 * f(m.vocab) + f(m.position_embeddings)) +
                       f(m.layers) * f(m.heads) * f(m.head_dim) * f(m.max_seq);
  if (!(total < 1e16)) return bad("the model has more than 10^16 parameters");
  return Status::Ok();
}

StatusOr<ModelSpec> FromTable(const toml::table& root, const std::string& file) {
  ModelSpec m;
  TableReader r(root, file, "");
  TPUSIM_RETURN_IF_ERROR(r.Read("name", m.name));
  TPUSIM_RETURN_IF_ERROR(r.Read("description", m.description));
  TPUSIM_RETURN_IF_ERROR(r.ReadStrings("sources", m.sources));
  TPUSIM_RETURN_IF_ERROR(r.Read("published_params", m.published_params));
  TPUSIM_RETURN_IF_ERROR(r.Read("nominal_params", m.nominal_params));
  r.Allow("architecture");
  r.Allow("moe");
  TPUSIM_RETURN_IF_ERROR(r.RejectUnknown());
  const toml::node* arch = root.get("architecture");
  if (arch == nullptr || !arch->is_table()) return InvalidArgument(file + ": no [architecture]");
  TPUSIM_RETURN_IF_ERROR(ReadArchitecture(*arch->as_table(), file, m));
  if (const toml::node* moe = root.get("moe")) {
    if (!moe->is_table())
      return InvalidArgument(Where(file, moe->source()) + ": moe must be a table");
    TPUSIM_RETURN_IF_ERROR(ReadMoe(*moe->as_table(), file, m));
  }
  TPUSIM_RETURN_IF_ERROR(Validate(m, file));
  return m;
}

}  // namespace

const char* MlpName(Mlp m) {
  switch (m) {
    case Mlp::kSwiGlu:
      return "swiglu";
    case Mlp::kGeGlu:
      return "geglu";
    case Mlp::kGelu:
      return "gelu";
  }
  return "?";
}

const char* NormName(Norm n) { return n == Norm::kRmsNorm ? "rmsnorm" : "layernorm"; }

ParamCounts CountParams(const ModelSpec& m) {
  const int64_t d = m.d_model, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  const int64_t norm = m.norm == Norm::kLayerNorm && m.bias ? 2 * d : d;
  const int64_t attention = d * (q + 2 * kv) + q * d + (m.bias ? q + 2 * kv + d : 0);
  const int64_t matrices = m.mlp == Mlp::kGelu ? 2 : 3;
  const int64_t expert = matrices * d * m.d_ff + (m.bias ? (matrices - 1) * m.d_ff + d : 0);
  const int64_t router = m.IsMoe() ? d * m.experts : 0;
  ParamCounts p;
  p.embedding = m.vocab * d * (m.tied_embeddings ? 1 : 2) + m.position_embeddings * d;
  const int64_t norms = (m.parallel_layers ? 1 : 2) * norm;
  p.per_layer = attention + m.experts * expert + router + norms;
  p.final_norm = norm;
  p.total = p.embedding + m.layers * p.per_layer + p.final_norm;
  const int64_t active_layer = attention + m.experts_per_token * expert + router + norms;
  p.active_non_embedding = m.layers * active_layer + p.final_norm + m.vocab * d;
  return p;
}

double TrainingFlopsPerToken(const ModelSpec& m, int64_t seq) {
  const double attention =
      12.0 * static_cast<double>(m.layers * m.heads * m.head_dim) * static_cast<double>(seq);
  return 6.0 * static_cast<double>(CountParams(m).active_non_embedding) + attention;
}

StatusOr<ModelSpec> LoadModelToml(std::string_view text, const std::string& filename) {
  try {
    toml::table root = toml::parse(text, filename);
    return FromTable(root, filename);
  } catch (const toml::parse_error& e) {
    return InvalidArgument(Where(filename, e.source()) + ": " + std::string(e.description()));
  }
}

const std::vector<ModelSpec>& Library() {
  static const std::vector<ModelSpec> models = [] {
    std::vector<ModelSpec> out;
    for (const LibraryFile& f : LibraryFiles()) {
      StatusOr<ModelSpec> m = LoadModelToml(f.text, "models/" + std::string(f.name));
      if (m.ok()) out.push_back(std::move(*m));  // model_test checks that every file loads
    }
    std::sort(out.begin(), out.end(),
              [](const ModelSpec& a, const ModelSpec& b) { return a.name < b.name; });
    return out;
  }();
  return models;
}

StatusOr<ModelSpec> FindModel(std::string_view name) {
  std::string known;
  for (const ModelSpec& m : Library()) {
    if (m.name == name) return m;
    known += (known.empty() ? "" : ", ") + m.name;
  }
  return NotFound("unknown model '" + std::string(name) + "'; the library has " + known);
}

}  // namespace tpusim::model
