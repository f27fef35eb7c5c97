// A mixture of experts' forward pass against a reference written as loops
// over the tokens: the step's loss, with and without dropped tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/model/train_step.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::model {
namespace {

constexpr int64_t kBatch = 2, kSeq = 8, kD = 6, kF = 5, kE = 4, kK = 2, kVocab = 11;

// One layer; its attention is zeroed (wo = 0) below, so the layer is
// x + moe(norm2(x)), which the reference computes by hand.
ModelSpec OneLayerMoe() {
  ModelSpec m;
  m.name = "moe";
  m.layers = 1;
  m.d_model = kD;
  m.heads = 2;
  m.kv_heads = 1;
  m.head_dim = 3;
  m.d_ff = kF;
  m.vocab = kVocab;
  m.max_seq = kSeq;
  m.experts = kE;
  m.experts_per_token = kK;
  return m;
}

using Params = std::map<std::string, std::vector<double>>;

struct Step {
  std::unique_ptr<ir::Module> module;
  std::vector<Tensor> in;
};

// The step with random parameters (wo zero), zero moments, step 1, and
// `params` the parameters by name.
Step Build(double capacity_factor, Params& params) {
  TrainStepOptions o{.batch = kBatch, .dtype = "f64", .param_dtype = "f64"};
  o.capacity_factor = capacity_factor;
  auto text = EmitTrainStep(OneLayerMoe(), o);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  if (!text.ok()) return {};
  auto m = frontend::ParseStableHlo(*text, "moe.mlir");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return {};
  EXPECT_TRUE(verify::VerifyModule(**m).ok());
  Step step{std::move(*m), {}};
  const ir::Function& f = *step.module->Lookup("main");
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0, 0.7);
  for (int i = 0; i < f.entry().num_arguments(); ++i) {
    const std::string& name = f.entry().argument(i).name();
    Tensor t = *Tensor::Allocate(f.type().inputs[static_cast<size_t>(i)]);
    for (int64_t e = 0; e < t.num_elements(); ++e) {
      if (name == "tokens" || name == "targets") {
        t.mutable_data<int32_t>()[e] = static_cast<int32_t>(rng() % kVocab);
      } else if (name == "step") {
        t.mutable_data<double>()[e] = 1;
      } else if (name != "wo" && name.substr(0, 2) != "m_" && name.substr(0, 2) != "v_") {
        t.mutable_data<double>()[e] = normal(rng);
      }
    }
    if (t.element() == ir::ElementType::kF64) {
      params[name].assign(t.data<double>(), t.data<double>() + t.num_elements());
    } else {
      params[name].assign(t.data<int32_t>(), t.data<int32_t>() + t.num_elements());
    }
    step.in.push_back(std::move(t));
  }
  return step;
}

double StepLoss(const Step& step) {
  exec::Interpreter run(*step.module, {});
  auto out = run.Run("main", step.in);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? out->back().data<double>()[0] : NAN;
}

std::vector<double> RmsNorm(const double* x, const std::vector<double>& g) {
  double ms = 0;
  for (int64_t i = 0; i < kD; ++i) ms += x[i] * x[i] / kD;
  std::vector<double> y(kD);
  for (int64_t i = 0; i < kD; ++i) y[i] = x[i] / std::sqrt(ms + 1e-5) * g[i];
  return y;
}

// Expert e's SwiGLU of h: (silu(h Wg) * (h Wu)) Wd, weights [E, d, f], [E, f, d].
std::vector<double> Expert(const Params& p, int64_t e, const std::vector<double>& h) {
  std::vector<double> y(kD, 0);
  for (int64_t j = 0; j < kF; ++j) {
    double g = 0, u = 0;
    for (int64_t i = 0; i < kD; ++i) {
      g += h[i] * p.at("gate")[(e * kD + i) * kF + j];
      u += h[i] * p.at("up")[(e * kD + i) * kF + j];
    }
    const double a = g / (1 + std::exp(-g)) * u;
    for (int64_t i = 0; i < kD; ++i) y[i] += a * p.at("down")[(e * kF + j) * kD + i];
  }
  return y;
}

