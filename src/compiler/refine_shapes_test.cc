// refine-shapes golden tests: shape-polymorphic programs (as jax.export
// writes them) before, and after refinement for given argument shapes. dce
// runs after it in the goldens, to drop the shape computations it leaves
// unused.
#include "tpusim/compiler/refine_shapes.h"

#include <gtest/gtest.h>

#include "compiler/simplify_test_util.h"
#include "tpusim/ir/dynamic.h"

namespace tpusim::compiler {
namespace {

using test::ParseVerified;
using testing::AfterPasses;
using testing::Printed;

ir::Type F32(ir::Shape shape) { return ir::Type::Tensor(ir::ElementType::kF32, std::move(shape)); }

// `input` refined for `args`, then dce'd; printed ("" on failure).
std::string Refined(std::string_view input, const std::vector<ir::Type>& args) {
  std::unique_ptr<ir::Module> module = ParseVerified(input);
  if (module == nullptr) return "";
  Status s = RefineShapes(*module, "main", args);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return "";
  PassContext ctx{.entry = "main"};
  s = RunDeadCodeElimination(*module, ctx);
  EXPECT_TRUE(s.ok()) << s.ToString();
  Status verified = verify::VerifyModule(*module);
  EXPECT_TRUE(verified.ok()) << verified.ToString() << "\n" << ir::PrintModule(*module);
  return s.ok() && verified.ok() ? ir::PrintModule(*module) : "";
}

// The error refining `input` for `args` gives ("" if it succeeds).
std::string RefineError(std::string_view input, std::vector<ir::Type> args) {
  std::unique_ptr<ir::Module> module = ParseVerified(input);
  if (module == nullptr) return "parse failed";
  Status s = RefineShapes(*module, "main", args);
  return s.ok() ? "" : s.message();
}

TEST(RefineShapesTest, ParsesAndPrintsDynamicDimensions) {
  std::unique_ptr<ir::Module> module = ParseVerified(R"(
    func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      return %x : tensor<?x4xf32>
    })");
  ASSERT_NE(module, nullptr);
  const ir::Type& t = module->Lookup("main")->type().inputs[0];
  EXPECT_EQ(t.dim(0), ir::kDynamicDim);
  EXPECT_FALSE(ir::IsStatic(t));
  EXPECT_EQ(t.ToString(), "tensor<?x4xf32>");
  EXPECT_TRUE(HasDynamicShapes(*module));
}

TEST(RefineShapesTest, ElementwiseOpsTakeTheirOperandsShapes) {
  EXPECT_EQ(Refined(R"(
    func.func @main(%x: tensor<?x4xf32>, %p: tensor<i1>) -> tensor<?x4xi32> {
      %0 = stablehlo.exponential %x : tensor<?x4xf32>
      %1 = stablehlo.add %0, %x : tensor<?x4xf32>
      %2 = stablehlo.select %p, %1, %x : tensor<i1>, tensor<?x4xf32>
      %3 = stablehlo.convert %2 : (tensor<?x4xf32>) -> tensor<?x4xi32>
      return %3 : tensor<?x4xi32>
    })",
                    {F32({8, 4}), ir::Type::Tensor(ir::ElementType::kI1, {})}),
            Printed(R"(
    func.func @main(%x: tensor<8x4xf32>, %p: tensor<i1>) -> tensor<8x4xi32> {
      %0 = stablehlo.exponential %x : tensor<8x4xf32>
      %1 = stablehlo.add %0, %x : tensor<8x4xf32>
      %2 = stablehlo.select %p, %1, %x : tensor<i1>, tensor<8x4xf32>
      %3 = stablehlo.convert %2 : (tensor<8x4xf32>) -> tensor<8x4xi32>
      return %3 : tensor<8x4xi32>
    })"));
}

TEST(RefineShapesTest, StructuralOpsInferTheirResults) {
  EXPECT_EQ(Refined(R"(
    func.func @main(%x: tensor<?x?xf32>, %w: tensor<4x3xf32>) -> (tensor<3x?xf32>, tensor<?xf32>, tensor<?x3xf32>, tensor<?x?xf32>) {
      %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<?x?xf32>) -> tensor<?x?xf32>
      %1 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
      %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<?x3xf32>) -> tensor<3x?xf32>
      %cst = stablehlo.constant dense<0.0> : tensor<f32>
      %3 = stablehlo.reduce(%x init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<?x?xf32>, tensor<f32>) -> tensor<?xf32>
      %4 = stablehlo.concatenate %1, %1, dim = 0 : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
      %5 = stablehlo.slice %4 [1:3, 0:3:2] : (tensor<?x3xf32>) -> tensor<?x?xf32>
      %6 = stablehlo.pad %0, %cst, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
      return %2, %3, %4, %6 : tensor<3x?xf32>, tensor<?xf32>, tensor<?x3xf32>, tensor<?x?xf32>
    })",
                    {F32({2, 4}), F32({4, 3})}),
            Printed(R"(
    func.func @main(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> (tensor<3x2xf32>, tensor<2xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
      %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
      %1 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
      %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
      %cst = stablehlo.constant dense<0.0> : tensor<f32>
      %3 = stablehlo.reduce(%x init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
      %4 = stablehlo.concatenate %1, %1, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
      %6 = stablehlo.pad %0, %cst, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x3xf32>
      return %2, %3, %4, %6 : tensor<3x2xf32>, tensor<2xf32>, tensor<4x3xf32>, tensor<4x3xf32>
    })"));
}

TEST(RefineShapesTest, ConvolutionsTakeTheirBatch) {
  EXPECT_EQ(Refined(R"(
    func.func @main(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32> {
      %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
      return %0 : tensor<?x4x6x6xf32>
    })",
                    {F32({2, 3, 8, 8}), F32({4, 3, 3, 3})}),
            Printed(R"(
    func.func @main(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
      %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
      return %0 : tensor<2x4x6x6xf32>
    })"));
}

// jax.export's dynamic custom calls (a cumsum over a symbolic dimension, top
// k and approx top k with k = b, random bits of shape b x 4) become the
// static ops once b is known, as StableHLO's canonicalize-dynamism makes them.
TEST(RefineShapesTest, DynamicCustomCallsBecomeTheirStaticOps) {
  EXPECT_EQ(Refined(R"(
    func.func private @reducer(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.add %a, %b : tensor<f32>
      return %0 : tensor<f32>
    }
    func.func private @cmp(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>) -> tensor<i1> {
      %0 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      return %0 : tensor<i1>
    }
    func.func @main(%x: tensor<?x4xf32>, %s: tensor<2xui64>) -> (tensor<?x4xf32>, tensor<4x?xf32>, tensor<?x?xi32>, tensor<?x4xui32>) {
      %b = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
      %b1 = stablehlo.reshape %b : (tensor<i32>) -> tensor<1xi32>
      %one = stablehlo.constant dense<1> : tensor<1xi32>
      %ones = stablehlo.constant dense<1> : tensor<2xi32>
      %dims = stablehlo.concatenate %b1, %one, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %bm1 = stablehlo.subtract %b1, %one : tensor<1xi32>
      %z1 = stablehlo.constant dense<0> : tensor<3xi32>
      %pad0 = stablehlo.concatenate %bm1, %z1, dim = 0 : (tensor<1xi32>, tensor<3xi32>) -> tensor<4xi32>
      %pad = stablehlo.reshape %pad0 : (tensor<4xi32>) -> tensor<2x2xi32>
      %zero = stablehlo.constant dense<0.0> : tensor<f32>
      %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %zero, %dims, %ones, %ones, %ones, %pad) {api_version = 2 : i32, called_computations = [@reducer]} : (tensor<?x4xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<?x4xf32>
      %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<?x4xf32>) -> tensor<4x?xf32>
      %1:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%t, %b) {api_version = 2 : i32} : (tensor<4x?xf32>, tensor<i32>) -> (tensor<4x?xf32>, tensor<4x?xi32>)
      %iota = stablehlo.iota dim = 0 : tensor<4xi32>
      %four = stablehlo.constant dense<4> : tensor<1xi32>
      %rshape = stablehlo.concatenate %b1, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %iotas = stablehlo.dynamic_broadcast_in_dim %iota, %rshape, dims = [1] : (tensor<4xi32>, tensor<2xi32>) -> tensor<?x4xi32>
      %m = stablehlo.constant dense<-1> : tensor<i32>
      %inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %shape = stablehlo.concatenate %b1, %one, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %2:2 = stablehlo.custom_call @stablehlo.dynamic_approx_top_k(%x, %iotas, %inf, %m, %b, %shape, %shape) {called_computations = [@cmp], indices_of_shape_operands = dense<[5, 6]> : tensor<2xi64>, mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64}} : (tensor<?x4xf32>, tensor<?x4xi32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<?x?xf32>, tensor<?x?xi32>)
      %3:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%s, %rshape) {api_version = 2 : i32, rng_algorithm = #stablehlo<rng_algorithm DEFAULT>} : (tensor<2xui64>, tensor<2xi32>) -> (tensor<2xui64>, tensor<?x4xui32>)
      return %0, %1#0, %2#1, %3#1 : tensor<?x4xf32>, tensor<4x?xf32>, tensor<?x?xi32>, tensor<?x4xui32>
    })",
                    {F32({3, 4}), ir::Type::Tensor(ir::ElementType::kUI64, {2})}),
            Printed(R"(
    func.func private @reducer(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.add %a, %b : tensor<f32>
      return %0 : tensor<f32>
    }
    func.func private @cmp(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>) -> tensor<i1> {
      %0 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      return %0 : tensor<i1>
    }
    func.func @main(%x: tensor<3x4xf32>, %s: tensor<2xui64>) -> (tensor<3x4xf32>, tensor<4x3xf32>, tensor<3x3xi32>, tensor<3x4xui32>) {
      %zero = stablehlo.constant dense<0.0> : tensor<f32>
      %0 = "stablehlo.reduce_window"(%x, %zero) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %r = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %r : tensor<f32>
      }) {base_dilations = array<i64: 1, 1>, padding = dense<[[2, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 1, 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
      %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
      %1:2 = "chlo.top_k"(%t) {k = 3 : i64} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
      %iota = stablehlo.iota dim = 0 : tensor<4xi32>
      %iotas = stablehlo.broadcast_in_dim %iota, dims = [1] : (tensor<4xi32>) -> tensor<3x4xi32>
      %m = stablehlo.constant dense<-1> : tensor<i32>
      %inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %2:2 = stablehlo.custom_call @ApproxTopK(%x, %iotas, %inf, %m) {called_computations = [@cmp], mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 3 : i64}} : (tensor<3x4xf32>, tensor<3x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<3x3xf32>, tensor<3x3xi32>)
      %3:2 = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>)
      return %0, %1#0, %2#1, %3#1 : tensor<3x4xf32>, tensor<4x3xf32>, tensor<3x3xi32>, tensor<3x4xui32>
    })"));
}

