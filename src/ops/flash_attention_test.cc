// tpusim.flash_attention and its gradient with the query rows' positions,
// split over the sequence by the SPMD partitioner (context parallelism):
// each device keeps its rows, gathers the keys and values, and its dk and
// dv are partial sums that add up across devices. Every result equals the
// whole run's. A model's train step with flash attention computes what the
// same step spelled out with dot_general and softmax does.
#include <gtest/gtest.h>

#include <random>

#include "spmd/run_test_util.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/model/train_step.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/spmd/partitioner.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::ops {
namespace {

constexpr char kQ[] = "tensor<2x8x4x3xf32>", kKv[] = "tensor<2x8x2x3xf32>",
               kLse[] = "tensor<2x4x8xf32>";

// Values of `type` (`n` elements): sin(c i) over the flattened index i.
std::string Wavy(const std::string& name, int n, double c, const std::string& type) {
  const std::string flat = "tensor<" + std::to_string(n) + "xf32>";
  return "    %" + name + "_i = stablehlo.iota dim = 0 : " + flat + "\n    %" + name +
         "_c = stablehlo.constant dense<" + std::to_string(c) + "> : " + flat + "\n    %" + name +
         "_m = stablehlo.multiply %" + name + "_i, %" + name + "_c : " + flat + "\n    %" + name +
         "_s = stablehlo.sine %" + name + "_m : " + flat + "\n    %" + name +
         "_w = stablehlo.reshape %" + name + "_s : (" + flat + ") -> " + type + "\n";
}

std::string Sdy(const std::string& dims) { return "#sdy.sharding<@mesh, [" + dims + "]>"; }

// Causal attention of q [2, 8, 4 heads, 3] over k, v [2, 8, 2 kv heads, 3]
// and its gradient, with the rows' positions unless `!positions`: q, k, v,
// do and pos split as `rows` says along the sequence (and `heads` along
// the heads); returns o, lse, dq, dk, dv, dk and dv held as `kv_out`.
std::string Program(const std::string& mesh, const std::string& batch, const std::string& rows,
                    const std::string& heads, const std::string& kv_out, bool positions = true) {
  const std::string q_dims = "{" + batch + "}, {" + rows + "}, {" + heads + "}, {}";
  std::string text =
      "module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 "
      ": i32} {\n  sdy.mesh @mesh = <[" +
      mesh + "]>\n  func.func public @main() -> (";
  const std::string q_out = std::string(kQ) + " {sdy.sharding = " + Sdy(q_dims) + "}";
  const std::string kv_s = std::string(kKv) + " {sdy.sharding = " + Sdy(kv_out) + "}";
  text += q_out + ", " + kLse + ", " + q_out + ", " + kv_s + ", " + kv_s + ") {\n";
  text += Wavy("q", 192, 0.37, kQ) + Wavy("k", 96, 0.71, kKv) + Wavy("v", 96, 1.13, kKv) +
          Wavy("do", 192, 0.53, kQ);
  for (const char* v : {"q", "k", "v", "do"}) {
    const bool is_q = v[0] == 'q' || v[0] == 'd';
    text += "    %" + std::string(v) + " = sdy.sharding_constraint %" + v + "_w <@mesh, [" +
            q_dims + "]> : " + (is_q ? kQ : kKv) + "\n";
  }
  text +=
      "    %pos_i = stablehlo.iota dim = 0 : tensor<8xi32>\n"
      "    %pos = sdy.sharding_constraint %pos_i <@mesh, [{" +
      rows + "}]> : tensor<8xi32>\n";
  const std::string pos = positions ? ", %pos" : "", pos_type = positions ? ", tensor<8xi32>" : "";
  text += "    %o:2 = \"tpusim.flash_attention\"(%q, %k, %v" + pos +
          ") {causal = true, scale = 0.5 : f64} : (" + kQ + ", " + kKv + ", " + kKv + pos_type +
          ") -> (" + kQ + ", " + kLse + ")\n";
  text += "    %g:3 = \"tpusim.flash_attention_grad\"(%q, %k, %v, %o#0, %o#1, %do" + pos +
          ") {causal = true, scale = 0.5 : f64} : (" + kQ + ", " + kKv + ", " + kKv + ", " + kQ +
          ", " + kLse + ", " + kQ + pos_type + ") -> (" + kQ + ", " + kKv + ", " + kKv + ")\n";
  text += "    return %o#0, %o#1, %g#0, %g#1, %g#2 : " + std::string(kQ) + ", " + kLse + ", " + kQ +
          ", " + kKv + ", " + kKv + "\n  }\n}\n";
  return text;
}

struct Partitioned {
  std::unique_ptr<ir::Module> global, local;
  spmd::PartitionStats stats;
  int Count(const std::string& op) const {
    auto it = stats.inserted.find(op);
    return it == stats.inserted.end() ? 0 : it->second;
  }
  // The local q operand's shape of the first flash attention op.
  ir::Shape LocalQ() const {
    ir::Shape shape;
    ir::Walk(local->Lookup("main")->body(), [&](ir::Operation& op) {
      if (op.name_str() == "tpusim.flash_attention" && shape.empty())
        shape = op.operand(0).type().shape();
    });
    return shape;
  }
};

// Partitions `text` and checks that it gives the whole run's results.
Partitioned PartitionAndCompare(const std::string& text) {
  Partitioned r;
  auto global = frontend::ParseStableHlo(text, "flash.mlir");
  EXPECT_TRUE(global.ok()) << global.status().ToString() << "\n" << text;
  if (!global.ok()) return r;
  r.global = std::move(*global);
  Status valid = verify::VerifyModule(*r.global);
  EXPECT_TRUE(valid.ok()) << valid.ToString();
  auto local = spmd::Partition(*r.global, "main", &r.stats);
  EXPECT_TRUE(local.ok()) << local.status().ToString();
  if (!local.ok()) return r;
  r.local = std::move(*local);
  const test::Outcome whole = test::RunWhole(*r.global, "main");
  const test::Outcome split = test::RunPartitioned(*r.local, "main");
  EXPECT_TRUE(whole.status.ok()) << whole.status.ToString();
  EXPECT_TRUE(split.status.ok()) << split.status.ToString();
  if (!whole.status.ok() || !split.status.ok()) return r;
  EXPECT_EQ(whole.values.size(), 5u);
  for (size_t i = 0; i < whole.values.size() && i < split.values.size(); ++i) {
    const Tensor& w = whole.values[i];
    const Tensor& s = split.values[i];
    EXPECT_EQ(w.shape(), s.shape()) << "result " << i;
    if (w.shape() != s.shape()) continue;
    double largest = 0;
    for (int64_t e = 0; e < w.num_elements(); ++e) {
      largest = std::max(largest, std::abs(static_cast<double>(w.data<float>()[e])));
      EXPECT_NEAR(w.data<float>()[e], s.data<float>()[e], 2e-6) << "result " << i << " @" << e;
    }
    EXPECT_GT(largest, 0.05) << "result " << i << " is (nearly) zero: the test would not see";
  }
  return r;
}

// Rows over 4 devices, batch over 2: the keys and values are gathered, dk
// and dv reduce-scatter back into the rows.
TEST(FlashAttention, SequenceSplitGivesTheWholeRunsValuesAndGradients) {
  Partitioned r = PartitionAndCompare(
      Program(R"("b"=2, "s"=4)", R"("b")", R"("s")", "", R"({"b"}, {"s"}, {}, {})"));
  ASSERT_TRUE(r.local);
  EXPECT_EQ(r.LocalQ(), (ir::Shape{1, 2, 4, 3}));     // each device its rows only
  EXPECT_EQ(r.Count("stablehlo.all_gather"), 2);      // k and v, once for both ops
  EXPECT_EQ(r.Count("stablehlo.reduce_scatter"), 2);  // dk and dv
  EXPECT_EQ(r.Count("stablehlo.all_reduce"), 0);
  EXPECT_EQ(r.stats.replicated_ops, 0);
}

// Rows and kv heads split together; dk and dv wanted whole: all-reduced.
TEST(FlashAttention, SequenceAndHeadsSplitAllReduceWholeKvGradients) {
  Partitioned r = PartitionAndCompare(
      Program(R"("b"=2, "s"=2, "h"=2)", R"("b")", R"("s")", R"("h")", "{}, {}, {}, {}"));
  ASSERT_TRUE(r.local);
  EXPECT_EQ(r.LocalQ(), (ir::Shape{1, 4, 2, 3}));
  EXPECT_GE(r.Count("stablehlo.all_reduce"), 2);
  EXPECT_EQ(r.stats.replicated_ops, 0);
}

// Without positions a causal mask cannot tell a device's rows from the
// first ones: the rows stay whole (gathered), and the values still agree.
TEST(FlashAttention, CausalRowsWithoutPositionsStayWhole) {
  Partitioned r = PartitionAndCompare(
      Program(R"("b"=2, "s"=4)", R"("b")", R"("s")", "", R"({"b"}, {"s"}, {}, {})", false));
  ASSERT_TRUE(r.local);
  EXPECT_EQ(r.LocalQ(), (ir::Shape{1, 8, 4, 3}));
}

TEST(FlashAttention, PositionsMustBeI32OfTheRows) {
  std::string text = Program(R"("b"=2, "s"=4)", R"("b")", R"("s")", "", R"({"b"}, {"s"}, {}, {})");
  text.replace(text.find("%pos) {causal"), 4, "%q_i");  // an f32 [192] operand in its place
  text.replace(text.find("tensor<8xi32>) -> ("), 13, "tensor<192xf32>");
  auto m = frontend::ParseStableHlo(text, "flash.mlir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Status valid = verify::VerifyModule(**m);
  EXPECT_FALSE(valid.ok());
  EXPECT_NE(valid.ToString().find("takes pos i32 [8]"), std::string::npos) << valid.ToString();
}

// The results of model `spec`'s f32 train step (batch 2) on random
// parameters, zero moments, step 1 and random tokens.
std::vector<Tensor> TrainStep(const model::ModelSpec& spec, bool flash, Numerics numerics) {
  model::TrainStepOptions o{.batch = 2, .dtype = "f32", .param_dtype = "f32",
                            .flash_attention = flash};
  auto text = model::EmitTrainStep(spec, o);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  if (!text.ok()) return {};
  auto module = frontend::ParseStableHlo(*text, "step.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  const ir::Function& f = *(*module)->Lookup("main");
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 0.5f);
  const size_t params = (f.type().inputs.size() - 3) / 3;
  std::vector<Tensor> in;
  for (size_t i = 0; i < f.type().inputs.size(); ++i) {
    Tensor t = *Tensor::Allocate(f.type().inputs[i]);
    for (int64_t e = 0; e < t.num_elements(); ++e) {
      if (t.element() == ir::ElementType::kSI32) {
        t.mutable_data<int32_t>()[e] = static_cast<int32_t>(rng() % spec.vocab);
      } else if (i < params) {
        t.mutable_data<float>()[e] = normal(rng);
      } else if (i == 3 * params) {
        t.mutable_data<float>()[e] = 1;  // step
      }
    }
    in.push_back(std::move(t));
  }
  exec::Interpreter run(**module, {.numerics = numerics});
  auto out = run.Run("main", in);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(*out) : std::vector<Tensor>{};
}

// Flash attention's kernel (blocked, f32) against the step spelled out
// (f32 dot_generals and softmax): the loss, the gradients (AdamW's first
// moments) and the updated parameters agree to f32 rounding, 1e-4 of each
// array's largest element. 70 positions take two row blocks, the second
// partly padded; two query heads per kv head.
TEST(FlashAttention, TrainStepMatchesTheSpelledOutAttention) {
  model::ModelSpec m;
  m.name = "tiny";
  m.layers = 2;
  m.d_model = 16;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 8;
  m.d_ff = 24;
  m.vocab = 11;
  m.max_seq = 70;
  for (Numerics numerics : {Numerics::kReference, Numerics::kTpu}) {
    SCOPED_TRACE(numerics == Numerics::kTpu ? "tpu" : "reference");
    const std::vector<Tensor> flash = TrainStep(m, true, numerics);
    const std::vector<Tensor> spelled = TrainStep(m, false, numerics);
    ASSERT_EQ(flash.size(), spelled.size());
    ASSERT_GE(flash.size(), 10u);
    // TPU numerics round the dots' operands to bf16 in both programs, but
    // not the same operands (the spelled-out softmax is not rounded between
    // its dots as the kernel's p is): bf16's 2^-8, twice that in AdamW's
    // second moments (squared gradients).
    const double tol = numerics == Numerics::kTpu ? 4e-2 : 1e-4;
    for (size_t r = 0; r < flash.size(); ++r) {
      const Tensor& a = flash[r];
      const Tensor& b = spelled[r];
      ASSERT_EQ(a.shape(), b.shape()) << "result " << r;
      double largest = 1e-3, worst = 0;
      for (int64_t e = 0; e < a.num_elements(); ++e) {
        largest = std::max(largest, std::abs(double{b.data<float>()[e]}));
        worst = std::max(worst, std::abs(double{a.data<float>()[e]} - b.data<float>()[e]));
      }
      EXPECT_LE(worst, tol * largest) << "result " << r;
    }
  }
}

}  // namespace
}  // namespace tpusim::ops
