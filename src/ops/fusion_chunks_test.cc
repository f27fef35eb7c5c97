// A large kLoop fusion runs chunk by chunk (fusion_chunks.h); its results
// are bit for bit those of its ops run one by one outside a fusion.
#include "ops/fusion_chunks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/testing/mlir_test_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using testing::Make;
using testing::RunMlir;

// @main(args) running `body` (ending in stablehlo.return of `results`) in a
// kLoop fusion, or, unfused, as the function's own ops.
std::string Program(const std::vector<std::string>& arg_types, const std::string& body,
                    const std::vector<std::string>& result_types, bool fused) {
  std::string params, block_args, operands, types, results;
  for (size_t i = 0; i < arg_types.size(); ++i) {
    const std::string sep = i ? ", " : "";
    params += sep + "%p" + std::to_string(i) + ": " + arg_types[i];
    block_args += sep + "%a" + std::to_string(i) + ": " + arg_types[i];
    operands += sep + "%p" + std::to_string(i);
    types += sep + arg_types[i];
  }
  for (size_t i = 0; i < result_types.size(); ++i) results += (i ? ", " : "") + result_types[i];
  if (!fused) {
    std::string unfused = body;
    for (size_t i = 0; i < arg_types.size(); ++i) {
      const std::string a = "%a" + std::to_string(i), p = "%p" + std::to_string(i);
      for (size_t at = unfused.find(a); at != std::string::npos; at = unfused.find(a, at)) {
        const char next = at + a.size() < unfused.size() ? unfused[at + a.size()] : ' ';
        if (std::isdigit(static_cast<unsigned char>(next))) {
          at += a.size();
          continue;
        }
        unfused.replace(at, a.size(), p);
      }
    }
    const size_t ret = unfused.rfind("stablehlo.return");
    unfused.replace(ret, std::string("stablehlo.return").size(), "return");
    return "func.func @main(" + params + ") -> (" + results + ") {\n" + unfused + "\n}\n";
  }
  std::string out_names;
  for (size_t i = 0; i < result_types.size(); ++i) {
    out_names += (i ? ", " : "") + std::string("%r#") + std::to_string(i);
  }
  return "func.func @main(" + params + ") -> (" + results +
         ") {\n  %r:" + std::to_string(result_types.size()) + " = \"tpusim.fusion\"(" + operands +
         ") ({\n  ^bb0(" + block_args + "):\n" + body + "\n  }) {kind = \"kLoop\"} : (" + types +
         ") -> (" + results + ")\n  return " + out_names + " : " + results + "\n}\n";
}

Tensor Ramp(ir::ElementType e, const std::vector<int64_t>& shape, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> f(n);
  for (int64_t i = 0; i < n; ++i) f[i] = std::sin(static_cast<float>(i) * scale) * 2.0f;
  if (e == ir::ElementType::kF32) return Make(ir::Type::Tensor(e, shape), f);
  std::vector<uint16_t> h(n);
  for (int64_t i = 0; i < n; ++i) h[i] = numerics::FloatToBf16(f[i]);
  return Make(ir::Type::Tensor(e, shape), h);
}

// Whether the fusion of `program` runs in chunks on `args`.
bool RunsInChunks(const std::string& program, const std::vector<Tensor>& args) {
  auto module = frontend::ParseStableHlo(program, "chunks.mlir");
  if (!module.ok()) return false;
  const ir::Operation* fusion = nullptr;
  for (const auto& op : (*module)->Lookup("main")->entry().ops()) {
    if (op->name_str() == "tpusim.fusion") fusion = op.get();
  }
  exec::Interpreter ctx(**module, {});
  std::vector<Tensor> operands = args;
  auto r = fusion ? EvalLoopInChunks(ctx, *fusion, operands) : std::nullopt;
  return r.has_value() && r->ok();
}