// Any call sized by its shape operands (a LAPACK call with a symbolic batch)
// loses them once its results are static.
TEST(RefineShapesTest, ShapeOperandsOfCustomCallsSizeTheirResults) {
  EXPECT_EQ(Refined(R"(
    func.func @main(%x: tensor<?x3x3xf32>) -> tensor<?x3x3xf32> {
      %b = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x3x3xf32>) -> tensor<i32>
      %b1 = stablehlo.reshape %b : (tensor<i32>) -> tensor<1xi32>
      %n = stablehlo.constant dense<3> : tensor<2xi32>
      %s0 = stablehlo.concatenate %b1, %n, dim = 0 : (tensor<1xi32>, tensor<2xi32>) -> tensor<3xi32>
      %s1 = stablehlo.concatenate %b1, dim = 0 : (tensor<1xi32>) -> tensor<1xi32>
      %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%x, %s0, %s1) {indices_of_shape_operands = dense<[1, 2]> : tensor<2xi64>, mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (tensor<?x3x3xf32>, tensor<3xi32>, tensor<1xi32>) -> (tensor<?x3x3xf32>, tensor<?xi32>)
      return %0#0 : tensor<?x3x3xf32>
    })",
                    {F32({5, 3, 3})}),
            Printed(R"(
    func.func @main(%x: tensor<5x3x3xf32>) -> tensor<5x3x3xf32> {
      %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%x) {mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (tensor<5x3x3xf32>) -> (tensor<5x3x3xf32>, tensor<5xi32>)
      return %0#0 : tensor<5x3x3xf32>
    })"));
}

