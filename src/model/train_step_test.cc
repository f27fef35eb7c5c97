#include "tpusim/model/train_step.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
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
      t.mutable_data<float>()[0] = 1;  // step, f32
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
void CheckGradients(const ModelSpec& spec, const TrainStepOptions& o) {
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

TrainStepOptions F64(bool flash = true, std::vector<std::pair<std::string, int64_t>> mesh = {}) {
  return {.batch = 2,
          .dtype = "f64",
          .param_dtype = "f64",
          .mesh = std::move(mesh),
          .flash_attention = flash};
}

void CheckGradients(const ModelSpec& spec, bool flash = true,
                    std::vector<std::pair<std::string, int64_t>> mesh = {},
                    double capacity_factor = 1.25) {
  TrainStepOptions o = F64(flash, std::move(mesh));
  o.capacity_factor = capacity_factor;
  CheckGradients(spec, o);
}

// The step's results (parameters, moments, loss) for the same random inputs.
std::vector<Tensor> RunStep(const ModelSpec& spec, const TrainStepOptions& o) {
  auto text = EmitTrainStep(spec, o);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  if (!text.ok()) return {};
  auto module = Parse(*text);
  if (!module) return {};
  std::mt19937 rng(3);
  exec::Interpreter run(*module, {});
  auto out = run.Run("main", Inputs(*module->Lookup("main"), rng));
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(*out) : std::vector<Tensor>{};
}

void ExpectSameResults(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].num_elements(), b[r].num_elements());
    for (int64_t e = 0; e < a[r].num_elements(); ++e) {
      const double x = a[r].data<double>()[e], y = b[r].data<double>()[e];
      ASSERT_NEAR(x, y, 1e-11 * std::max(1.0, std::abs(x))) << "result " << r << " [" << e << "]";
    }
  }
}

// Each policy keeps different activations and recomputes the rest: the
// gradients stay exact, with flash attention and spelled out, in sequence
// and in PaLM's parallel block.
TEST(TrainStep, GradientsMatchFiniteDifferencesUnderEveryRemat) {
  ModelSpec parallel = Tiny(Mlp::kGelu, true);
  parallel.parallel_layers = true;
  parallel.norm = Norm::kLayerNorm;
  for (auto remat : {TrainStepOptions::Remat::kSelective, TrainStepOptions::Remat::kNone}) {
    for (bool flash : {true, false}) {
      SCOPED_TRACE(std::string(RematName(remat)) + (flash ? " flash" : " spelled out"));
      TrainStepOptions o = F64(flash);
      o.remat = remat;
      CheckGradients(Tiny(), o);
      CheckGradients(parallel, o);
    }
  }
}

TEST(TrainStep, RematPoliciesKeepWhatTheyNameAndAgree) {
  TrainStepOptions o = F64();
  const std::vector<Tensor> full = RunStep(Tiny(), o);
  // Each kept activation is a stack the forward loop carries: full keeps
  // the input; selective adds q, k, v, attention's output and its
  // log-sum-exps, the mid-layer residual and the MLP's two projections;
  // none adds both norms' outputs and the activation.
  const int carried[] = {3 + 9, 3 + 9 + 8, 3 + 9 + 8 + 3};
  int i = 0;
  for (auto remat : {TrainStepOptions::Remat::kFull, TrainStepOptions::Remat::kSelective,
                     TrainStepOptions::Remat::kNone}) {
    o.remat = remat;
    ExpectSameResults(RunStep(Tiny(), o), full);
    auto text = EmitTrainStep(Tiny(), o);
    ASSERT_TRUE(text.ok());
    const size_t loop = text->find(" = stablehlo.while(");
    ASSERT_NE(loop, std::string::npos);
    const size_t colon = text->rfind(':', loop);
    EXPECT_EQ(std::stoi(text->substr(colon + 1, loop - colon - 1)), carried[i++])
        << RematName(remat);
  }
}