// Runs `body` fused and unfused on `args`; every result bit for bit equal.
// `chunked`: whether the fusion runs in chunks.
void ExpectSameAsUnfused(const std::vector<std::string>& arg_types, const std::string& body,
                         const std::vector<std::string>& result_types,
                         const std::vector<Tensor>& args, bool chunked = true) {
  EXPECT_EQ(RunsInChunks(Program(arg_types, body, result_types, true), args), chunked);
  auto fused = RunMlir(Program(arg_types, body, result_types, true), args);
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  auto unfused = RunMlir(Program(arg_types, body, result_types, false), args);
  ASSERT_TRUE(unfused.ok()) << unfused.status().ToString();
  ASSERT_EQ(fused->size(), unfused->size());
  for (size_t i = 0; i < fused->size(); ++i) {
    EXPECT_TRUE((*fused)[i].BitwiseEquals((*unfused)[i])) << "result " << i;
  }
}

// RMSNorm's scale in bf16: a [4,256] chain computed whole, broadcast over the
// rows of odd length 517 (chunks end mid-row), times a broadcast weight.
TEST(FusionChunksTest, NormScaleWithSmallChainsAndBroadcasts) {
  const char* body = R"(
    %c = stablehlo.constant dense<5.120000e+02> : tensor<4x256xbf16>
    %e = stablehlo.constant dense<9.9e-06> : tensor<4x256xbf16>
    %0 = stablehlo.divide %a0, %c : tensor<4x256xbf16>
    %1 = stablehlo.add %0, %e : tensor<4x256xbf16>
    %2 = stablehlo.rsqrt %1 : tensor<4x256xbf16>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<4x256xbf16>) -> tensor<4x256x517xbf16>
    %4 = stablehlo.multiply %a1, %3 : tensor<4x256x517xbf16>
    %5 = stablehlo.broadcast_in_dim %a2, dims = [2] : (tensor<517xbf16>) -> tensor<4x256x517xbf16>
    %6 = stablehlo.multiply %4, %5 : tensor<4x256x517xbf16>
    %7 = stablehlo.logistic %6 : tensor<4x256x517xbf16>
    stablehlo.return %7 : tensor<4x256x517xbf16>)";
  ExpectSameAsUnfused({"tensor<4x256xbf16>", "tensor<4x256x517xbf16>", "tensor<517xbf16>"}, body,
                      {"tensor<4x256x517xbf16>"},
                      {Ramp(ir::ElementType::kBF16, {4, 256}, 0.3f),
                       Ramp(ir::ElementType::kBF16, {4, 256, 517}, 0.001f),
                       Ramp(ir::ElementType::kBF16, {517}, 0.7f)});
}

// An AdamW-like update in f32 with splat constants, a scalar broadcast, a
// reshape, select on a compare, several results (one returned twice, one an
// operand, one a broadcast).
TEST(FusionChunksTest, UpdateWithSplatsSelectsAndSeveralResults) {
  const char* body = R"(
    %b1 = stablehlo.constant dense<0.9> : tensor<300x301xf32>
    %b2 = stablehlo.constant dense<0.1> : tensor<300x301xf32>
    %lr = stablehlo.broadcast_in_dim %a2, dims = [] : (tensor<f32>) -> tensor<300x301xf32>
    %0 = stablehlo.multiply %b1, %a0 : tensor<300x301xf32>
    %1 = stablehlo.multiply %b2, %a1 : tensor<300x301xf32>
    %2 = stablehlo.add %0, %1 : tensor<300x301xf32>
    %3 = stablehlo.sqrt %2 : tensor<300x301xf32>
    %4 = stablehlo.divide %2, %3 : tensor<300x301xf32>
    %5 = stablehlo.multiply %lr, %4 : tensor<300x301xf32>
    %z = stablehlo.constant dense<0.0> : tensor<300x301xf32>
    %p = stablehlo.compare GT, %a1, %z : (tensor<300x301xf32>, tensor<300x301xf32>) -> tensor<300x301xi1>
    %6 = stablehlo.select %p, %5, %a0 : tensor<300x301xi1>, tensor<300x301xf32>
    %7 = stablehlo.reshape %6 : (tensor<300x301xf32>) -> tensor<90300xf32>
    %8 = stablehlo.exponential %7 : tensor<90300xf32>
    %9 = stablehlo.reshape %8 : (tensor<90300xf32>) -> tensor<300x301xf32>
    stablehlo.return %9, %2, %2, %a1, %lr : tensor<300x301xf32>, tensor<300x301xf32>, tensor<300x301xf32>, tensor<300x301xf32>, tensor<300x301xf32>)";
  const std::string t = "tensor<300x301xf32>";
  Tensor lr = Make(ir::Type::Tensor(ir::ElementType::kF32, {}), std::vector<float>{0.01f});
  ExpectSameAsUnfused({t, t, "tensor<f32>"}, body, {t, t, t, t, t},
                      {Ramp(ir::ElementType::kF32, {300, 301}, 0.01f),
                       Ramp(ir::ElementType::kF32, {300, 301}, 0.013f), lr});
}

