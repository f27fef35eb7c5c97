// Golden tests of the HLO printer: small StableHLO programs and the HLO text
// XLA would dump for them.
#include "tpusim/frontend/hlo/printer.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tpusim/frontend/stablehlo/parser.h"

namespace tpusim::frontend {
namespace {

// The HLO text of a StableHLO program; empty after a test failure.
std::string Hlo(std::string_view mlir) {
  auto module = ParseStableHlo(mlir, "test.mlir");
  if (!module.ok()) {
    ADD_FAILURE() << module.status().ToString();
    return "";
  }
  auto text = PrintHlo(**module);
  if (!text.ok()) {
    ADD_FAILURE() << text.status().ToString();
    return "";
  }
  return *text;
}

// The HLO text of one op applied to %arg0 (and %arg1) of `signature`.
std::string HloOf(std::string_view signature, std::string_view body) {
  return Hlo("func.func @main(" + std::string(signature) + ") {\n" + std::string(body) + "\n}\n");
}

TEST(HloPrinterTest, ElementwiseWithBroadcast) {
  EXPECT_EQ(
      Hlo(R"(
module @jit_f {
  func.func public @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16xf32>) -> tensor<8x16xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>
  }
})"),
      R"(HloModule jit_f, entry_computation_layout={(f32[8,16]{1,0}, f32[16]{0})->f32[8,16]{1,0}}

ENTRY %main (Arg_0.1: f32[8,16], Arg_1.2: f32[16]) -> f32[8,16] {
  %Arg_0.1 = f32[8,16]{1,0} parameter(0)
  %Arg_1.2 = f32[16]{0} parameter(1)
  %broadcast.3 = f32[8,16]{1,0} broadcast(f32[16]{0} %Arg_1.2), dimensions={1}
  ROOT %add.4 = f32[8,16]{1,0} add(f32[8,16]{1,0} %Arg_0.1, f32[8,16]{1,0} %broadcast.3)
}
)");
}

TEST(HloPrinterTest, ReduceBodyIsAComputationAndResultsATuple) {
  EXPECT_EQ(Hlo(R"(
func.func @main(%arg0: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %cst : tensor<4xf32>, tensor<f32>
})"),
            R"(HloModule main, entry_computation_layout={(f32[4,8]{1,0})->(f32[4]{0}, f32[])}

%region_0.3 (Arg_0.4: f32[], Arg_1.5: f32[]) -> f32[] {
  %Arg_0.4 = f32[] parameter(0)
  %Arg_1.5 = f32[] parameter(1)
  ROOT %add.6 = f32[] add(f32[] %Arg_0.4, f32[] %Arg_1.5)
}

ENTRY %main (Arg_0.1: f32[4,8]) -> (f32[4], f32[]) {
  %Arg_0.1 = f32[4,8]{1,0} parameter(0)
  %constant.2 = f32[] constant(0)
  %reduce.7 = f32[4]{0} reduce(f32[4,8]{1,0} %Arg_0.1, f32[] %constant.2), dimensions={1}, to_apply=%region_0.3
  ROOT %tuple.8 = (f32[4]{0}, f32[]) tuple(f32[4]{0} %reduce.7, f32[] %constant.2)
}
)");
}

// The loop state and the values the loop reads from outside travel as one
// tuple; the body passes the outside values through.
TEST(HloPrinterTest, WhileCarriesStateAndCapturesInATuple) {
  EXPECT_EQ(Hlo(R"(
func.func @main(%arg0: tensor<f32>) -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %w = stablehlo.while(%i = %c0) : tensor<i32>
    cond {
      %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c3 : tensor<i32>
      stablehlo.return %n : tensor<i32>
    }
  return %w : tensor<i32>
})"),
            R"(HloModule main, entry_computation_layout={(f32[])->s32[]}

%region_0.5 (Arg_0.6: (s32[], s32[])) -> pred[] {
  %Arg_0.6 = (s32[], s32[]) parameter(0)
  %get-tuple-element.7 = s32[] get-tuple-element((s32[], s32[]) %Arg_0.6), index=0
  %get-tuple-element.8 = s32[] get-tuple-element((s32[], s32[]) %Arg_0.6), index=1
  ROOT %compare.9 = pred[] compare(s32[] %get-tuple-element.7, s32[] %get-tuple-element.8), direction=LT
}

%region_1.10 (Arg_0.11: (s32[], s32[])) -> (s32[], s32[]) {
  %Arg_0.11 = (s32[], s32[]) parameter(0)
  %get-tuple-element.12 = s32[] get-tuple-element((s32[], s32[]) %Arg_0.11), index=0
  %get-tuple-element.13 = s32[] get-tuple-element((s32[], s32[]) %Arg_0.11), index=1
  %add.14 = s32[] add(s32[] %get-tuple-element.12, s32[] %get-tuple-element.13)
  ROOT %tuple.15 = (s32[], s32[]) tuple(s32[] %add.14, s32[] %get-tuple-element.13)
}

ENTRY %main (Arg_0.1: f32[]) -> s32[] {
  %Arg_0.1 = f32[] parameter(0)
  %constant.2 = s32[] constant(0)
  %constant.3 = s32[] constant(3)
  %tuple.4 = (s32[], s32[]) tuple(s32[] %constant.2, s32[] %constant.3)
  %while.16 = (s32[], s32[]) while((s32[], s32[]) %tuple.4), condition=%region_0.5, body=%region_1.10
  ROOT %get-tuple-element.17 = s32[] get-tuple-element((s32[], s32[]) %while.16), index=0
  %get-tuple-element.18 = s32[] get-tuple-element((s32[], s32[]) %while.16), index=1
}
)");
}