// MaxText's policies by name and custom ones keep exactly the tensors they
// name (the loop's carried stacks count them), recompute the rest, and
// give full remat's step; their gradients match finite differences.
TEST(TrainStep, NamedAndCustomRematPoliciesKeepWhatTheyName) {
  TrainStepOptions o = F64();
  const std::vector<Tensor> full = RunStep(Tiny(), o);
  const std::pair<const char*, int> policies[] = {
      {"save_qkv_proj", 3},
      {"save_out_proj", 1},
      {"save_dot_except_mlpwi", 4},
      {"minimal", 6},  // q, k, v, the residual after out_proj, gate, up
      {"custom:context=device,mlpwi_1=device,query_proj=remat", 3}};  // o4, lse, up
  for (const auto& [policy, kept] : policies) {
    SCOPED_TRACE(policy);
    ASSERT_TRUE(SetRemat(policy, o).ok());
    ExpectSameResults(RunStep(Tiny(), o), full);
    auto text = EmitTrainStep(Tiny(), o);
    ASSERT_TRUE(text.ok());
    const size_t loop = text->find(" = stablehlo.while(");
    const size_t colon = text->rfind(':', loop);
    EXPECT_EQ(std::stoi(text->substr(colon + 1, loop - colon - 1)), 3 + 9 + kept);
  }
  for (bool flash : {true, false}) {
    TrainStepOptions f = F64(flash);
    ASSERT_TRUE(SetRemat("custom:key_proj=device,out_proj=device,mlpwi_0=device", f).ok());
    CheckGradients(Tiny(), f);
  }
}

// Offloading policies save what they name in host memory: each such
// tensor moves to pinned_host in the forward loop and back to the device in
// the backward loop, as JAX marks them, and the step is full remat's.
TEST(TrainStep, OffloadingPoliciesMoveWhatTheyNameToHostAndBack) {
  TrainStepOptions o = F64();
  const std::vector<Tensor> full = RunStep(Tiny(), o);
  const std::pair<const char*, int> policies[] = {
      {"qkv_proj_offloaded", 3},
      {"minimal_offloaded", 6},
      {"custom:decoder_layer_input=offload", 1},
      // Kept on the device wins where a tensor is named both ways: k, v.
      {"custom:qkv_proj=offload,query_proj=device,mlpwi_0=offload", 3}};
  auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  for (const auto& [policy, offloaded] : policies) {
    SCOPED_TRACE(policy);
    ASSERT_TRUE(SetRemat(policy, o).ok());
    ExpectSameResults(RunStep(Tiny(), o), full);
    auto text = EmitTrainStep(Tiny(), o);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(count(*text, "_xla_buffer_placement = \"pinned_host\""), offloaded);
    EXPECT_EQ(count(*text, "_xla_buffer_placement = \"device\""), offloaded);
  }
  for (bool flash : {true, false}) {
    TrainStepOptions f = F64(flash);
    ASSERT_TRUE(SetRemat("custom:decoder_layer_input=offload,context=offload", f).ok());
    CheckGradients(Tiny(), f);
  }
}

TEST(TrainStep, RematPoliciesThatCannotBeBuiltAreRefused) {
  TrainStepOptions o;
  Status unknown = SetRemat("custom:attention=device", o);
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("unknown tensor 'attention' (expected context,"),
            std::string::npos)
      << unknown.message();
  Status where = SetRemat("custom:mlpwo=host", o);
  EXPECT_EQ(where.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(where.message().find("mlpwo must be device, offload or remat, not 'host'"),
            std::string::npos)
      << where.message();
  EXPECT_EQ(SetRemat("most", o).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SetRemat("everything_offloaded", o).code(), StatusCode::kInvalidArgument);
}

// Two microbatches of 2 give the batch of 4's step: the loss is the mean
// over every token, the gradients their sum.
TEST(TrainStep, MicrobatchesAccumulateTheBatchsGradients) {
  for (auto remat : {TrainStepOptions::Remat::kFull, TrainStepOptions::Remat::kNone}) {
    TrainStepOptions o = F64();
    o.batch = 4;
    o.remat = remat;
    const std::vector<Tensor> whole = RunStep(Tiny(), o);
    o.microbatches = 2;
    const std::vector<Tensor> accumulated = RunStep(Tiny(), o);
    ExpectSameResults(accumulated, whole);
    o.microbatches = 4;
    ExpectSameResults(RunStep(Tiny(), o), whole);
  }
}

