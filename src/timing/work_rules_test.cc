// The work rules of the data-movement and region ops (OpDef::work), checked
// against counts worked out by hand.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "testing/test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/hw/cost_model.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::ops {
namespace {

int64_t Ops(const Work& w, VectorClass c) { return w.vector_ops[static_cast<int>(c)]; }

// The work of the first op of @main in `body`, a function over `args`
// returning `result`; fails the test if it does not parse, verify or have
// a work rule.
Work FirstOpWork(const std::string& args, const std::string& result, const std::string& body) {
  const std::string text =
      "func.func @main(" + args + ") -> " + result + " {\n" + body + "\n}\n";
  auto module = frontend::ParseStableHlo(text, "test.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  Status verified = verify::VerifyModule(**module);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  const ir::Operation& op = *(*module)->Lookup("main")->entry().ops().front();
  const OpDef* def = OpRegistry::Lookup(op.name());
  EXPECT_TRUE(def != nullptr && def->work != nullptr) << op.name_str();
  if (def == nullptr || def->work == nullptr) return {};
  return def->work(op);
}

// A one-operand op `op_text` from `in` to `out`, returned.
Work UnaryWork(const std::string& in, const std::string& out, const std::string& op_text) {
  return FirstOpWork("%a: " + in, out,
                     "  %0 = " + op_text + " : (" + in + ") -> " + out + "\n  return %0 : " + out);
}

TEST(WorkRulesTest, TransposeOfMinorDimsUsesTheTransposeUnit) {
  Work w = UnaryWork("tensor<4x8x128xf32>", "tensor<4x128x8xf32>",
                     "stablehlo.transpose %a, dims = [0, 2, 1]");
  EXPECT_EQ(w.transpose_elements, 4 * 8 * 128);
  EXPECT_EQ(Ops(w, VectorClass::kAlu), 0);
}

TEST(WorkRulesTest, TransposeKeepingTheMinorDimIsACopy) {
  Work w = UnaryWork("tensor<4x8x128xf32>", "tensor<8x4x128xf32>",
                     "stablehlo.transpose %a, dims = [1, 0, 2]");
  EXPECT_EQ(w.transpose_elements, 0);
  EXPECT_EQ(Ops(w, VectorClass::kAlu), 4 * 8 * 128);
  EXPECT_EQ(w.bytes_read(), 4 * 8 * 128 * 4);
  EXPECT_EQ(w.bytes_written(), 4 * 8 * 128 * 4);
}

TEST(WorkRulesTest, ReshapeMergingMajorDimsIsFree) {
  Work w = UnaryWork("tensor<2x3x8x128xf32>", "tensor<6x8x128xf32>", "stablehlo.reshape %a");
  EXPECT_TRUE(w.free);
}

TEST(WorkRulesTest, ReshapeOfTheMinorDimsRelayouts) {
  Work w = UnaryWork("tensor<8x128xf32>", "tensor<1024xf32>", "stablehlo.reshape %a");
  EXPECT_FALSE(w.free);
  EXPECT_EQ(w.transpose_elements, 1024);
}

TEST(WorkRulesTest, GatherCountsOneRandomAccessPerSlice) {
  // An embedding lookup: 10 rows of 128 f32 from a 64-row table.
  Work w = FirstOpWork("%t: tensor<64x128xf32>, %i: tensor<10x1xi32>", "tensor<10x128xf32>", R"(
  %0 = "stablehlo.gather"(%t, %i) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
      start_index_map = [0], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 128>, indices_are_sorted = false
  } : (tensor<64x128xf32>, tensor<10x1xi32>) -> tensor<10x128xf32>
  return %0 : tensor<10x128xf32>)");
  EXPECT_EQ(w.random_accesses, 10);
  EXPECT_EQ(w.random_access_bytes, 128 * 4);
  EXPECT_EQ(w.bytes_read(), 10 * 4);  // the indices; the table only by DMA
  EXPECT_EQ(w.bytes_written(), 10 * 128 * 4);
}

TEST(WorkRulesTest, ScatterAddCountsUpdateSlicesAndUpdateOps) {
  Work w = FirstOpWork("%x: tensor<64x128xf32>, %i: tensor<5x1xi32>, %u: tensor<5x128xf32>",
                       "tensor<64x128xf32>", R"(
  %0 = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {
    scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>
  } : (tensor<64x128xf32>, tensor<5x1xi32>, tensor<5x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>)");
  EXPECT_EQ(w.random_accesses, 5);
  EXPECT_EQ(w.random_access_bytes, 128 * 4);
  EXPECT_EQ(Ops(w, VectorClass::kAlu), 5 * 128);
  EXPECT_EQ(w.bytes_written(), 5 * 128 * 4);  // in place: only the updated rows
}

TEST(WorkRulesTest, DynamicUpdateSliceMovesOnlyTheUpdate) {
  Work w = FirstOpWork("%x: tensor<1024x128xf32>, %u: tensor<8x128xf32>, %s: tensor<i32>",
                       "tensor<1024x128xf32>", R"(
  %0 = stablehlo.dynamic_update_slice %x, %u, %s, %s
      : (tensor<1024x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<1024x128xf32>
  return %0 : tensor<1024x128xf32>)");
  EXPECT_EQ(w.bytes_written(), 8 * 128 * 4);
  EXPECT_EQ(w.bytes_read(), 8 * 128 * 4 + 2 * 4);
}

TEST(WorkRulesTest, ReduceCountsEveryInputElement) {
  Work w = FirstOpWork("%a: tensor<16x256xf32>, %z: tensor<f32>", "tensor<16xf32>", R"(
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1]
      : (tensor<16x256xf32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>)");
  EXPECT_EQ(Ops(w, VectorClass::kAlu), 16 * 256);
  EXPECT_EQ(w.flops, 16 * 256);
  EXPECT_EQ(w.bytes_written(), 16 * 4);
}

TEST(WorkRulesTest, ReduceWindowCountsWindowElementsPerOutput) {
  // A 2x2 max pool with stride 2: 4 x 4 outputs of 4 elements each.
  Work w = FirstOpWork("%a: tensor<8x8xf32>, %z: tensor<f32>", "tensor<4x4xf32>", R"(
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
      : (tensor<8x8xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>)");
  EXPECT_EQ(Ops(w, VectorClass::kAlu), 16 * 4);
}

TEST(WorkRulesTest, SortOf1024CountsBitonicComparatorEvaluations) {
  Work w = FirstOpWork("%a: tensor<1024xf32>", "tensor<1024xf32>", R"(
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %p = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<1024xf32>) -> tensor<1024xf32>
  return %0 : tensor<1024xf32>)");
  // 10 levels give 10 * 11 / 2 = 55 stages of 1024 evaluations, each a
  // compare and a select of the one operand.
  const int64_t evaluations = 1024 * 55;
  EXPECT_EQ(Ops(w, VectorClass::kAlu), 2 * evaluations);
}

TEST(WorkRulesTest, TupleIsFree) {
  Work w = FirstOpWork("%a: tensor<4xf32>", "tuple<tensor<4xf32>>", R"(
  %0 = stablehlo.tuple %a : tuple<tensor<4xf32>>
  return %0 : tuple<tensor<4xf32>>)");
  EXPECT_TRUE(w.free);
}

TEST(WorkRulesTest, CholeskyIsAThirdOfNCubedFlops) {
  Work w = UnaryWork("tensor<2x96x96xf32>", "tensor<2x96x96xf32>",
                     "\"stablehlo.cholesky\"(%a) {lower = true}");
  EXPECT_EQ(w.flops, 2 * 96 * 96 * 96 / 3);
}

TEST(WorkRulesTest, FftIsFiveNLogNPerTransform) {
  Work w = UnaryWork("tensor<3x256xcomplex<f32>>", "tensor<3x256xcomplex<f32>>",
                     "\"stablehlo.fft\"(%a) {fft_type = #stablehlo<fft_type FFT>, "
                     "fft_length = array<i64: 256>}");
  EXPECT_EQ(w.flops, 3 * 5 * 256 * 8);
}

TEST(WorkRulesTest, TopKSortsEveryRow) {
  Work w = FirstOpWork("%a: tensor<4x256xf32>", "tensor<4x8xf32>", R"(
  %0:2 = "chlo.top_k"(%a) {k = 8 : i64} : (tensor<4x256xf32>) -> (tensor<4x8xf32>, tensor<4x8xi32>)
  return %0#0 : tensor<4x8xf32>)");
  // 8 levels: 36 stages of 256 evaluations per row, each a compare and two
  // selects (value and index).
  EXPECT_EQ(Ops(w, VectorClass::kAlu), 3 * 4 * 256 * 36);
}

TEST(WorkRulesTest, RaggedDotIsOneMxuProductPerGroup) {
  // 64 rows split among 4 groups, each [16, 32] x [32, 16] with its own rhs.
  Work w = FirstOpWork("%a: tensor<64x32xbf16>, %b: tensor<4x32x16xbf16>, %g: tensor<4xi32>",
                       "tensor<64x16xf32>", R"(
  %0 = "chlo.ragged_dot"(%a, %b, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<
      lhs_batching_dimensions = [], rhs_batching_dimensions = [],
      lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1],
      lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>}
      : (tensor<64x32xbf16>, tensor<4x32x16xbf16>, tensor<4xi32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>)");
  ASSERT_EQ(w.matmuls.size(), 1u);
  EXPECT_EQ(w.matmuls[0].batch, 4);
  EXPECT_EQ(w.matmuls[0].m, 16);
  EXPECT_EQ(w.matmuls[0].k, 32);
  EXPECT_EQ(w.matmuls[0].n, 16);
  EXPECT_EQ(w.flops, 2 * 64 * 32 * 16);
}

// TE's fused attention is priced as flash attention: QK^T and PV per query
// head forward, four more products backward, a causal mask keeping
// (S + 1) / 2S of the scores.
TEST(ForeignKernelWork, FusedAttentionIsFlashAttention) {
  const std::string q = "tensor<2x64x4x32xbf16>", kv = "tensor<2x64x2x2x32xbf16>";
  auto attention = [&](const std::string& target, const std::string& config) {
    return FirstOpWork("%q: " + q + ", %kv: " + kv, q,
                       "  %0 = stablehlo.custom_call @" + target +
                           "(%q, %kv) {backend_config = \"" + config + "\"} : (" + q + ", " + kv +
                           ") -> " + q + "\n  return %0 : " + q);
  };
  const int64_t full = 2 * 4 * 64 * 64;  // scores: batch x heads x S x S
  Work fwd = attention("te_fused_attn_forward_ffi", "{mask_type = 0 : i64}");
  ASSERT_EQ(fwd.matmuls.size(), 2u);
  EXPECT_EQ(fwd.flops, 2 * 2 * full * 32);
  // The 2 query heads of each KV head share its keys: 2 x 2 products of
  // 128 rows.
  EXPECT_EQ(fwd.matmuls[0].batch, 4);
  EXPECT_EQ(fwd.matmuls[0].m, 128);
  EXPECT_EQ(Ops(fwd, VectorClass::kTranscendental), full);
  EXPECT_NE(
      fwd.priced_as.find("forward (batch 2, 4 heads, 2 KV heads, 64x64, head dim 32, no mask)"),
      std::string::npos)
      << fwd.priced_as;
  Work causal = attention("te_fused_attn_forward_ffi", "{mask_type = 2 : i64}");
  const int64_t kept_rows = 33;  // 64 x 65/128 = 32.5, rounded half up
  EXPECT_EQ(causal.flops, 2 * 2 * (2 * 4 * kept_rows * 64) * 32);
  Work bwd = attention("te_fused_attn_backward_ffi", "{mask_type = 0 : i64}");
  EXPECT_EQ(bwd.matmuls.size(), 6u);
  EXPECT_EQ(bwd.flops, 3 * fwd.flops);
  // Traffic is the operands and results: the scores stay on chip.
  EXPECT_EQ(fwd.bytes_read(), 2 * 64 * 4 * 32 * 2 + 2 * 64 * 2 * 2 * 32 * 2);
  Work other = attention("my_kernel", "");
  EXPECT_TRUE(other.priced_as.empty());
  EXPECT_TRUE(other.matmuls.empty());
}

// A decode step's attention: one query row per head. Multi-query attention's
// 8 heads go through the MXU as 8 rows against their one KV head's keys,
// so each key tile is loaded once per sequence, not once per head.
TEST(ForeignKernelWork, QueryHeadsSharingAKvHeadShareItsTiles) {
  const std::string q = "tensor<2x1x8x128xbf16>", kv = "tensor<2x1024x2x1x128xbf16>";
  Work w = FirstOpWork("%q: " + q + ", %kv: " + kv, q,
                       "  %0 = stablehlo.custom_call @te_fused_attn_forward_ffi(%q, %kv) "
                       "{backend_config = \"{mask_type = 0 : i64}\"} : (" +
                           q + ", " + kv + ") -> " + q + "\n  return %0 : " + q);
  ASSERT_EQ(w.matmuls.size(), 2u);
  EXPECT_EQ(w.matmuls[0].batch, 2);
  EXPECT_EQ(w.matmuls[0].m, 8);
  EXPECT_EQ(w.matmuls[0].k, 128);
  EXPECT_EQ(w.matmuls[0].n, 1024);
  EXPECT_EQ(w.flops, 2 * 2 * (2 * 8 * 1024) * 128);
  const hw::ChipSpec& chip = test::V5e();
  const double grouped = hw::PriceWork(chip, w).unit_seconds[static_cast<int>(hw::Unit::kMxu)];
  Work per_head = w;
  for (MatmulWork& m : per_head.matmuls) {
    m.batch *= 8;
    m.m /= 8;
  }
  EXPECT_LT(grouped,
            hw::PriceWork(chip, per_head).unit_seconds[static_cast<int>(hw::Unit::kMxu)] / 4);
}

}  // namespace
}  // namespace tpusim::ops