// Exports before jax.global_constant pass the dimension variables as the
// callee's leading integer scalars, which StableHLO's refinement takes as
// known values all the same.
TEST(RefineShapesTest, LeadingKnownScalarsOfACallAreDimensionValues) {
  EXPECT_EQ(Refined(R"(
    func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
      %b = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>
      %0:2 = call @wrapped(%b, %x) : (tensor<i32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi32>)
      return %0#0 : tensor<?xf32>
    }
    func.func private @wrapped(%b: tensor<i32>, %x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi32>) {
      %c = stablehlo.constant dense<2> : tensor<i32>
      %k = stablehlo.divide %b, %c : tensor<i32>
      %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<?xf32>, tensor<i32>) -> (tensor<?xf32>, tensor<?xi32>)
      return %0#0, %0#1 : tensor<?xf32>, tensor<?xi32>
    }
  )",
                    {F32({6})}),
            Printed(R"(
    func.func @main(%x: tensor<6xf32>) -> tensor<3xf32> {
      %b = stablehlo.constant dense<6> : tensor<i32>
      %0:2 = call @wrapped(%b, %x) : (tensor<i32>, tensor<6xf32>) -> (tensor<3xf32>, tensor<3xi32>)
      return %0#0 : tensor<3xf32>
    }
    func.func private @wrapped(%b: tensor<i32>, %x: tensor<6xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
      %0:2 = "chlo.top_k"(%x) {k = 3 : i64} : (tensor<6xf32>) -> (tensor<3xf32>, tensor<3xi32>)
      return %0#0, %0#1 : tensor<3xf32>, tensor<3xi32>
    }
  )"));
}