// The loss of a train step's program on seeded random weights and tokens.
float StepLoss(const std::string& text) {
  auto module = Parse(text);
  std::mt19937 rng(3);
  exec::Interpreter interpreter(*module, {});
  const ir::Function& f = *module->Lookup("main");
  std::vector<Tensor> in;
  std::normal_distribution<float> normal(0, 0.5f);
  const size_t params = (f.type().inputs.size() - 3) / 3;
  for (size_t i = 0; i < f.type().inputs.size(); ++i) {
    Tensor t = *Tensor::Allocate(f.type().inputs[i]);
    for (int64_t e = 0; e < t.num_elements(); ++e) {
      if (t.element() == ir::ElementType::kSI32) {
        t.mutable_data<int32_t>()[e] = static_cast<int32_t>(rng() % 11);
      } else if (i < params) {
        t.mutable_data<float>()[e] = normal(rng);
      } else if (i == 3 * params) {
        t.mutable_data<float>()[e] = 1;
      }
    }
    in.push_back(std::move(t));
  }
  auto out = interpreter.Run("main", in);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? out->back().data<float>()[0] : NAN;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// fp8 projections: e4m3 operands forward, e5m2 gradients, scaled per
// tensor. The step stays close to the exact one (fp8 keeps 3 mantissa
// bits), and only the projections' dots take fp8.
TEST(TrainStep, Fp8ProjectionsStayCloseToTheExactStep) {
  TrainStepOptions o{.batch = 2, .dtype = "f32", .param_dtype = "f32"};
  auto exact_text = EmitTrainStep(Tiny(), o);
  o.fp8 = true;
  auto fp8_text = EmitTrainStep(Tiny(), o);
  ASSERT_TRUE(exact_text.ok() && fp8_text.ok());
  // The layer loops' text: q, k, v, o, gate, up and down forward (in both
  // loops: the backward recomputes them), their 7 input gradients and 7
  // weight gradients; the logits' projection stays unquantized.
  EXPECT_EQ(Count(*fp8_text, "stablehlo.dot_general"), Count(*exact_text, "stablehlo.dot_general"));
  EXPECT_EQ(Count(*fp8_text, "xf8E4M3FN>, tensor<") + Count(*fp8_text, "xf8E5M2>, tensor<"),
            4u * 7);
  const float exact = StepLoss(*exact_text), quantized = StepLoss(*fp8_text);
  EXPECT_NEAR(quantized, exact, 0.05 * exact);
  EXPECT_NE(quantized, exact);
}

// int8 projections (MaxText's quantization=int8): the same 28 dots on int8
// operands into i32; the loss stays close to the exact one. fp8 and int8
// together are refused.
TEST(TrainStep, Int8ProjectionsStayCloseToTheExactStep) {
  TrainStepOptions o{.batch = 2, .dtype = "f32", .param_dtype = "f32"};
  auto exact_text = EmitTrainStep(Tiny(), o);
  o.int8 = true;
  auto int8_text = EmitTrainStep(Tiny(), o);
  ASSERT_TRUE(exact_text.ok() && int8_text.ok()) << int8_text.status().ToString();
  EXPECT_EQ(Count(*int8_text, "stablehlo.dot_general"), Count(*exact_text, "stablehlo.dot_general"));
  EXPECT_EQ(Count(*int8_text, "xi8>) -> tensor<"), 4u * 7);
  const float exact = StepLoss(*exact_text), quantized = StepLoss(*int8_text);
  EXPECT_NEAR(quantized, exact, 0.05 * exact);
  EXPECT_NE(quantized, exact);
  o.fp8 = true;
  EXPECT_EQ(EmitTrainStep(Tiny(), o).status().code(), StatusCode::kInvalidArgument);
}

TEST(TrainStep, RejectsMicrobatchesTheBatchOrMeshCannotTake) {
  TrainStepOptions o{.batch = 6, .mesh = {{"data", 2}}, .microbatches = 4};
  EXPECT_EQ(EmitTrainStep(Tiny(), o).status().code(), StatusCode::kInvalidArgument);
  o.microbatches = 2;  // microbatches of 3 over data = 2
  auto bad = EmitTrainStep(Tiny(), o);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("microbatch of 3"), std::string::npos)
      << bad.status().ToString();
  o.microbatches = 3;
  EXPECT_TRUE(EmitTrainStep(Tiny(), o).ok());
  EXPECT_FALSE(SetRemat("some", o).ok());
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

// GPT-3's block: LayerNorm with scale and shift, a bias on every
// projection, a GELU MLP, learned positions (a table longer than the
// sequence, so that rows past it must take no gradient).
ModelSpec Gpt3Tiny(bool tied) {
  ModelSpec m = Tiny(Mlp::kGelu, tied);
  m.kv_heads = m.heads;
  m.norm = Norm::kLayerNorm;
  m.bias = true;
  m.position_embeddings = 7;
  return m;
}

TEST(TrainStep, GradientsMatchFiniteDifferencesGpt3Tied) {
  CheckGradients(Gpt3Tiny(true));
  CheckGradients(Gpt3Tiny(true), /*flash=*/false);
}
// Selective remat keeps biased projections and recomputes biased norms.
TEST(TrainStep, GradientsMatchFiniteDifferencesGpt3UnderEveryRemat) {
  for (auto remat : {TrainStepOptions::Remat::kSelective, TrainStepOptions::Remat::kNone}) {
    SCOPED_TRACE(RematName(remat));
    TrainStepOptions o = F64();
    o.remat = remat;
    CheckGradients(Gpt3Tiny(false), o);
  }
}

TEST(TrainStep, GradientsMatchFiniteDifferencesGpt3Untied) {
  CheckGradients(Gpt3Tiny(false));
  CheckGradients(Gpt3Tiny(false), /*flash=*/false);
}

// Biases on a gated MLP and on one kv head that a tensor axis cannot split
// (repeated per query head, its bias's gradient summed over them), with
// RMSNorm, which has no shift.
TEST(TrainStep, GradientsMatchFiniteDifferencesBiasesGatedMultiQuery) {
  ModelSpec m = Tiny();
  m.bias = true;
  m.kv_heads = 1;
  CheckGradients(m, /*flash=*/true, {{"tensor", 2}});
  CheckGradients(m, /*flash=*/false);
}

// The step's parameters are the ones CountParams counts, element for
// element, for every model of the library that the step builds.
TEST(TrainStep, ParametersAreTheCountedOnes) {
  int built = 0;
  for (const ModelSpec& m : Library()) {
    auto text = EmitTrainStep(m, {.batch = 1, .seq = 16});
    if (!text.ok()) {
      EXPECT_EQ(text.status().code(), StatusCode::kUnimplemented) << m.name;
      continue;
    }
    auto module = frontend::ParseStableHlo(*text, m.name + ".mlir");
    ASSERT_TRUE(module.ok()) << m.name << ": " << module.status().ToString();
    const ir::Function& f = *(*module)->Lookup("main");
    const size_t params = (f.type().inputs.size() - 3) / 3;
    int64_t elements = 0;
    for (size_t i = 0; i < params; ++i) elements += f.type().inputs[i].num_elements();
    EXPECT_EQ(elements, CountParams(m).total) << m.name;
    built += m.name.rfind("gpt3-", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(built, 3);  // gpt3-22b, gpt3-175b and gpt3-1t among them
}

TEST(TrainStep, SequencesLongerThanThePositionTableAreRefused) {
  ModelSpec m = Gpt3Tiny(true);
  m.position_embeddings = 4;
  auto text = EmitTrainStep(m, {.batch = 2, .seq = 5});
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(text.status().message().find("seq 5 exceeds the 4 positions of its position table"),
            std::string::npos)
      << text.status().message();
  EXPECT_TRUE(EmitTrainStep(m, {.batch = 2, .seq = 4}).ok());
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
  // Selective and no remat keep the layer's dense parts and recompute the
  // experts.
  for (auto remat : {TrainStepOptions::Remat::kSelective, TrainStepOptions::Remat::kNone}) {
    TrainStepOptions o = F64();
    o.remat = remat;
    o.capacity_factor = 0.5;
    CheckGradients(TinyMoe(), o);
  }
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
