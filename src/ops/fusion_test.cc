// tpusim.fusion: its shape rule, that it computes what its ops compute
// unfused, and its work (the inner ops' compute, HBM traffic only for the
// kernel's operands and results, VMEM spills).
#include <gtest/gtest.h>

#include <string>

#include "ops/testing/mlir_test_util.h"
#include "tpusim/hw/chip.h"
#include "tpusim/hw/cost_model.h"
#include "tpusim/hw/layout.h"

namespace tpusim::ops {
namespace {

using testing::Make;
using testing::Read;
using testing::RunMlir;
using testing::VerifyMlir;

// @main running one kernel of `body` (ops on %a: tensor<4x8xf32> and
// %b: tensor<8xf32> ending in stablehlo.return) with the given attributes.
std::string Kernel(const std::string& body, const std::string& attrs,
                   const std::string& result = "tensor<4x8xf32>",
                   const std::string& args = "%a: tensor<4x8xf32>, %b: tensor<8xf32>") {
  return R"(
func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> )" + result + R"( {
  %0 = "tpusim.fusion"(%arg0, %arg1) ({
  ^bb0()" + args + R"():
)" + body + R"(
  }) {)" + attrs + R"(} : (tensor<4x8xf32>, tensor<8xf32>) -> )" + result + R"(
  return %0 : )" + result + R"(
})";
}

const char* kBiasTanh = R"(
    %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.add %a, %1 : tensor<4x8xf32>
    %3 = stablehlo.tanh %2 : tensor<4x8xf32>
    stablehlo.return %3 : tensor<4x8xf32>)";

const char* kLoopAttrs = R"(kind = "kLoop", name = "fusion.0")";

TEST(FusionOp, VerifiesAWellFormedKernel) {
  EXPECT_TRUE(VerifyMlir(Kernel(kBiasTanh, kLoopAttrs)).ok());
}

TEST(FusionOp, RejectsAnUnknownKind) {
  Status s = VerifyMlir(Kernel(kBiasTanh, R"(kind = "kCustom")"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("kCustom"), std::string::npos) << s.ToString();
}

TEST(FusionOp, RequiresAKind) {
  Status s = VerifyMlir(Kernel(kBiasTanh, R"(name = "fusion.0")"));
  EXPECT_NE(s.message().find("kind"), std::string::npos) << s.ToString();
}

TEST(FusionOp, RejectsBlockArgumentsUnlikeItsOperands) {
  const char* body = R"(
    %1 = stablehlo.tanh %a : tensor<4x8xf32>
    stablehlo.return %1 : tensor<4x8xf32>)";
  Status s = VerifyMlir(Kernel(body, kLoopAttrs, "tensor<4x8xf32>",
                               "%a: tensor<4x8xf32>, %b: tensor<8xf16>"));
  EXPECT_NE(s.message().find("block arguments"), std::string::npos) << s.ToString();
}

TEST(FusionOp, RejectsAReturnUnlikeItsResults) {
  const char* body = R"(
    %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
    stablehlo.return %1, %a : tensor<4x8xf32>, tensor<4x8xf32>)";
  Status s = VerifyMlir(Kernel(body, kLoopAttrs));
  EXPECT_NE(s.message().find("returns"), std::string::npos) << s.ToString();
}

TEST(FusionOp, RejectsABodyWithoutReturn) {
  const char* body = R"(
    %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
    func.return %1 : tensor<4x8xf32>)";
  Status s = VerifyMlir(Kernel(body, kLoopAttrs));
  EXPECT_NE(s.message().find("stablehlo.return"), std::string::npos) << s.ToString();
}

TEST(FusionOp, EvaluatesLikeItsOpsUnfused) {
  const std::string unfused = R"(
func.func public @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {)" +
                              std::string(kBiasTanh).replace(
                                  std::string(kBiasTanh).find("stablehlo.return"), 16,
                                  "return") +
                              "\n}";
  std::vector<float> x(32), bias(8);
  for (int i = 0; i < 32; ++i) x[i] = 0.1f * static_cast<float>(i) - 1.5f;
  for (int i = 0; i < 8; ++i) bias[i] = 0.25f * static_cast<float>(i) - 1.0f;
  std::vector<Tensor> args = {Make(ir::Type::Tensor(ir::ElementType::kF32, {4, 8}), x),
                              Make(ir::Type::Tensor(ir::ElementType::kF32, {8}), bias)};
  auto fused = RunMlir(Kernel(kBiasTanh, kLoopAttrs), args);
  auto plain = RunMlir(unfused, args);
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(Read<float>((*fused)[0]), Read<float>((*plain)[0]));
}