// A window computed from the argument's values cannot be known in advance.
TEST(RefineShapesTest, DynamicCallsNeedTheirSizesBeforeTheProgramRuns) {
  EXPECT_NE(RefineError(R"(
    func.func @main(%x: tensor<?xf32>, %k: tensor<i32>) -> tensor<?xf32> {
      %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<?xf32>, tensor<i32>) -> (tensor<?xf32>, tensor<?xi32>)
      return %0#0 : tensor<?xf32>
    })",
                        {F32({6}), ir::Type::Tensor(ir::ElementType::kSI32, {})})
                .find("k depends on values not known before the program runs"),
            std::string::npos);
}

// The shape operands, computed from get_dimension_size, are known: the
// dynamic ops become their static forms and dce drops the computation.
TEST(RefineShapesTest, DynamicOpsBecomeStatic) {
  EXPECT_EQ(Refined(R"(
    func.func @main(%x: tensor<?x4xf32>) -> (tensor<?x8xf32>, tensor<?xf32>, tensor<?xi32>, tensor<?xf32>) {
      %0 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
      %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
      %c8 = stablehlo.constant dense<8> : tensor<1xi32>
      %2 = stablehlo.concatenate %1, %c8, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %cst = stablehlo.constant dense<1.0> : tensor<f32>
      %3 = stablehlo.dynamic_broadcast_in_dim %cst, %2, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x8xf32>
      %c4 = stablehlo.constant dense<4> : tensor<i32>
      %4 = stablehlo.multiply %0, %c4 : tensor<i32>
      %5 = stablehlo.reshape %4 : (tensor<i32>) -> tensor<1xi32>
      %6 = stablehlo.dynamic_reshape %x, %5 : (tensor<?x4xf32>, tensor<1xi32>) -> tensor<?xf32>
      %7 = stablehlo.dynamic_iota %5, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>
      %z = stablehlo.constant dense<0> : tensor<1xi32>
      %s = stablehlo.constant dense<2> : tensor<1xi32>
      %8 = stablehlo.real_dynamic_slice %6, %z, %5, %s : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
      return %3, %6, %7, %8 : tensor<?x8xf32>, tensor<?xf32>, tensor<?xi32>, tensor<?xf32>
    })",
                    {F32({3, 4})}),
            Printed(R"(
    func.func @main(%x: tensor<3x4xf32>) -> (tensor<3x8xf32>, tensor<12xf32>, tensor<12xi32>, tensor<6xf32>) {
      %cst = stablehlo.constant dense<1.0> : tensor<f32>
      %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x8xf32>
      %6 = stablehlo.reshape %x : (tensor<3x4xf32>) -> tensor<12xf32>
      %7 = stablehlo.iota dim = 0 : tensor<12xi32>
      %8 = "stablehlo.slice"(%6) {start_indices = array<i64: 0>, limit_indices = array<i64: 12>, strides = array<i64: 2>} : (tensor<12xf32>) -> tensor<6xf32>
      return %3, %6, %7, %8 : tensor<3x8xf32>, tensor<12xf32>, tensor<12xi32>, tensor<6xf32>
    })"));
}

