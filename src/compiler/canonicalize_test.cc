// Canonicalize golden tests. The pass leaves replaced ops for dce, so each
// test runs canonicalize then dce and compares with the expected program.
#include <gtest/gtest.h>

#include "compiler/simplify_test_util.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/ir/rewrite.h"

namespace tpusim::compiler {
namespace {

using testing::AfterPasses;
using testing::Printed;

std::string Canonicalized(std::string_view input) {
  return AfterPasses(input, {RunCanonicalize, RunDeadCodeElimination});
}

TEST(CanonicalizeTest, FloatAddOfNegativeZeroIsRemoved) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %c = stablehlo.constant dense<-0.0> : tensor<4xf32>
      %0 = stablehlo.add %x, %c : tensor<4xf32>
      return %0 : tensor<4xf32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    })"));
}

// x + 0.0 is -0 + 0.0 = +0 for x = -0, and x * 0 is NaN for x = inf.
TEST(CanonicalizeTest, InexactFloatIdentitiesAreKept) {
  const char* program = R"(
    func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
      %0 = stablehlo.add %x, %zero : tensor<4xf32>
      %1 = stablehlo.multiply %x, %zero : tensor<4xf32>
      %nzero = stablehlo.constant dense<-0.0> : tensor<4xf32>
      %2 = stablehlo.subtract %x, %nzero : tensor<4xf32>
      return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    })";
  EXPECT_EQ(Canonicalized(program), Printed(program));
}

TEST(CanonicalizeTest, IntegerIdentities) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%x: tensor<3xi32>, %b: tensor<3xi1>, %u: tensor<3xui8>)
        -> (tensor<3xi32>, tensor<3xi1>, tensor<3xui8>) {
      %zero = stablehlo.constant dense<0> : tensor<3xi32>
      %one = stablehlo.constant dense<1> : tensor<3xi32>
      %0 = stablehlo.add %x, %zero : tensor<3xi32>
      %1 = stablehlo.subtract %0, %zero : tensor<3xi32>
      %2 = stablehlo.multiply %1, %one : tensor<3xi32>
      %3 = stablehlo.divide %2, %one : tensor<3xi32>
      %4 = stablehlo.xor %3, %zero : tensor<3xi32>
      %5 = stablehlo.or %4, %zero : tensor<3xi32>
      %true = stablehlo.constant dense<true> : tensor<3xi1>
      %6 = stablehlo.and %b, %true : tensor<3xi1>
      %max = stablehlo.constant dense<255> : tensor<3xui8>
      %7 = stablehlo.and %u, %max : tensor<3xui8>
      return %5, %6, %7 : tensor<3xi32>, tensor<3xi1>, tensor<3xui8>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<3xi32>, %b: tensor<3xi1>, %u: tensor<3xui8>)
        -> (tensor<3xi32>, tensor<3xi1>, tensor<3xui8>) {
      return %x, %b, %u : tensor<3xi32>, tensor<3xi1>, tensor<3xui8>
    })"));
}

TEST(CanonicalizeTest, FloatIdentitiesByOne) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%x: tensor<2xbf16>) -> tensor<2xbf16> {
      %one = stablehlo.constant dense<1.0> : tensor<2xbf16>
      %0 = stablehlo.multiply %one, %x : tensor<2xbf16>
      %1 = stablehlo.divide %0, %one : tensor<2xbf16>
      %pzero = stablehlo.constant dense<0.0> : tensor<2xbf16>
      %2 = stablehlo.subtract %1, %pzero : tensor<2xbf16>
      return %2 : tensor<2xbf16>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<2xbf16>) -> tensor<2xbf16> {
      return %x : tensor<2xbf16>
    })"));
}