// The work of the first op of @main in `text`.
Work WorkOfFirstOp(const std::string& text) {
  auto module = frontend::ParseStableHlo(text, "test.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  EXPECT_TRUE(verify::VerifyModule(**module).ok());
  const ir::Operation& op = *(*module)->Lookup("main")->entry().ops().front();
  return OpRegistry::Lookup(op.name())->work(op);
}

// A kernel of `n` elementwise ops over tensor<256x1024xf32>.
std::string Chain(int n) {
  std::string body;
  std::string last = "%a";
  for (int i = 0; i < n; ++i) {
    std::string v = "%v" + std::to_string(i);
    body += "    " + v + " = stablehlo.multiply " + last + ", " + last +
            " : tensor<256x1024xf32>\n";
    last = v;
  }
  return R"(
func.func public @main(%arg0: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %0 = "tpusim.fusion"(%arg0) ({
  ^bb0(%a: tensor<256x1024xf32>):
)" + body + "    stablehlo.return " + last + R"( : tensor<256x1024xf32>
  }) {kind = "kLoop", name = "fusion.1"} : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
  return %0 : tensor<256x1024xf32>
})";
}

TEST(FusionWork, AnElementwiseChainReadsAndWritesOnce) {
  constexpr int64_t kElements = 256 * 1024, kBytes = kElements * 4;
  for (int n : {2, 5}) {
    Work w = WorkOfFirstOp(Chain(n));
    EXPECT_EQ(w.bytes_read(), kBytes) << n;
    EXPECT_EQ(w.bytes_written(), kBytes) << n;
    EXPECT_EQ(w.vector_ops[static_cast<int>(VectorClass::kMultiply)], n * kElements);
    EXPECT_EQ(w.flops, n * kElements);
    // Streamed one vector register at a time: n f32 tiles of 8 x 128.
    EXPECT_EQ(w.onchip_bytes, n * 8 * 128 * 4);
    EXPECT_EQ(w.onchip_tiles, kElements / (8 * 128));
  }
}

TEST(FusionWork, AFusedChainMovesFewerBytesThanItsOps) {
  hw::ChipSpec chip = hw::FindPreset("v5e").value();
  hw::OpCost fused = hw::PriceWork(chip, WorkOfFirstOp(Chain(5)));
  const int64_t tensor = hw::PaddedBytes(ir::Type::Tensor(ir::ElementType::kF32, {256, 1024}));
  EXPECT_EQ(fused.hbm_bytes, 2 * tensor);  // not 5 reads and 5 writes
  EXPECT_EQ(fused.spill_bytes, 0);
}

const char* kSumOfSquares = R"(
func.func public @main(%arg0: tensor<16x512xf32>) -> tensor<16xf32> {
  %0 = "tpusim.fusion"(%arg0) ({
  ^bb0(%a: tensor<16x512xf32>):
    %1 = stablehlo.multiply %a, %a : tensor<16x512xf32>
    %c = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<16x512xf32>, tensor<f32>) -> tensor<16xf32>
    stablehlo.return %2 : tensor<16xf32>
  }) {kind = "kInput", name = "fusion.2"} : (tensor<16x512xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
})";

TEST(FusionWork, AReductionKernelHoldsWholeRows) {
  Work w = WorkOfFirstOp(kSumOfSquares);
  EXPECT_EQ(w.bytes_read(), 16 * 512 * 4);
  EXPECT_EQ(w.bytes_written(), 16 * 4);
  EXPECT_EQ(w.vector_ops[static_cast<int>(VectorClass::kMultiply)], 16 * 512);
  EXPECT_EQ(w.vector_ops[static_cast<int>(VectorClass::kAlu)], 16 * 512);  // the adds
  // One tile is one reduced row: 512 squares, then the row's sum.
  EXPECT_EQ(w.onchip_bytes, 512 * 4 + 4);
  EXPECT_EQ(w.onchip_tiles, 16);
}