// jax.export's wrapper: @main asserts b >= 1 and passes b to the wrapped
// function as a dimension argument; the assertion holds and is dropped,
// the callee is refined in place (its only caller).
TEST(RefineShapesTest, DimensionArgumentsSizeTheCallee) {
  EXPECT_EQ(Refined(R"(
    func.func public @main(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %0 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x2xf32>) -> tensor<i32>
      %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>
      %c = stablehlo.constant dense<1> : tensor<i64>
      %2 = stablehlo.compare GE, %1, %c, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.custom_call @shape_assertion(%2, %1) {error_message = "b = {0} must be >= 1", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> ()
      %3 = call @wrapped(%1, %x) : (tensor<i64>, tensor<?x2xf32>) -> tensor<?x2xf32>
      return %3 : tensor<?x2xf32>
    }
    func.func private @wrapped(%b: tensor<i64> {jax.global_constant = "b"}, %x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %0 = stablehlo.convert %b : (tensor<i64>) -> tensor<i32>
      %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
      %c = stablehlo.constant dense<2> : tensor<1xi32>
      %2 = stablehlo.concatenate %1, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %cst = stablehlo.constant dense<1.0> : tensor<f32>
      %3 = stablehlo.dynamic_broadcast_in_dim %cst, %2, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x2xf32>
      %4 = stablehlo.add %x, %3 : tensor<?x2xf32>
      return %4 : tensor<?x2xf32>
    })",
                    {F32({5, 2})}),
            Printed(R"(
    func.func public @main(%x: tensor<5x2xf32>) -> tensor<5x2xf32> {
      %0 = stablehlo.constant dense<5> : tensor<i32>
      %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>
      %3 = call @wrapped(%1, %x) : (tensor<i64>, tensor<5x2xf32>) -> tensor<5x2xf32>
      return %3 : tensor<5x2xf32>
    }
    func.func private @wrapped(%b: tensor<i64> {jax.global_constant = "b"}, %x: tensor<5x2xf32>) -> tensor<5x2xf32> {
      %cst = stablehlo.constant dense<1.0> : tensor<f32>
      %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x2xf32>
      %4 = stablehlo.add %x, %3 : tensor<5x2xf32>
      return %4 : tensor<5x2xf32>
    })"));
}

// One private function called with two shapes: a copy for each, and the
// generic one, no longer called, removed.
TEST(RefineShapesTest, CalleesAreSpecializedPerCallSiteShapes) {
  EXPECT_EQ(Refined(R"(
    func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
      %0 = call @twice(%x) : (tensor<?xf32>) -> tensor<?xf32>
      %1 = call @twice(%y) : (tensor<?xf32>) -> tensor<?xf32>
      %2 = call @twice(%x) : (tensor<?xf32>) -> tensor<?xf32>
      return %0, %1, %2 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
    }
    func.func private @twice(%a: tensor<?xf32>) -> tensor<?xf32> {
      %0 = stablehlo.add %a, %a : tensor<?xf32>
      return %0 : tensor<?xf32>
    })",
                    {F32({3}), F32({5})}),
            Printed(R"(
    func.func @main(%x: tensor<3xf32>, %y: tensor<5xf32>) -> (tensor<3xf32>, tensor<5xf32>, tensor<3xf32>) {
      %0 = call @twice_1(%x) : (tensor<3xf32>) -> tensor<3xf32>
      %1 = call @twice_2(%y) : (tensor<5xf32>) -> tensor<5xf32>
      %2 = call @twice_1(%x) : (tensor<3xf32>) -> tensor<3xf32>
      return %0, %1, %2 : tensor<3xf32>, tensor<5xf32>, tensor<3xf32>
    }
    func.func private @twice_1(%a: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.add %a, %a : tensor<3xf32>
      return %0 : tensor<3xf32>
    }
    func.func private @twice_2(%a: tensor<5xf32>) -> tensor<5xf32> {
      %0 = stablehlo.add %a, %a : tensor<5xf32>
      return %0 : tensor<5xf32>
    })"));
}

