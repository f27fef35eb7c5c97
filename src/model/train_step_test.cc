#include "tpusim/model/train_step.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo_parser.h"
#include "tpusim/spmd/partitioner.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::model {
namespace {

// Two layers of everything: grouped-query attention (2 query heads per kv
// head), a gated MLP, untied embeddings.
ModelSpec Tiny(Mlp mlp = Mlp::kSwiGlu, bool tied = false) {
  ModelSpec m;
  m.name = "tiny";
  m.layers = 2;
  m.d_model = 8;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 3;
  m.d_ff = 10;
  m.vocab = 11;
  m.max_seq = 5;
  m.mlp = mlp;
  m.tied_embeddings = tied;
  return m;
}

std::unique_ptr<ir::Module> Parse(const std::string& text) {
  auto m = frontend::ParseStableHlo(text, "train_step.mlir");
  EXPECT_TRUE(m.ok()) << m.status().ToString() << "\n" << text.substr(0, 3000);
  if (!m.ok()) return nullptr;
  Status valid = verify::VerifyModule(**m);
  EXPECT_TRUE(valid.ok()) << valid.ToString();
  return std::move(*m);
}

// The step's inputs: random parameters, zero moments, step 1, tokens.
std::vector<Tensor> Inputs(const ir::Function& f, std::mt19937& rng) {
  std::normal_distribution<double> normal(0, 0.5);
  std::vector<Tensor> in;
  const size_t params = (f.type().inputs.size() - 3) / 3;
  for (size_t i = 0; i < f.type().inputs.size(); ++i) {
    Tensor t = *Tensor::Allocate(f.type().inputs[i]);
    const int64_t n = t.num_elements();
    if (t.element() == ir::ElementType::kSI32) {
      for (int64_t e = 0; e < n; ++e)
        t.mutable_data<int32_t>()[e] = static_cast<int32_t>(rng() % 11);
    } else if (i < params) {
      for (int64_t e = 0; e < n; ++e) t.mutable_data<double>()[e] = normal(rng);
    } else if (i == 3 * params) {
      t.mutable_data<double>()[0] = 1;  // step
    }
    in.push_back(std::move(t));
  }
  return in;
}

double Loss(exec::Interpreter& run, const std::vector<Tensor>& in) {
  auto out = run.Run("main", in);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? out->back().data<double>()[0] : NAN;
}

// Each parameter's gradient, read from the first moment AdamW returns
// ((1 - beta1) g from zero), agrees with the loss's central difference
// along a random direction.
void CheckGradients(const ModelSpec& spec, bool flash = true,
                    std::vector<std::pair<std::string, int64_t>> mesh = {}) {
  TrainStepOptions o{.batch = 2,
                     .dtype = "f64",
                     .param_dtype = "f64",
                     .mesh = std::move(mesh),
                     .flash_attention = flash};
  auto text = EmitTrainStep(spec, o);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto module = Parse(*text);
  ASSERT_TRUE(module);
  const ir::Function& f = *module->Lookup("main");
  std::mt19937 rng(7);
  std::vector<Tensor> in = Inputs(f, rng);
  exec::Interpreter run(*module, {});
  auto out = run.Run("main", in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const size_t params = (f.type().inputs.size() - 3) / 3;
  std::normal_distribution<double> normal(0, 1);
  for (size_t p = 0; p < params; ++p) {
    const Tensor& m = (*out)[params + p];
    std::vector<double> u(static_cast<size_t>(in[p].num_elements()));
    double predicted = 0;
    for (size_t e = 0; e < u.size(); ++e) {
      u[e] = normal(rng);
      predicted += u[e] * m.data<double>()[e] / (1 - o.beta1);
    }
    const double eps = 1e-5;
    auto shifted = [&](double sign) {
      std::vector<Tensor> moved = in;
      moved[p] = *in[p].Clone();
      for (size_t e = 0; e < u.size(); ++e) moved[p].mutable_data<double>()[e] += sign * eps * u[e];
      return Loss(run, moved);
    };
    const double measured = (shifted(1) - shifted(-1)) / (2 * eps);
    EXPECT_NEAR(predicted, measured, 1e-6 * std::max(1.0, std::abs(measured)))
        << "parameter " << p << " (" << f.entry().argument(static_cast<int>(p)).name() << ")";
  }
}

TEST(TrainStep, GradientsMatchFiniteDifferencesSwiGlu) { CheckGradients(Tiny()); }
TEST(TrainStep, GradientsMatchFiniteDifferencesSpelledOutAttention) {
  CheckGradients(Tiny(), /*flash=*/false);
}
TEST(TrainStep, GradientsMatchFiniteDifferencesGeluTied) { CheckGradients(Tiny(Mlp::kGelu, true)); }
TEST(TrainStep, GradientsMatchFiniteDifferencesGeGlu) { CheckGradients(Tiny(Mlp::kGeGlu)); }

// PaLM's block: LayerNorm (no bias), attention and MLP side by side, one kv
// head (multi-query), tied embeddings.
TEST(TrainStep, GradientsMatchFiniteDifferencesParallelLayerNorm) {
  ModelSpec m = Tiny(Mlp::kSwiGlu, true);
  m.norm = Norm::kLayerNorm;
  m.parallel_layers = true;
  m.kv_heads = 1;
  CheckGradients(m);
  CheckGradients(m, /*flash=*/false);
  // A tensor axis the one kv head cannot follow: flash attention gets it
  // repeated per query head, and its gradient sums them.
  CheckGradients(m, /*flash=*/true, {{"tensor", 2}});
}

// A sequence axis: flash attention takes its rows' positions, dk and dv
// are constrained to split along the sequence; the global program's
// gradients stay exact.
TEST(TrainStep, GradientsMatchFiniteDifferencesWithSequenceAxis) {
  ModelSpec m = Tiny();
  m.max_seq = 4;
  CheckGradients(m, /*flash=*/true, {{"sequence", 2}, {"tensor", 2}});
  CheckGradients(m, /*flash=*/false, {{"data", 2}, {"sequence", 2}});
}

TEST(TrainStep, SequenceAxisMustDivideTheSequence) {
  const ModelSpec m = Tiny();  // 5 tokens
  auto text = EmitTrainStep(m, {.batch = 3, .mesh = {{"sequence", 2}}});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(text.status().message(), "a sequence of 5 tokens does not split over sequence = 2");
  // The batch need not divide by it.
  EXPECT_TRUE(EmitTrainStep(m, {.batch = 3, .seq = 4, .mesh = {{"sequence", 2}}}).ok());
}

// The parallel block has one norm per layer, so no norm2 parameter.
TEST(TrainStep, ParallelLayersHaveOneNormPerLayer) {
  ModelSpec m = Tiny();
  m.parallel_layers = true;
  auto text = EmitTrainStep(m, {.batch = 2});
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->find("norm2"), std::string::npos);
  EXPECT_NE(text->find("norm1"), std::string::npos);
  EXPECT_EQ(CountParams(m).per_layer + m.d_model, CountParams(Tiny()).per_layer);
}

}  // namespace
}  // namespace tpusim::model