// A result takes the storage of an operand nothing else holds once no later
// step reads it; the values are those of the ops run one by one.
TEST(FusionChunksTest, ResultsReuseOperandsNothingElseHolds) {
  const char* body = R"(
    %0 = stablehlo.add %a0, %a1 : tensor<300x301xf32>
    %1 = stablehlo.multiply %0, %a0 : tensor<300x301xf32>
    %2 = stablehlo.exponential %1 : tensor<300x301xf32>
    stablehlo.return %1, %2 : tensor<300x301xf32>, tensor<300x301xf32>)";
  const std::string t = "tensor<300x301xf32>";
  const std::string program = Program({t, t}, body, {t, t}, true);
  auto module = frontend::ParseStableHlo(program, "chunks.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation* fusion = (*module)->Lookup("main")->entry().ops().front().get();
  exec::Interpreter ctx(**module, {});
  const Tensor b = Ramp(ir::ElementType::kF32, {300, 301}, 0.013f);
  std::vector<Tensor> operands = {Ramp(ir::ElementType::kF32, {300, 301}, 0.01f), b};
  const Tensor a = operands[0].Clone().value();
  const uint8_t* a_storage = operands[0].raw();
  auto r = EvalLoopInChunks(ctx, *fusion, operands);
  ASSERT_TRUE(r.has_value() && r->ok());
  EXPECT_EQ((**r)[0].raw(), a_storage);  // result 0 is written over operand 0
  EXPECT_NE((**r)[1].raw(), b.raw());    // operand 1 is the caller's too
  auto unfused = RunMlir(Program({t, t}, body, {t, t}, false), {a, b});
  ASSERT_TRUE(unfused.ok()) << unfused.status().ToString();
  EXPECT_TRUE((**r)[0].BitwiseEquals((*unfused)[0]));
  EXPECT_TRUE((**r)[1].BitwiseEquals((*unfused)[1]));
}

// A body with an op that has no chunk kernel (a transpose) runs op by op,
// and small fusions too; the values are the same.
TEST(FusionChunksTest, OtherBodiesRunOpByOp) {
  const char* body = R"(
    %0 = stablehlo.transpose %a0, dims = [1, 0] : (tensor<300x300xf32>) -> tensor<300x300xf32>
    %1 = stablehlo.add %0, %a0 : tensor<300x300xf32>
    stablehlo.return %1 : tensor<300x300xf32>)";
  ExpectSameAsUnfused({"tensor<300x300xf32>"}, body, {"tensor<300x300xf32>"},
                      {Ramp(ir::ElementType::kF32, {300, 300}, 0.01f)}, /*chunked=*/false);
  const char* small = R"(
    %0 = stablehlo.multiply %a0, %a0 : tensor<100xf32>
    stablehlo.return %0 : tensor<100xf32>)";
  ExpectSameAsUnfused({"tensor<100xf32>"}, small, {"tensor<100xf32>"},
                      {Ramp(ir::ElementType::kF32, {100}, 0.1f)}, /*chunked=*/false);
}

}  // namespace
}  // namespace tpusim::ops
