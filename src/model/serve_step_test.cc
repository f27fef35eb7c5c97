#include "tpusim/model/serve_step.h"

#include <gtest/gtest.h>

#include <random>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::model {
namespace {

ModelSpec Tiny(int64_t kv_heads, bool palm) {
  ModelSpec m;
  m.name = "tiny";
  m.layers = 2;
  m.d_model = 8;
  m.heads = 4;
  m.kv_heads = kv_heads;
  m.head_dim = 3;
  m.d_ff = 10;
  m.vocab = 11;
  m.max_seq = 8;
  if (palm) {
    m.norm = Norm::kLayerNorm;
    m.parallel_layers = true;
    m.tied_embeddings = true;
  }
  return m;
}

struct Program {
  std::unique_ptr<ir::Module> module;
  std::vector<Tensor> Run(const std::vector<Tensor>& in) const {
    exec::Interpreter run(*module, {});
    auto out = run.Run("main", in);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? std::move(*out) : std::vector<Tensor>{};
  }
};

Program Parse(StatusOr<std::string> text) {
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  if (!text.ok()) return {};
  auto m = frontend::ParseStableHlo(*text, "serve.mlir");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return {};
  Status valid = verify::VerifyModule(**m);
  EXPECT_TRUE(valid.ok()) << valid.ToString();
  return {std::move(*m)};
}

// Random weights for `f`'s first `count` arguments.
std::vector<Tensor> Weights(const ir::Function& f, size_t count) {
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0, 0.5);
  std::vector<Tensor> out;
  for (size_t i = 0; i < count; ++i) {
    Tensor t = *Tensor::Allocate(f.type().inputs[i]);
    for (int64_t e = 0; e < t.num_elements(); ++e) t.mutable_data<double>()[e] = normal(rng);
    out.push_back(std::move(t));
  }
  return out;
}

Tensor Tokens(const std::vector<int32_t>& ids, int64_t batch, int64_t len) {
  Tensor t = *Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kSI32, {batch, len}));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < len; ++i) t.mutable_data<int32_t>()[b * len + i] = ids[b * 7 + i];
  }
  return t;
}

// The KV cache [L, b, n, kv, d] grown to n + 1 positions, the last zero.
Tensor Grow(const Tensor& cache) {
  ir::Shape shape = cache.type().shape();
  const int64_t n = shape[2], row = shape[3] * shape[4];
  ++shape[2];
  Tensor out = *Tensor::Allocate(ir::Type::Tensor(cache.element(), shape));
  for (int64_t lb = 0; lb < shape[0] * shape[1]; ++lb) {
    for (int64_t i = 0; i < n * row; ++i) {
      out.mutable_data<double>()[lb * (n + 1) * row + i] = cache.data<double>()[lb * n * row + i];
    }
  }
  return out;
}

// Decoding token t after a prefill of tokens [0, t) gives the logits a
// prefill of [0, t] gives at its last position: the cache holds the same
// keys and values, and attention over it is the causal row of the prompt.
// A mixture of experts drops no token here (capacity factor 0): a prefill
// of t + 1 tokens could drop the last one, where decode never does.
void CheckDecodeContinuesPrefill(const ModelSpec& spec) {
  const int64_t batch = 2, t = 5;
  TrainStepOptions o{.batch = batch, .dtype = "f64", .param_dtype = "f64"};
  o.capacity_factor = 0;
  o.seq = t;
  Program short_prefill = Parse(EmitPrefillStep(spec, o));
  o.seq = t + 1;
  Program long_prefill = Parse(EmitPrefillStep(spec, o));
  Program decode = Parse(EmitDecodeStep(spec, o, t));
  ASSERT_TRUE(short_prefill.module && long_prefill.module && decode.module);
  const ir::Function& f = *short_prefill.module->Lookup("main");
  const size_t weights = f.type().inputs.size() - 1;
  const std::vector<int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7};
  std::vector<Tensor> in = Weights(f, weights);

  std::vector<Tensor> a = in;
  a.push_back(Tokens(ids, batch, t));
  const std::vector<Tensor> first = short_prefill.Run(a);
  ASSERT_EQ(first.size(), 3u);
  std::vector<Tensor> b = in;
  b.push_back(Tokens(ids, batch, t + 1));
  const std::vector<Tensor> whole = long_prefill.Run(b);
  ASSERT_EQ(whole.size(), 3u);
  std::vector<Tensor> c = in;
  c.push_back(Grow(first[1]));
  c.push_back(Grow(first[2]));
  Tensor next = *Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kSI32, {batch, 1}));
  for (int64_t i = 0; i < batch; ++i) next.mutable_data<int32_t>()[i] = ids[i * 7 + t];
  c.push_back(std::move(next));
  const std::vector<Tensor> step = decode.Run(c);
  ASSERT_EQ(step.size(), 3u);
  for (int64_t e = 0; e < whole[0].num_elements(); ++e) {
    EXPECT_NEAR(step[0].data<double>()[e], whole[0].data<double>()[e], 1e-9) << e;
  }
  // And the cache it returns is the longer prefill's.
  for (int64_t e = 0; e < whole[1].num_elements(); ++e) {
    EXPECT_NEAR(step[1].data<double>()[e], whole[1].data<double>()[e], 1e-9) << e;
  }
}

TEST(ServeStep, DecodeContinuesPrefillGroupedQuery) { CheckDecodeContinuesPrefill(Tiny(2, false)); }
TEST(ServeStep, DecodeContinuesPrefillPalmBlock) { CheckDecodeContinuesPrefill(Tiny(1, true)); }

// GPT-3's block: LayerNorm with shift, biases everywhere, GELU, learned
// positions (decode adds position t's).
TEST(ServeStep, DecodeContinuesPrefillGpt3) {
  ModelSpec m = Tiny(4, false);
  m.norm = Norm::kLayerNorm;
  m.mlp = Mlp::kGelu;
  m.bias = true;
  m.tied_embeddings = true;
  m.position_embeddings = 8;
  CheckDecodeContinuesPrefill(m);
}

// Mixtral's MLP: 4 experts, 2 per token; with PaLM's block, GELU experts.
TEST(ServeStep, DecodeContinuesPrefillMixtureOfExperts) {
  ModelSpec moe = Tiny(2, false);
  moe.experts = 4;
  moe.experts_per_token = 2;
  CheckDecodeContinuesPrefill(moe);
  ModelSpec palm = Tiny(1, true);
  palm.experts = 4;
  palm.experts_per_token = 2;
  palm.mlp = Mlp::kGelu;
  CheckDecodeContinuesPrefill(palm);
}

TEST(ServeStep, BadRequestsSayWhy) {
  EXPECT_EQ(EmitDecodeStep(Tiny(2, false), {.batch = 1}, -1).status().code(),
            StatusCode::kInvalidArgument);
  ModelSpec gpt = Tiny(2, false);
  gpt.position_embeddings = 8;
  auto past = EmitDecodeStep(gpt, {.batch = 1}, 8);
  EXPECT_EQ(past.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(past.status().message().find("position 8 is past the 8 positions"), std::string::npos)
      << past.status().message();
  EXPECT_TRUE(EmitDecodeStep(gpt, {.batch = 1}, 7).ok());
}

}  // namespace
}  // namespace tpusim::model
