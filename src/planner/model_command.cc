#include "tpusim/planner/model_command.h"

#include "runtime/sharding_flags.h"
#include "tpusim/io/file.h"
#include "tpusim/model/model.h"
#include "tpusim/model/serve_step.h"
#include "tpusim/runtime/load.h"

namespace tpusim::planner {
namespace {

std::string Billions(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3fB", n / 1e9);
  return buf;
}

void Describe(const model::ModelSpec& m, int64_t seq, std::FILE* out) {
  const model::ParamCounts p = model::CountParams(m);
  std::fprintf(out, "%s: %s\n", m.name.c_str(), m.description.c_str());
  std::fprintf(out,
               "  %lld layers, d_model %lld, %lld heads x %lld (%lld kv heads), %s MLP %lld, "
               "vocab %lld, %s%s%s\n",
               static_cast<long long>(m.layers), static_cast<long long>(m.d_model),
               static_cast<long long>(m.heads), static_cast<long long>(m.head_dim),
               static_cast<long long>(m.kv_heads), model::MlpName(m.mlp),
               static_cast<long long>(m.d_ff), static_cast<long long>(m.vocab),
               model::NormName(m.norm), m.tied_embeddings ? ", tied embeddings" : "",
               m.parallel_layers ? ", parallel layers" : "");
  if (m.IsMoe()) {
    std::fprintf(out, "  %lld experts, %lld per token\n", static_cast<long long>(m.experts),
                 static_cast<long long>(m.experts_per_token));
  }
  const double stated = m.published_params > 0 ? m.published_params : m.nominal_params;
  char against[96] = "no count published";
  if (stated > 0) {
    std::snprintf(against, sizeof against, "%s %s, %+.2f%%", Billions(stated).c_str(),
                  m.published_params > 0 ? "published" : "as named; no count published",
                  100 * (static_cast<double>(p.total) / stated - 1));
  }
  std::fprintf(out,
               "  parameters: %s counted (%s); %s per layer, %s "
               "embeddings; %s active per token without the embedding lookup\n",
               Billions(static_cast<double>(p.total)).c_str(), against,
               Billions(static_cast<double>(p.per_layer)).c_str(),
               Billions(static_cast<double>(p.embedding)).c_str(),
               Billions(static_cast<double>(p.active_non_embedding)).c_str());
  std::fprintf(out, "  training FLOPs per token at sequence %lld: %.4g\n",
               static_cast<long long>(seq), model::TrainingFlopsPerToken(m, seq));
  for (const std::string& s : m.sources) std::fprintf(out, "  source: %s\n", s.c_str());
}

// `family` ("llama") at `params` ("8b"): family-params if the library has
// it, else the newest version (last by name) of family...-params.
StatusOr<model::ModelSpec> FindBySize(const std::string& family, const std::string& params) {
  if (auto exact = model::FindModel(family + "-" + params); exact.ok()) return exact;
  const model::ModelSpec* found = nullptr;
  for (const model::ModelSpec& m : model::Library()) {
    const std::string& n = m.name;
    const std::string suffix = "-" + params;
    if (n.rfind(family, 0) == 0 && n.size() > suffix.size() &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        (!found || n > found->name)) {
      found = &m;
    }
  }
  if (!found) {
    return NotFound("no model of family '" + family + "' with " + params +
                    " parameters (tpusim model --list)");
  }
  return *found;
}

StatusOr<model::ModelSpec> SelectModel(const ModelCommand& c) {
  if (!c.name.empty() && !c.file.empty())
    return InvalidArgument("give a model name or --file, not both");
  if (c.file.empty()) {
    if (c.name.empty()) return InvalidArgument("name a model (tpusim model --list) or give --file");
    if (!c.params.empty()) return FindBySize(c.name, c.params);
    return model::FindModel(c.name);
  }
  TPUSIM_ASSIGN_OR_RETURN(std::string text, runtime::ReadTextFile(c.file));
  return model::LoadModelToml(text, c.file);
}

}  // namespace

Status RunModelCommand(const ModelCommand& c, std::FILE* out) {
  if (c.list) {
    for (const model::ModelSpec& m : model::Library()) {
      std::fprintf(out, "%-14s %9s  %s\n", m.name.c_str(),
                   Billions(static_cast<double>(model::CountParams(m).total)).c_str(),
                   m.description.c_str());
    }
    return Status::Ok();
  }
  TPUSIM_ASSIGN_OR_RETURN(model::ModelSpec m, SelectModel(c));
  model::TrainStepOptions step = c.step;
  TPUSIM_RETURN_IF_ERROR(model::SetRemat(c.remat, step));
  if (!c.param_dtype.empty()) {
    step.param_dtype = c.param_dtype;
  } else if (c.kind != "train") {
    step.param_dtype = step.dtype;
  }
  if (step.seq == 0) step.seq = m.max_seq;
  if (c.emit.empty()) {
    Describe(m, step.seq, out);
    return Status::Ok();
  }
  if (!c.mesh.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(step.mesh, runtime::ParseMeshFlag(c.mesh));
  }
  StatusOr<std::string> text =
      InvalidArgument("--step " + c.kind + ": expected train, prefill or decode");
  const int64_t context = c.context >= 0 ? c.context : step.seq - 1;
  if (c.kind == "train") text = model::EmitTrainStep(m, step);
  if (c.kind == "prefill") text = model::EmitPrefillStep(m, step);
  if (c.kind == "decode") text = model::EmitDecodeStep(m, step, context);
  TPUSIM_RETURN_IF_ERROR(text.status());
  TPUSIM_RETURN_IF_ERROR(io::WriteFileAtomically(c.emit, *text));
  std::fprintf(out, "wrote %s: the %s step of %s, batch %lld x %s %lld\n", c.emit.c_str(),
               c.kind.c_str(), m.name.c_str(), static_cast<long long>(step.batch),
               c.kind == "decode" ? "1 token after a context of" : "sequence",
               static_cast<long long>(c.kind == "decode" ? context : step.seq));
  return Status::Ok();
}

}  // namespace tpusim::planner