// Each branch takes a tuple of the values it uses from outside.
TEST(HloPrinterTest, IfBecomesConditionalWithCapturedOperands) {
  EXPECT_EQ(Hlo(R"(
func.func @main(%arg0: tensor<i1>, %arg1: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.if"(%arg0) ({
    %1 = stablehlo.negate %arg1 : tensor<2xf32>
    stablehlo.return %1 : tensor<2xf32>
  }, {
    %2 = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
    stablehlo.return %2 : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
})"),
            R"(HloModule main, entry_computation_layout={(pred[], f32[2]{0})->f32[2]{0}}

%region_0.5 (Arg_0.6: (f32[2])) -> f32[2] {
  %Arg_0.6 = (f32[2]{0}) parameter(0)
  %get-tuple-element.7 = f32[2]{0} get-tuple-element((f32[2]{0}) %Arg_0.6), index=0
  ROOT %negate.8 = f32[2]{0} negate(f32[2]{0} %get-tuple-element.7)
}

%region_1.9 (Arg_0.10: ()) -> f32[2] {
  %Arg_0.10 = () parameter(0)
  ROOT %constant.11 = f32[2]{0} constant({1.5, -2})
}

ENTRY %main (Arg_0.1: pred[], Arg_1.2: f32[2]) -> f32[2] {
  %Arg_0.1 = pred[] parameter(0)
  %Arg_1.2 = f32[2]{0} parameter(1)
  %tuple.3 = (f32[2]{0}) tuple(f32[2]{0} %Arg_1.2)
  %tuple.4 = () tuple()
  ROOT %conditional.12 = f32[2]{0} conditional(pred[] %Arg_0.1, (f32[2]{0}) %tuple.3, () %tuple.4), true_computation=%region_0.5, false_computation=%region_1.9
}
)");
}