TEST(CanonicalizeTest, ConstantsGoRight) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi1>) {
      %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %0 = stablehlo.add %c, %x : tensor<2xf32>
      %1 = stablehlo.compare LT, %c, %x, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
      return %0, %1 : tensor<2xf32>, tensor<2xi1>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi1>) {
      %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %0 = stablehlo.add %x, %c : tensor<2xf32>
      %1 = stablehlo.compare GT, %x, %c, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
      return %0, %1 : tensor<2xf32>, tensor<2xi1>
    })"));
}

// With both operands NaN, which payload survives depends on the order.
TEST(CanonicalizeTest, NaNConstantsStayLeft) {
  const char* program = R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %c = stablehlo.constant dense<[0x7FC00001, 2.0]> : tensor<2xf32>
      %0 = stablehlo.add %c, %x : tensor<2xf32>
      return %0 : tensor<2xf32>
    })";
  EXPECT_EQ(Canonicalized(program), Printed(program));
}

TEST(CanonicalizeTest, InvolutionsCancel) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%x: tensor<2xf32>, %i: tensor<2xi8>) -> (tensor<2xf32>, tensor<2xi8>) {
      %0 = stablehlo.negate %x : tensor<2xf32>
      %1 = stablehlo.negate %0 : tensor<2xf32>
      %2 = stablehlo.negate %1 : tensor<2xf32>
      %3 = stablehlo.not %i : tensor<2xi8>
      %4 = stablehlo.not %3 : tensor<2xi8>
      return %2, %4 : tensor<2xf32>, tensor<2xi8>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<2xf32>, %i: tensor<2xi8>) -> (tensor<2xf32>, tensor<2xi8>) {
      %0 = stablehlo.negate %x : tensor<2xf32>
      return %0, %i : tensor<2xf32>, tensor<2xi8>
    })"));
}

TEST(CanonicalizeTest, TransposesCompose) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
      %0 = stablehlo.transpose %x, dims = [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
      %1 = stablehlo.transpose %0, dims = [1, 2, 0] : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
      %2 = stablehlo.transpose %1, dims = [1, 2, 0] : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
      return %1, %2 : tensor<4x2x3xf32>, tensor<2x3x4xf32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
      %0 = stablehlo.transpose %x, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
      return %0, %x : tensor<4x2x3xf32>, tensor<2x3x4xf32>
    })"));
}

TEST(CanonicalizeTest, OpsThatMoveNoDataAreRemoved) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%x: tensor<2x1xf32>, %y: tensor<6xf32>) -> (tensor<2x1xf32>, tensor<6xf32>) {
      %0 = stablehlo.transpose %x, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x1xf32>
      %1 = stablehlo.reshape %0 : (tensor<2x1xf32>) -> tensor<2x1xf32>
      %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x1xf32>
      %3 = stablehlo.slice %2 [0:2, 0:1] : (tensor<2x1xf32>) -> tensor<2x1xf32>
      %zero = stablehlo.constant dense<0.0> : tensor<f32>
      %4 = stablehlo.pad %3, %zero, low = [0, 0], high = [0, 0], interior = [0, 0]
          : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
      %5 = stablehlo.reverse %4, dims = [1] : tensor<2x1xf32>
      %6 = stablehlo.concatenate %5, dim = 0 : (tensor<2x1xf32>) -> tensor<2x1xf32>
      %7 = stablehlo.convert %6 : tensor<2x1xf32>
      %8 = stablehlo.reshape %y : (tensor<6xf32>) -> tensor<2x3xf32>
      %9 = stablehlo.reshape %8 : (tensor<2x3xf32>) -> tensor<6xf32>
      return %7, %9 : tensor<2x1xf32>, tensor<6xf32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<2x1xf32>, %y: tensor<6xf32>) -> (tensor<2x1xf32>, tensor<6xf32>) {
      return %x, %y : tensor<2x1xf32>, tensor<6xf32>
    })"));
}

TEST(CanonicalizeTest, OpsThatMoveDataAreKept) {
  const char* program = R"(
    func.func @main(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>) {
      %0 = stablehlo.reverse %x, dims = [1] : tensor<2x2xf32>
      %1 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
      %2 = stablehlo.reshape %1 : (tensor<2x2xf32>) -> tensor<4xf32>
      return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>
    })";
  EXPECT_EQ(Canonicalized(program), Printed(program));
}