TEST(RefineShapesTest, ControlFlowRegionsAreRefined) {
  EXPECT_EQ(Refined(R"(
    func.func @main(%x: tensor<?xf32>, %p: tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>) {
      %c0 = stablehlo.constant dense<0> : tensor<i32>
      %0:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<?xf32>
        cond {
          %c3 = stablehlo.constant dense<3> : tensor<i32>
          %lt = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %c1 = stablehlo.constant dense<1> : tensor<i32>
          %n = stablehlo.add %i, %c1 : tensor<i32>
          %w = stablehlo.multiply %v, %v : tensor<?xf32>
          stablehlo.return %n, %w : tensor<i32>, tensor<?xf32>
        }
      %1 = "stablehlo.if"(%p) ({
        %e = stablehlo.exponential %x : tensor<?xf32>
        stablehlo.return %e : tensor<?xf32>
      }, {
        stablehlo.return %x : tensor<?xf32>
      }) : (tensor<i1>) -> tensor<?xf32>
      return %0#1, %1 : tensor<?xf32>, tensor<?xf32>
    })",
                    {F32({6}), ir::Type::Tensor(ir::ElementType::kI1, {})}),
            Printed(R"(
    func.func @main(%x: tensor<6xf32>, %p: tensor<i1>) -> (tensor<6xf32>, tensor<6xf32>) {
      %c0 = stablehlo.constant dense<0> : tensor<i32>
      %0:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<6xf32>
        cond {
          %c3 = stablehlo.constant dense<3> : tensor<i32>
          %lt = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %c1 = stablehlo.constant dense<1> : tensor<i32>
          %n = stablehlo.add %i, %c1 : tensor<i32>
          %w = stablehlo.multiply %v, %v : tensor<6xf32>
          stablehlo.return %n, %w : tensor<i32>, tensor<6xf32>
        }
      %1 = "stablehlo.if"(%p) ({
        %e = stablehlo.exponential %x : tensor<6xf32>
        stablehlo.return %e : tensor<6xf32>
      }, {
        stablehlo.return %x : tensor<6xf32>
      }) : (tensor<i1>) -> tensor<6xf32>
      return %0#1, %1 : tensor<6xf32>, tensor<6xf32>
    })"));
}

TEST(RefineShapesTest, FailedShapeAssertionsGiveTheirMessage) {
  const char* program = R"(
    func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %0 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
      %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>
      %c2 = stablehlo.constant dense<2> : tensor<i64>
      %2 = stablehlo.remainder %1, %c2 : tensor<i64>
      %c0 = stablehlo.constant dense<0> : tensor<i64>
      %3 = stablehlo.compare EQ, %2, %c0, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.custom_call @shape_assertion(%3, %2, %1) {error_message = "remainder {0} dividing {1} by 2", has_side_effect = true} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
      return %x : tensor<?x4xf32>
    })";
  EXPECT_EQ(RefineError(program, {F32({6, 4})}), "");
  EXPECT_EQ(RefineError(program, {F32({7, 4})}), "test.mlir:9:7: remainder 1 dividing 7 by 2");
}

TEST(RefineShapesTest, ErrorsNameWhatCannotBeRefined) {
  // A shape that depends on data.
  EXPECT_EQ(RefineError(R"(
    func.func @main(%x: tensor<?xf32>, %s: tensor<1xi32>) -> tensor<?xf32> {
      %0 = stablehlo.dynamic_reshape %x, %s : (tensor<?xf32>, tensor<1xi32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    })",
                        {F32({4}), ir::Type::Tensor(ir::ElementType::kSI32, {1})}),
            "test.mlir:3:7: 'stablehlo.dynamic_reshape' output_shape is not known before the "
            "program runs (it depends on data, not only on the input shapes)");
  // A shape that does not fit the declared one.
  EXPECT_EQ(RefineError(R"(
    func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      return %x : tensor<?x4xf32>
    })",
                        {F32({4, 5})}),
            "@main's parameter %x has type tensor<?x4xf32>, which tensor<4x5xf32> does not fit");
  // Operands that disagree once sized.
  EXPECT_EQ(RefineError(R"(
    func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<5xf32> {
      %0 = stablehlo.concatenate %x, %y, dim = 0 : (tensor<?xf32>, tensor<?xf32>) -> tensor<5xf32>
      return %0 : tensor<5xf32>
    })",
                        {F32({2}), F32({4})}),
            "test.mlir:3:7: 'stablehlo.concatenate' result 0 is declared tensor<5xf32> but its "
            "operands make it tensor<6xf32>");
  // No shapes for a dynamic parameter.
  EXPECT_EQ(RefineError(R"(
    func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
      return %x : tensor<?xf32>
    })",
                        {}),
            "@main's parameter %x has the dynamic type tensor<?xf32>; give the argument shapes "
            "to refine it");
}

TEST(RefineShapesTest, StaticProgramsAreLeftAlone) {
  const char* program = R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.add %x, %x : tensor<2xf32>
      return %0 : tensor<2xf32>
    })";
  EXPECT_EQ(AfterPasses(program, {RunRefineShapes}, PassContext{.entry = "main"}),
            Printed(program));
}

}  // namespace
}  // namespace tpusim::compiler