TEST(HloPrinterTest, CaseUsesBranchComputations) {
  const std::string text = Hlo(R"(
func.func @main(%arg0: tensor<i32>, %arg1: tensor<i32>) -> tensor<i32> {
  %0 = "stablehlo.case"(%arg0) ({
    stablehlo.return %arg1 : tensor<i32>
  }, {
    %1 = stablehlo.add %arg1, %arg1 : tensor<i32>
    stablehlo.return %1 : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
})");
  EXPECT_NE(
      text.find("ROOT %get-tuple-element.7 = s32[] get-tuple-element((s32[]) %Arg_0.6), index=0"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("conditional(s32[] %Arg_0.1, (s32[]) %tuple.3, (s32[]) %tuple.4), "
                      "branch_computations={%region_0.5, %region_1.8}"),
            std::string::npos)
      << text;
}

TEST(HloPrinterTest, FunctionsPrintBeforeTheirCallers) {
  const std::string text = Hlo(R"(
func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
  %0:2 = func.call @pair(%arg0) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#1 : tensor<f32>
}
func.func private @pair(%arg0: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  return %arg0, %arg0 : tensor<f32>, tensor<f32>
})");
  EXPECT_NE(
      text.find("%pair (Arg_0.1: f32[]) -> (f32[], f32[]) {\n"
                "  %Arg_0.1 = f32[] parameter(0)\n"
                "  ROOT %tuple.2 = (f32[], f32[]) tuple(f32[] %Arg_0.1, f32[] %Arg_0.1)\n}\n\n"
                "ENTRY %main"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "%call.4 = (f32[], f32[]) call(f32[] %Arg_0.3), to_apply=%pair\n"
          "  %get-tuple-element.5 = f32[] get-tuple-element((f32[], f32[]) %call.4), index=0\n"
          "  ROOT %get-tuple-element.6"),
      std::string::npos)
      << text;
}

TEST(HloPrinterTest, CompositeIsACallMarkedComposite) {
  const std::string text = Hlo(R"(
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.composite "my.double" %arg0 {composite_attributes = {n = 2 : i32}, decomposition = @double, version = 1 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @double(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
})");
  EXPECT_NE(text.find("ROOT %call.4 = f32[4]{0} call(f32[4]{0} %Arg_0.3), to_apply=%double, "
                      "is_composite=true, frontend_attributes={composite.attributes={n = 2 : i32},"
                      "composite.name=\"my.double\",composite.version=\"1\"}"),
            std::string::npos)
      << text;
}

TEST(HloPrinterTest, ConstantLiterals) {
  struct Case {
    const char* mlir;
    const char* hlo;
  };
  const Case cases[] = {
      {"dense<1.000000e-01> : tensor<f32>", "f32[] constant(0.1)"},
      {"dense<0.333333343> : tensor<f32>", "f32[] constant(0.333333343)"},
      {"dense<0x7F800000> : tensor<f32>", "f32[] constant(inf)"},
      {"dense<0xFFC00000> : tensor<f32>", "f32[] constant(-nan)"},
      {"dense<1.000000e-01> : tensor<f64>", "f64[] constant(0.1)"},
      {"dense<1.000000e-01> : tensor<bf16>", "bf16[] constant(0.1)"},
      {"dense<-42> : tensor<i32>", "s32[] constant(-42)"},
      {"dense<18446744073709551615> : tensor<ui64>", "u64[] constant(18446744073709551615)"},
      {"dense<true> : tensor<i1>", "pred[] constant(true)"},
      {"dense<[true, false]> : tensor<2xi1>", "pred[2]{0} constant({1, 0})"},
      {"dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>",
       "s32[2,2]{1,0} constant({ { 1, 2 }, { 3, 4 } })"},
      {"dense<[[1], [2]]> : tensor<2x1xi8>", "s8[2,1]{1,0} constant({ {1}, {2} })"},
      {"dense<7> : tensor<2x1x1x1xi32>",
       "s32[2,1,1,1]{3,2,1,0} constant({ { /*i0=0*/ { /*i1=0*/ {7} } }, { /*i0=1*/ { /*i1=0*/ {7} "
       "} } })"},
      {"dense<(1.000000e+00,-2.500000e+00)> : tensor<complex<f32>>", "c64[] constant((1, -2.5))"},
      {"dense<> : tensor<0xf32>", "f32[0]{0} constant({})"},
  };
  for (const Case& c : cases) {
    const std::string text =
        Hlo(std::string("func.func @main() -> tensor<i1> {\n  %0 = stablehlo.constant ") + c.mlir +
            "\n  %1 = stablehlo.constant dense<true> : tensor<i1>\n  return %1 : tensor<i1>\n}\n");
    EXPECT_NE(text.find(std::string("%constant.1 = ") + c.hlo + "\n"), std::string::npos)
        << c.mlir << "\n"
        << text;
  }
}

TEST(HloPrinterTest, LayoutsPrintAsMinorToMajor) {
  const std::string text = Hlo(R"(
func.func @main(%arg0: tensor<4x3xf32, #tpusim.layout<{0,1}>>) -> tensor<4x3xf32> {
  %0 = "tpusim.copy"(%arg0) : (tensor<4x3xf32, #tpusim.layout<{0,1}>>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
})");
  EXPECT_NE(text.find("entry_computation_layout={(f32[4,3]{0,1})->f32[4,3]{1,0}}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ROOT %copy.2 = f32[4,3]{1,0} copy(f32[4,3]{0,1} %Arg_0.1)"),
            std::string::npos)
      << text;
}

TEST(HloPrinterTest, FusionCallsItsFusedComputation) {
  const std::string text = Hlo(R"(
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "tpusim.fusion"(%arg0) ({
  ^bb0(%a: tensor<8xf32>):
    %1 = stablehlo.exponential %a : tensor<8xf32>
    stablehlo.return %1 : tensor<8xf32>
  }) {kind = "kLoop", name = "fusion.7"} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
})");
  EXPECT_NE(text.find("%fused_computation.7 (param_0.3: f32[8]) -> f32[8] {\n"
                      "  %param_0.3 = f32[8]{0} parameter(0)\n"
                      "  ROOT %exponential.4 = f32[8]{0} exponential(f32[8]{0} %param_0.3)\n}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ROOT %fusion.7 = f32[8]{0} fusion(f32[8]{0} %Arg_0.1), kind=kLoop, "
                      "calls=%fused_computation.7"),
            std::string::npos)
      << text;
}

// One attribute spelling per row: the op, and what its instruction must contain.
TEST(HloPrinterTest, AttributeSpellings) {
  struct Case {
    const char* signature;
    const char* body;
    const char* expected;
  };
  const Case cases[] = {
      {"%arg0: tensor<4x6xf32>",
       "%0 = stablehlo.slice %arg0 [0:4:2, 1:6] : (tensor<4x6xf32>) -> tensor<2x5xf32>",
       "slice(f32[4,6]{1,0} %Arg_0.1), slice={[0:4:2], [1:6:1]}"},
      {"%arg0: tensor<4x6xf32>",
       "%0 = stablehlo.slice %arg0 [0:4, 1:6] : (tensor<4x6xf32>) -> tensor<4x5xf32>",
       "slice={[0:4], [1:6]}"},
      {"%arg0: tensor<3xf32>, %arg1: tensor<f32>",
       "%0 = stablehlo.pad %arg0, %arg1, low = [1], high = [2], interior = [1] : (tensor<3xf32>, "
       "tensor<f32>) -> tensor<8xf32>",
       "pad(f32[3]{0} %Arg_0.1, f32[] %Arg_1.2), padding=1_2_1"},
      {"%arg0: tensor<2x3xf32>",
       "%0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>",
       "transpose(f32[2,3]{1,0} %Arg_0.1), dimensions={1,0}"},
      {"", "%0 = stablehlo.iota dim = 1 : tensor<2x3xi32>",
       "s32[2,3]{1,0} iota(), iota_dimension=1"},
      {"%arg0: tensor<2xf32>",
       "%0 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> "
       "tensor<4xf32>",
       "concatenate(f32[2]{0} %Arg_0.1, f32[2]{0} %Arg_0.1), dimensions={0}"},
      {"%arg0: tensor<5xf32>, %arg1: tensor<i32>",
       "%0 = stablehlo.dynamic_slice %arg0, %arg1, sizes = [2] : (tensor<5xf32>, tensor<i32>) -> "
       "tensor<2xf32>",
       "dynamic-slice(f32[5]{0} %Arg_0.1, s32[] %Arg_1.2), dynamic_slice_sizes={2}"},
      {"%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x4x5xf32>",
       "%0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] "
       "x [1], "
       "precision = [HIGHEST, DEFAULT] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> "
       "tensor<2x3x5xf32>",
       "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
       "rhs_contracting_dims={1}, "
       "operand_precision={highest,default}"},
      {"%arg0: tensor<1x8x8x3xf32>, %arg1: tensor<3x3x3x16xf32>",
       "%0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, "
       "1, f], "
       "window = {stride = [2, 2], pad = [[1, 1], [1, 1]], rhs_dilate = [1, 2]} {batch_group_count "
       "= 1 : i64, "
       "feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> "
       "tensor<1x4x3x16xf32>",
       "window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f"},
      {"%arg0: tensor<4xui32>",
       "%0 = stablehlo.compare LT, %arg0, %arg0, UNSIGNED : (tensor<4xui32>, tensor<4xui32>) -> "
       "tensor<4xi1>",
       "compare(u32[4]{0} %Arg_0.1, u32[4]{0} %Arg_0.1), direction=LT\n"},
      {"%arg0: tensor<4xf32>",
       "%0 = stablehlo.compare GE, %arg0, %arg0, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> "
       "tensor<4xi1>",
       "direction=GE, type=TOTALORDER"},
      {"%arg0: tensor<2xui64>",
       "%0:2 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<2xui64>) -> "
       "(tensor<2xui64>, tensor<4xui32>)",
       "(u64[2]{0}, u32[4]{0}) rng-bit-generator(u64[2]{0} %Arg_0.1), algorithm=rng_philox"},
      {"%arg0: tensor<4xf32>",
       "%0 = \"stablehlo.collective_permute\"(%arg0) {channel_handle = "
       "#stablehlo.channel_handle<handle = 2, type = 1>, "
       "source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> "
       "tensor<4xf32>",
       "collective-permute(f32[4]{0} %Arg_0.1), channel_id=2, source_target_pairs={{0,1},{1,0}}"},
      {"%arg0: tensor<4xf32>",
       "%0 = \"stablehlo.all_gather\"(%arg0) {all_gather_dim = 0 : i64, replica_groups = "
       "dense<[[0, 1, 2], [3, -1, -1]]> "
       ": tensor<2x3xi64>} : (tensor<4xf32>) -> tensor<12xf32>",
       "all-gather(f32[4]{0} %Arg_0.1), replica_groups={{0,1,2},{3}}, dimensions={0}"},
      {"%arg0: tensor<4xf32>",
       "%0 = stablehlo.custom_call @foo(%arg0) {backend_config = \"a\\\"b\", has_side_effect = "
       "true} : (tensor<4xf32>) -> tensor<4xf32>",
       "custom-call(f32[4]{0} %Arg_0.1), custom_call_target=\"foo\", "
       "custom_call_has_side_effect=true, "
       "backend_config=\"a\\\"b\""},
      {"%arg0: tensor<4xf32>",
       "%0:2 = stablehlo.optimization_barrier %arg0, %arg0 : tensor<4xf32>, tensor<4xf32>",
       "%opt-barrier.3 = (f32[4]{0}, f32[4]{0}) opt-barrier((f32[4]{0}, f32[4]{0}) %tuple.2)"},
      {"%arg0: tensor<4xf32>",
       "%0 = stablehlo.reduce_precision %arg0, format = e5m2 : tensor<4xf32>",
       "reduce-precision(f32[4]{0} %Arg_0.1), exponent_bits=5, mantissa_bits=2"},
  };
  for (const Case& c : cases) {
    const std::string text = HloOf(c.signature, std::string(c.body) + "\n  return");
    EXPECT_NE(text.find(c.expected), std::string::npos) << c.body << "\n" << text;
  }
}

TEST(HloPrinterTest, GatherAndScatterDimensionNumbers) {
  const std::string text = HloOf(
      "%arg0: tensor<5x3xf32>, %arg1: tensor<2x1xi32>, %arg2: tensor<2x3xf32>",
      R"(%0 = "stablehlo.gather"(%arg0, %arg1) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  %1 = "stablehlo.scatter"(%arg0, %arg1, %arg2) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %2 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = true} : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return)");
  EXPECT_NE(text.find("gather(f32[5,3]{1,0} %Arg_0.1, s32[2,1]{1,0} %Arg_1.2), offset_dims={1}, "
                      "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                      "slice_sizes={1,3}, indices_are_sorted=true"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("update_window_dims={1}, inserted_window_dims={0}, "
                      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, "
                      "to_apply=%region_0.5"),
            std::string::npos)
      << text;
}

TEST(HloPrinterTest, ReplicaAndPartitionCountsGoInTheHeader) {
  const std::string text = Hlo(R"(
module @m attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 4 : i32} {
  func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
    return %arg0 : tensor<f32>
  }
})");
  EXPECT_EQ(
      text.substr(0, text.find('\n')),
      "HloModule m, entry_computation_layout={(f32[])->f32[]}, replica_count=4, num_partitions=2");
  EXPECT_NE(text.find("ROOT %Arg_0.1 = f32[] parameter(0)"), std::string::npos) << text;
}

TEST(HloPrinterTest, OpWithoutHloFormIsUnimplementedAtItsLocation) {
  auto module = ParseStableHlo(R"(func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = chlo.lgamma %arg0 : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
})",
                               "test.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto text = PrintHlo(**module);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(text.status().message().find("op 'chlo.lgamma' at test.mlir:2:"), std::string::npos)
      << text.status().ToString();
  EXPECT_NE(text.status().message().find("has no HLO form"), std::string::npos);
}

TEST(HloPrinterTest, TheOnlyPublicFunctionIsTheEntryNamedMain) {
  const std::string text = Hlo(R"(
func.func @step(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = func.call @main_helper(%arg0) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @main_helper(%arg0: tensor<f32>) -> tensor<f32> {
  return %arg0 : tensor<f32>
})");
  EXPECT_NE(text.find("\n%main_helper (Arg_0.1: f32[]) -> f32[] {"), std::string::npos) << text;
  EXPECT_NE(text.find("\nENTRY %main (Arg_0.2: f32[]) -> f32[] {"), std::string::npos) << text;
}

TEST(HloPrinterTest, ModuleWithoutEntryIsInvalid) {
  auto module = ParseStableHlo(R"(func.func private @f(%arg0: tensor<f32>) -> tensor<f32> {
  return %arg0 : tensor<f32>
})",
                               "test.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(PrintHlo(**module).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::frontend
