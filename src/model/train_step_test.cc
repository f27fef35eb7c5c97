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
                    std::vector<std::pair<std::string, int64_t>> mesh = {},
                    double capacity_factor = 1.25) {
  TrainStepOptions o{.batch = 2,
                     .dtype = "f64",
                     .param_dtype = "f64",
                     .mesh = std::move(mesh),
                     .flash_attention = flash,
                     .capacity_factor = capacity_factor};
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

// Mixtral's MLP: 4 experts, 2 per token. Every parameter's gradient, the
// router's through the gates' softmax, with no token dropped (a capacity
// of the whole sequence) and with most dropped (2 slots per expert for 10
// choices over 5 tokens): a dropped token's expert adds nothing, and no
// gradient.
ModelSpec TinyMoe(Mlp mlp = Mlp::kSwiGlu) {
  ModelSpec m = Tiny(mlp);
  m.experts = 4;
  m.experts_per_token = 2;
  return m;
}

TEST(TrainStep, GradientsMatchFiniteDifferencesMixtureOfExperts) {
  CheckGradients(TinyMoe(), true, {}, /*capacity_factor=*/0);
  CheckGradients(TinyMoe(), true, {}, /*capacity_factor=*/0.5);
}

// With the expert axis's shardings written in (the step run whole), GELU
// experts, and PaLM's block reading one norm for attention and the experts.
TEST(TrainStep, GradientsMatchFiniteDifferencesMixtureOfExpertsVariants) {
  CheckGradients(TinyMoe(), true, {{"fsdp", 1}, {"expert", 2}, {"tensor", 2}});
  ModelSpec palm = TinyMoe(Mlp::kGelu);
  palm.parallel_layers = true;
  palm.norm = Norm::kLayerNorm;
  CheckGradients(palm, /*flash=*/false);
}

TEST(TrainStep, ExpertAxisNeedsExpertsItDivides) {
  const TrainStepOptions split{.batch = 4, .mesh = {{"expert", 2}}};
  EXPECT_EQ(EmitTrainStep(Tiny(), split).status().code(), StatusCode::kInvalidArgument);
  ModelSpec three = TinyMoe();
  three.experts = 3;
  auto text = EmitTrainStep(three, split);
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(text.status().message().find("does not divide the 3 experts"), std::string::npos);
  EXPECT_EQ(
      EmitTrainStep(TinyMoe(), {.batch = 2, .mesh = {{"data", 2}, {"expert", 2}}}).status().code(),
      StatusCode::kInvalidArgument);  // a batch of 2 over 4
  EXPECT_TRUE(EmitTrainStep(TinyMoe(), split).ok());
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