TEST(CanonicalizeTest, SelectWithConstantPredicate) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>, %p: tensor<2xi1>)
        -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      %t = stablehlo.constant dense<true> : tensor<i1>
      %0 = stablehlo.select %t, %a, %b : tensor<i1>, tensor<2xf32>
      %f = stablehlo.constant dense<false> : tensor<2xi1>
      %1 = stablehlo.select %f, %a, %b : tensor<2xi1>, tensor<2xf32>
      %2 = stablehlo.select %p, %b, %b : tensor<2xi1>, tensor<2xf32>
      return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    })"),
            Printed(R"(
    func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>, %p: tensor<2xi1>)
        -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      return %a, %b, %b : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    })"));
}

TEST(CanonicalizeTest, MixedPredicateIsKept) {
  const char* program = R"(
    func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
      %p = stablehlo.constant dense<[true, false]> : tensor<2xi1>
      %0 = stablehlo.select %p, %a, %b : tensor<2xi1>, tensor<2xf32>
      return %0 : tensor<2xf32>
    })";
  EXPECT_EQ(Canonicalized(program), Printed(program));
}

TEST(CanonicalizeTest, SimplifiesInsideRegions) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %0 = stablehlo.while(%i = %x) : tensor<i32>
        cond {
          %limit = stablehlo.constant dense<10> : tensor<i32>
          %lt = stablehlo.compare LT, %i, %limit, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %same = stablehlo.add %i, %zero : tensor<i32>
          %next = stablehlo.add %one, %same : tensor<i32>
          stablehlo.return %next : tensor<i32>
        }
      return %0 : tensor<i32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %0 = stablehlo.while(%i = %x) : tensor<i32>
        cond {
          %limit = stablehlo.constant dense<10> : tensor<i32>
          %lt = stablehlo.compare LT, %i, %limit, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %next = stablehlo.add %i, %one : tensor<i32>
          stablehlo.return %next : tensor<i32>
        }
      return %0 : tensor<i32>
    })"));
}

// A constant is folded exactly instead: -(-c) and c * 1 keep their ops.
TEST(CanonicalizeTest, ArithmeticOnConstantsIsLeftToFolding) {
  const char* program = R"(
    func.func @main() -> (tensor<f32>, tensor<f32>) {
      %c = stablehlo.constant dense<0x7F800001> : tensor<f32>
      %one = stablehlo.constant dense<1.0> : tensor<f32>
      %0 = stablehlo.multiply %c, %one : tensor<f32>
      %1 = stablehlo.negate %c : tensor<f32>
      %2 = stablehlo.negate %1 : tensor<f32>
      return %0, %2 : tensor<f32>, tensor<f32>
    })";
  EXPECT_EQ(Canonicalized(program), Printed(program));
}

// A no-op by shape that changes the physical layout is a relayout: kept.
TEST(CanonicalizeTest, LayoutChangesAreKept) {
  const char* program = R"(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32, #tpusim.layout<{0,1}>> {
      %0 = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32, #tpusim.layout<{0,1}>>
      return %0 : tensor<2x3xf32, #tpusim.layout<{0,1}>>
    })";
  EXPECT_EQ(Canonicalized(program), Printed(program));
}

// ONNX MatMul of [B, M, K] by a [K, N] weight, lowered as a batched dot of
// the weight broadcast over B: the dot reads the weight itself.
TEST(CanonicalizeTest, DotOfBatchBroadcastReadsTheOperand) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%x: tensor<4x16x64xf32>, %w: tensor<64x32xf32>) -> tensor<4x16x32xf32> {
      %0 = stablehlo.broadcast_in_dim %w, dims = [1, 2] : (tensor<64x32xf32>) -> tensor<4x64x32xf32>
      %1 = stablehlo.dot_general %x, %0, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x64xf32>, tensor<4x64x32xf32>) -> tensor<4x16x32xf32>
      return %1 : tensor<4x16x32xf32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<4x16x64xf32>, %w: tensor<64x32xf32>) -> tensor<4x16x32xf32> {
      %0 = stablehlo.dot_general %x, %w, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x64xf32>, tensor<64x32xf32>) -> tensor<4x16x32xf32>
      return %0 : tensor<4x16x32xf32>
    })"));
}

