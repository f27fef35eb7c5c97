// Constant-fold golden tests. Folding leaves the constants it no longer
// needs for dce, so each test runs constant-fold then dce.
#include <gtest/gtest.h>

#include "compiler/simplify_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::AfterPasses;
using testing::Printed;

std::string Folded(std::string_view input) {
  return AfterPasses(input, {RunConstantFolding, RunDeadCodeElimination});
}

TEST(ConstantFoldTest, FoldsChainsOfElementwiseOps) {
  EXPECT_EQ(Folded(R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %a = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
      %b = stablehlo.constant dense<0.5> : tensor<2xf32>
      %0 = stablehlo.add %a, %b : tensor<2xf32>
      %1 = stablehlo.multiply %0, %0 : tensor<2xf32>
      %2 = stablehlo.add %x, %1 : tensor<2xf32>
      return %2 : tensor<2xf32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %1 = stablehlo.constant dense<[4.0, 2.25]> : tensor<2xf32>
      %2 = stablehlo.add %x, %1 : tensor<2xf32>
      return %2 : tensor<2xf32>
    })"));
}

TEST(ConstantFoldTest, EqualElementsGiveASplat) {
  EXPECT_EQ(Folded(R"(
    func.func @main() -> tensor<2x3xi32> {
      %a = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
      %b = stablehlo.constant dense<[[6, 5, 4], [3, 2, 1]]> : tensor<2x3xi32>
      %0 = stablehlo.add %a, %b : tensor<2x3xi32>
      return %0 : tensor<2x3xi32>
    })"),
            Printed(R"(
    func.func @main() -> tensor<2x3xi32> {
      %0 = stablehlo.constant dense<7> : tensor<2x3xi32>
      return %0 : tensor<2x3xi32>
    })"));
}

// Folded, a broadcast or an iota would be an array in HBM; left alone, it
// fuses into the kernels that use it.
TEST(ConstantFoldTest, LeavesBroadcastsAndIotasOfArrays) {
  const char* program = R"(
    func.func @main() -> (tensor<2x3xi32>, tensor<3xi32>) {
      %a = stablehlo.constant dense<7> : tensor<i32>
      %0 = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<i32>) -> tensor<2x3xi32>
      %1 = stablehlo.iota dim = 0 : tensor<3xi32>
      return %0, %1 : tensor<2x3xi32>, tensor<3xi32>
    })";
  EXPECT_EQ(Folded(program), Printed(program));
}

TEST(ConstantFoldTest, RunsRegionsOfPerElementOps) {
  EXPECT_EQ(Folded(R"(
    func.func @main() -> tensor<2xi32> {
      %a = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
      %z = stablehlo.constant dense<0> : tensor<i32>
      %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1]
          : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
      return %0 : tensor<2xi32>
    })"),
            Printed(R"(
    func.func @main() -> tensor<2xi32> {
      %0 = stablehlo.constant dense<[6, 15]> : tensor<2xi32>
      return %0 : tensor<2xi32>
    })"));
}

TEST(ConstantFoldTest, FoldsInsideRegionsButNotControlFlow) {
  EXPECT_EQ(Folded(R"(
    func.func @main() -> tensor<i32> {
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %0 = stablehlo.while(%i = %zero) : tensor<i32>
        cond {
          %limit = stablehlo.constant dense<5> : tensor<i32>
          %ten = stablehlo.add %limit, %limit : tensor<i32>
          %lt = stablehlo.compare LT, %i, %ten, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %next = stablehlo.add %i, %one : tensor<i32>
          stablehlo.return %next : tensor<i32>
        }
      return %0 : tensor<i32>
    })"),
            Printed(R"(
    func.func @main() -> tensor<i32> {
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %0 = stablehlo.while(%i = %zero) : tensor<i32>
        cond {
          %ten = stablehlo.constant dense<10> : tensor<i32>
          %lt = stablehlo.compare LT, %i, %ten, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %next = stablehlo.add %i, %one : tensor<i32>
          stablehlo.return %next : tensor<i32>
        }
      return %0 : tensor<i32>
    })"));
}

// Matmuls depend on the numerics mode; replica ids on the process; rng bits
// are the implementation's; large results would bloat the program.
TEST(ConstantFoldTest, LeavesWhatMustRunAtRunTime) {
  const char* program = R"(
    func.func @main() -> (tensor<2x2xf32>, tensor<ui32>, tensor<2xui64>, tensor<2xui32>,
                          tensor<262145xi32>) {
      %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0]
          : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      %1 = stablehlo.replica_id : tensor<ui32>
      %s = stablehlo.constant dense<[1, 2]> : tensor<2xui64>
      %2:2 = stablehlo.rng_bit_generator %s, algorithm = DEFAULT
          : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2xui32>)
      %3 = stablehlo.iota dim = 0 : tensor<262145xi32>
      return %0, %1, %2#0, %2#1, %3 : tensor<2x2xf32>, tensor<ui32>, tensor<2xui64>,
                                      tensor<2xui32>, tensor<262145xi32>
    })";
  EXPECT_EQ(Folded(program), Printed(program));
}

// The TPU rounds f32 -> bf16 flushing subnormals; the reference does not.
TEST(ConstantFoldTest, FoldsOnlyWhatEveryNumericsModeAgreesOn) {
  EXPECT_EQ(Folded(R"(
    func.func @main() -> (tensor<bf16>, tensor<bf16>) {
      %normal = stablehlo.constant dense<1.5> : tensor<f32>
      %0 = stablehlo.convert %normal : (tensor<f32>) -> tensor<bf16>
      %tiny = stablehlo.constant dense<1.0e-39> : tensor<f32>
      %1 = stablehlo.convert %tiny : (tensor<f32>) -> tensor<bf16>
      return %0, %1 : tensor<bf16>, tensor<bf16>
    })"),
            Printed(R"(
    func.func @main() -> (tensor<bf16>, tensor<bf16>) {
      %0 = stablehlo.constant dense<1.5> : tensor<bf16>
      %tiny = stablehlo.constant dense<1.0e-39> : tensor<f32>
      %1 = stablehlo.convert %tiny : (tensor<f32>) -> tensor<bf16>
      return %0, %1 : tensor<bf16>, tensor<bf16>
    })"));
}

TEST(ConstantFoldTest, LeavesOpsWithSideEffects) {
  const char* program = R"(
    func.func @main() -> tensor<2xf32> {
      %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %0 = stablehlo.custom_call @unknown.target(%a) : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })";
  EXPECT_EQ(Folded(program), Printed(program));
}

}  // namespace
}  // namespace tpusim::compiler