// The mean cross-entropy, token by token; each sequence's experts take
// tokens in order until `capacity` of them, the rest dropped (counted in
// `dropped`).
double ReferenceLoss(const Params& p, int64_t capacity, int& dropped) {
  double loss = 0;
  for (int64_t b = 0; b < kBatch; ++b) {
    std::vector<int64_t> taken(kE, 0);
    for (int64_t t = 0; t < kSeq; ++t) {
      const auto token = static_cast<int64_t>(p.at("tokens")[b * kSeq + t]);
      std::vector<double> x(p.at("embed").begin() + token * kD,
                            p.at("embed").begin() + (token + 1) * kD);
      const std::vector<double> h = RmsNorm(x.data(), p.at("norm2"));
      std::vector<double> logit(kE, 0);
      for (int64_t e = 0; e < kE; ++e) {
        for (int64_t i = 0; i < kD; ++i) logit[e] += h[i] * p.at("router")[i * kE + e];
      }
      std::vector<int64_t> order(kE);
      for (int64_t e = 0; e < kE; ++e) order[e] = e;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t c) { return logit[a] > logit[c]; });
      double z = 0;
      for (int64_t r = 0; r < kK; ++r) z += std::exp(logit[order[r]] - logit[order[0]]);
      std::vector<double> y = x;
      for (int64_t r = 0; r < kK; ++r) {
        const int64_t e = order[r];
        if (taken[e]++ >= capacity) {
          ++dropped;
          continue;
        }
        const double gate = std::exp(logit[e] - logit[order[0]]) / z;
        const std::vector<double> out = Expert(p, e, h);
        for (int64_t i = 0; i < kD; ++i) y[i] += gate * out[i];
      }
      const std::vector<double> hf = RmsNorm(y.data(), p.at("final_norm"));
      std::vector<double> logits(kVocab, 0);
      for (int64_t v = 0; v < kVocab; ++v) {
        for (int64_t i = 0; i < kD; ++i) logits[v] += hf[i] * p.at("unembed")[i * kVocab + v];
      }
      const double mx = *std::max_element(logits.begin(), logits.end());
      double sum = 0;
      for (double l : logits) sum += std::exp(l - mx);
      const auto target = static_cast<int64_t>(p.at("targets")[b * kSeq + t]);
      loss += std::log(sum) + mx - logits[target];
    }
  }
  return loss / (kBatch * kSeq);
}

TEST(MixtureOfExperts, DroppingTokensMatchesALoopReference) {
  Params p;
  const Step dropping = Build(/*capacity_factor=*/0.5, p);  // 2 slots for 16 choices
  ASSERT_TRUE(dropping.module);
  int dropped = 0;
  const double reference = ReferenceLoss(p, /*capacity=*/2, dropped);
  EXPECT_GE(dropped, kBatch * (kSeq * kK - kE * 2));
  const double loss = StepLoss(dropping);
  EXPECT_NEAR(loss, reference, 1e-10 * std::abs(reference));

  Params q;
  const Step keeping = Build(/*capacity_factor=*/0, q);  // every sequence's tokens fit
  int none = 0;
  const double whole = ReferenceLoss(q, kSeq, none);
  EXPECT_EQ(none, 0);
  EXPECT_EQ(p, q);  // the same parameters
  const double kept = StepLoss(keeping);
  EXPECT_NEAR(kept, whole, 1e-10 * std::abs(whole));
  EXPECT_GT(std::abs(kept - loss), 1e-3) << "dropping changed nothing";
}

// A router of zeros ties every expert: each token takes experts 0 and 1,
// gates 1/2 each, and all but each sequence's first two tokens are dropped.
TEST(MixtureOfExperts, TiesGoToTheLowerIndex) {
  Params p;
  Step step = Build(/*capacity_factor=*/0.5, p);
  ASSERT_TRUE(step.module);
  const ir::Function& f = *step.module->Lookup("main");
  for (int i = 0; i < f.entry().num_arguments(); ++i) {
    if (f.entry().argument(i).name() != "router") continue;
    Tensor& router = step.in[static_cast<size_t>(i)];
    std::fill_n(router.mutable_data<double>(), router.num_elements(), 0.0);
  }
  std::fill(p["router"].begin(), p["router"].end(), 0.0);
  int dropped = 0;
  const double reference = ReferenceLoss(p, /*capacity=*/2, dropped);
  EXPECT_EQ(dropped, kBatch * (kSeq - 2) * kK);
  EXPECT_NEAR(StepLoss(step), reference, 1e-10 * std::abs(reference));
}

// GShard's capacity, ceil(k seq factor / E), at most the sequence.
TEST(MixtureOfExperts, CapacityFollowsTheFactor) {
  auto slots = [&](double factor) {
    TrainStepOptions o{.batch = kBatch};
    o.capacity_factor = factor;
    const std::string text = *EmitTrainStep(OneLayerMoe(), o);
    // The dispatch one-hots' type names the capacity.
    for (int64_t c = kSeq; c >= 1; --c) {
      const std::string type = "tensor<2x8x4x" + std::to_string(c) + "xf32>";
      if (text.find(type) != std::string::npos) return c;
    }
    return int64_t{0};
  };
  EXPECT_EQ(slots(1.25), 5);  // ceil(2 x 8 x 1.25 / 4)
  EXPECT_EQ(slots(0.5), 2);
  EXPECT_EQ(slots(0.1), 1);
  EXPECT_EQ(slots(4), kSeq);
  EXPECT_EQ(slots(0), kSeq);
}

}  // namespace
}  // namespace tpusim::model