// Two batch dimensions, and a transposed weight [N, K] broadcast on the lhs
// side of a dot with no lhs free dimension (the result order holds).
TEST(CanonicalizeTest, DotOfBatchBroadcastEitherSide) {
  EXPECT_EQ(Canonicalized(R"(
    func.func @main(%x: tensor<2x3x5x8xf32>, %w: tensor<6x8xf32>, %v: tensor<8xf32>, %y: tensor<2x8x7xf32>)
        -> (tensor<2x3x5x6xf32>, tensor<2x7xf32>) {
      %0 = stablehlo.broadcast_in_dim %w, dims = [2, 3] : (tensor<6x8xf32>) -> tensor<2x3x6x8xf32>
      %1 = stablehlo.dot_general %x, %0, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x3x5x8xf32>, tensor<2x3x6x8xf32>) -> tensor<2x3x5x6xf32>
      %2 = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
      %3 = stablehlo.dot_general %2, %y, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<2x8xf32>, tensor<2x8x7xf32>) -> tensor<2x7xf32>
      return %1, %3 : tensor<2x3x5x6xf32>, tensor<2x7xf32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<2x3x5x8xf32>, %w: tensor<6x8xf32>, %v: tensor<8xf32>, %y: tensor<2x8x7xf32>)
        -> (tensor<2x3x5x6xf32>, tensor<2x7xf32>) {
      %0 = stablehlo.dot_general %x, %w, contracting_dims = [3] x [1] : (tensor<2x3x5x8xf32>, tensor<6x8xf32>) -> tensor<2x3x5x6xf32>
      %1 = stablehlo.dot_general %v, %y, contracting_dims = [0] x [1] : (tensor<8xf32>, tensor<2x8x7xf32>) -> tensor<2x7xf32>
      return %0, %1 : tensor<2x3x5x6xf32>, tensor<2x7xf32>
    })"));
}

// Kept: a broadcast that also expands a size-1 dimension or adds a
// non-batch dimension, one that transposes, and a rewrite that would
// reorder the result (a broadcast lhs with free dimensions, batch
// dimensions that do not lead).
TEST(CanonicalizeTest, DotOfOtherBroadcastsIsKept) {
  const char* program = R"(
    func.func @main(%x: tensor<4x16x64xf32>, %w1: tensor<1x64x32xf32>, %w2: tensor<32x64xf32>,
                    %w3: tensor<16x64xf32>, %w4: tensor<64xf32>, %y: tensor<16x4x64xf32>)
        -> (tensor<4x16x32xf32>, tensor<4x16x32xf32>, tensor<4x16x16xf32>, tensor<4x16x32xf32>, tensor<4x16x32xf32>) {
      %0 = stablehlo.broadcast_in_dim %w1, dims = [0, 1, 2] : (tensor<1x64x32xf32>) -> tensor<4x64x32xf32>
      %1 = stablehlo.dot_general %x, %0, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x16x64xf32>, tensor<4x64x32xf32>) -> tensor<4x16x32xf32>
      %2 = stablehlo.broadcast_in_dim %w2, dims = [2, 1] : (tensor<32x64xf32>) -> tensor<4x64x32xf32>
      %3 = stablehlo.dot_general %x, %2, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x16x64xf32>, tensor<4x64x32xf32>) -> tensor<4x16x32xf32>
      %4 = stablehlo.broadcast_in_dim %w3, dims = [1, 2] : (tensor<16x64xf32>) -> tensor<4x16x64xf32>
      %7 = stablehlo.dot_general %4, %x, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<4x16x64xf32>, tensor<4x16x64xf32>) -> tensor<4x16x16xf32>
      %8 = stablehlo.broadcast_in_dim %w4, dims = [2] : (tensor<64xf32>) -> tensor<4x32x64xf32>
      %9 = stablehlo.dot_general %x, %8, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<4x16x64xf32>, tensor<4x32x64xf32>) -> tensor<4x16x32xf32>
      %10 = stablehlo.broadcast_in_dim %w2, dims = [1, 2] : (tensor<32x64xf32>) -> tensor<4x32x64xf32>
      %11 = stablehlo.dot_general %y, %10, batching_dims = [1] x [0], contracting_dims = [2] x [2] : (tensor<16x4x64xf32>, tensor<4x32x64xf32>) -> tensor<4x16x32xf32>
      return %1, %3, %7, %9, %11 : tensor<4x16x32xf32>, tensor<4x16x32xf32>, tensor<4x16x16xf32>, tensor<4x16x32xf32>, tensor<4x16x32xf32>
    })";
  EXPECT_EQ(Canonicalized(program), Printed(program));
}