TEST(FusionWork, ADotKernelCountsItsMatmulAndEpilogue) {
  const char* text = R"(
func.func public @main(%x: tensor<128x256xbf16>, %w: tensor<256x512xbf16>, %bias: tensor<512xf32>) -> tensor<128x512xf32> {
  %0 = "tpusim.fusion"(%x, %w, %bias) ({
  ^bb0(%a: tensor<128x256xbf16>, %b: tensor<256x512xbf16>, %c: tensor<512xf32>):
    %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<128x256xbf16>, tensor<256x512xbf16>) -> tensor<128x512xf32>
    %2 = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<512xf32>) -> tensor<128x512xf32>
    %3 = stablehlo.add %1, %2 : tensor<128x512xf32>
    %z = stablehlo.constant dense<0.0> : tensor<128x512xf32>
    %4 = stablehlo.maximum %3, %z : tensor<128x512xf32>
    stablehlo.return %4 : tensor<128x512xf32>
  }) {kind = "kOutput", name = "fusion.3"} : (tensor<128x256xbf16>, tensor<256x512xbf16>, tensor<512xf32>) -> tensor<128x512xf32>
  return %0 : tensor<128x512xf32>
})";
  Work w = WorkOfFirstOp(text);
  ASSERT_EQ(w.matmuls.size(), 1u);
  EXPECT_EQ(w.matmuls[0].m, 128);
  EXPECT_EQ(w.matmuls[0].k, 256);
  EXPECT_EQ(w.matmuls[0].n, 512);
  EXPECT_EQ(w.bytes_read(), 128 * 256 * 2 + 256 * 512 * 2 + 512 * 4);
  EXPECT_EQ(w.bytes_written(), 128 * 512 * 4);
  EXPECT_EQ(w.flops, 2 * 128 * 256 * 512 + 2 * 128 * 512);  // the dot, add, max
  // The whole 128 x 512 output is one tile: dot, broadcast, add, maximum.
  EXPECT_EQ(w.onchip_bytes, 4 * 128 * 512 * 4);
  EXPECT_EQ(w.onchip_tiles, 1);
}

TEST(FusionWork, IntermediatesBeyondVmemSpillToHbm) {
  hw::ChipSpec chip = hw::FindPreset("v5e").value();
  Work w;
  w.AddVector(VectorClass::kAlu, 1024);
  w.onchip_bytes = chip.memory.vmem_bytes + 1000;
  w.onchip_tiles = 3;
  hw::OpCost spilled = hw::PriceWork(chip, w);
  EXPECT_EQ(spilled.spill_bytes, 2 * 1000 * 3);  // written and read back, every tile
  EXPECT_EQ(spilled.hbm_bytes, spilled.spill_bytes);
  w.onchip_bytes = chip.memory.vmem_bytes;
  EXPECT_EQ(hw::PriceWork(chip, w).spill_bytes, 0);
}

TEST(FusionWork, AReductionOfHugeRowsSpills) {
  // Rows of 64M f32 squares (256 MiB) do not fit in v5e's 128 MiB of VMEM.
  std::string text = kSumOfSquares;
  for (auto [from, to] : {std::pair<std::string, std::string>{"16x512", "2x67108864"},
                          {"tensor<16xf32>", "tensor<2xf32>"}}) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
      text.replace(at, from.size(), to);
      at += to.size();
    }
  }
  Work w = WorkOfFirstOp(text);
  EXPECT_EQ(w.onchip_bytes, int64_t{67108864} * 4 + 4);
  EXPECT_EQ(w.onchip_tiles, 2);
  hw::ChipSpec chip = hw::FindPreset("v5e").value();
  ASSERT_GT(w.onchip_bytes, chip.memory.vmem_bytes);
  hw::OpCost cost = hw::PriceWork(chip, w);
  EXPECT_EQ(cost.spill_bytes, 2 * 2 * (w.onchip_bytes - chip.memory.vmem_bytes));
}

}  // namespace
}  // namespace tpusim::ops