// The rewrite keeps every bit in both numerics modes, on the sizes and
// matmul paths of a transformer layer's projections (f32 and bf16).
TEST(CanonicalizeTest, DotOfBatchBroadcastKeepsValues) {
  for (const char* t : {"f32", "bf16"}) {
    std::string program = R"(
      func.func @main() -> tensor<8x128x96xT> {
        %i = stablehlo.iota dim = 0 : tensor<98304xf32>
        %s = stablehlo.sine %i : tensor<98304xf32>
        %x0 = stablehlo.convert %s : (tensor<98304xf32>) -> tensor<98304xT>
        %x = stablehlo.reshape %x0 : (tensor<98304xT>) -> tensor<8x128x96xT>
        %j = stablehlo.iota dim = 0 : tensor<9216xf32>
        %c = stablehlo.cosine %j : tensor<9216xf32>
        %w0 = stablehlo.convert %c : (tensor<9216xf32>) -> tensor<9216xT>
        %w = stablehlo.reshape %w0 : (tensor<9216xT>) -> tensor<96x96xT>
        %b = stablehlo.broadcast_in_dim %w, dims = [1, 2] : (tensor<96x96xT>) -> tensor<8x96x96xT>
        %0 = stablehlo.dot_general %x, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x128x96xT>, tensor<8x96x96xT>) -> tensor<8x128x96xT>
        return %0 : tensor<8x128x96xT>
      })";
    for (size_t at = program.find('T'); at != std::string::npos; at = program.find('T', at)) {
      if (program[at - 1] == 'x' || program[at - 1] == ' ') {
        program.replace(at, 1, t);
      } else {
        ++at;
      }
    }
    std::unique_ptr<ir::Module> before = test::ParseVerified(program);
    ASSERT_NE(before, nullptr);
    std::unique_ptr<ir::Module> after = ir::CloneModule(*before);
    PassContext ctx;
    ASSERT_TRUE(RunCanonicalize(*after, ctx).ok());
    ASSERT_TRUE(RunDeadCodeElimination(*after, ctx).ok());
    ASSERT_EQ(ir::PrintModule(*after).find("broadcast_in_dim"), std::string::npos);
    for (ops::Numerics mode : {ops::Numerics::kReference, ops::Numerics::kTpu}) {
      auto a = exec::Interpreter(*before, ops::EvalOptions{.numerics = mode}).Run("main", {});
      auto b = exec::Interpreter(*after, ops::EvalOptions{.numerics = mode}).Run("main", {});
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_TRUE((*a)[0].BitwiseEquals((*b)[0])) << t << " numerics " << static_cast<int>(mode);
    }
  }
}

}  // namespace
}  // namespace tpusim::compiler
