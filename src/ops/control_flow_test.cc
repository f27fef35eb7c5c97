#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::RunAndRead;
using testing::RunMlir;

TEST(While, LoopsUntilTheConditionFails) {
  // Sums 1..n for n = 5, counting iterations in the second state value.
  const char* text = R"(
func.func @main() -> (tensor<i64>, tensor<i64>) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %n = stablehlo.constant dense<5> : tensor<i64>
  %i, %sum = stablehlo.while(%arg0 = %zero, %arg1 = %zero) : tensor<i64>, tensor<i64>
  cond {
    %c = stablehlo.compare LT, %arg0, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %next = stablehlo.add %arg0, %one : tensor<i64>
    %s = stablehlo.add %arg1, %next : tensor<i64>
    stablehlo.return %next, %s : tensor<i64>, tensor<i64>
  }
  func.return %i, %sum : tensor<i64>, tensor<i64>
})";
  EXPECT_EQ(RunAndRead<int64_t>(text, 0), (std::vector<int64_t>{5}));
  EXPECT_EQ(RunAndRead<int64_t>(text, 1), (std::vector<int64_t>{15}));
}

TEST(While, ZeroIterationsReturnsTheOperands) {
  const char* text = R"(
func.func @main() -> tensor<2xf32> {
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %r = "stablehlo.while"(%x) ({
    ^bb0(%a: tensor<2xf32>):
      %f = stablehlo.constant dense<false> : tensor<i1>
      stablehlo.return %f : tensor<i1>
  }, {
    ^bb0(%a: tensor<2xf32>):
      %d = stablehlo.add %a, %a : tensor<2xf32>
      stablehlo.return %d : tensor<2xf32>
  }) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
})";
  EXPECT_EQ(RunAndRead<float>(text), (std::vector<float>{1.0f, 2.0f}));
}

TEST(While, BodyOfTheWrongTypeIsAVerifyError) {
  const char* text = R"(
func.func @main() -> tensor<i32> {
  %x = stablehlo.constant dense<1> : tensor<i32>
  %r = "stablehlo.while"(%x) ({
    ^bb0(%a: tensor<i32>):
      %f = stablehlo.constant dense<false> : tensor<i1>
      stablehlo.return %f : tensor<i1>
  }, {
    ^bb0(%a: tensor<i32>):
      %f = stablehlo.constant dense<1.0> : tensor<f32>
      stablehlo.return %f : tensor<f32>
  }) : (tensor<i32>) -> tensor<i32>
  func.return %r : tensor<i32>
})";
  Status st = testing::VerifyMlir(text);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("region 1 returns (tensor<f32>)"), std::string::npos) << st.message();
}

std::string IfProgram(const char* pred) {
  return std::string(R"(
func.func @main() -> tensor<i32> {
  %p = stablehlo.constant dense<)") +
         pred + R"(> : tensor<i1>
  %r = "stablehlo.if"(%p) ({
    %a = stablehlo.constant dense<10> : tensor<i32>
    stablehlo.return %a : tensor<i32>
  }, {
    %b = stablehlo.constant dense<11> : tensor<i32>
    stablehlo.return %b : tensor<i32>
  }) : (tensor<i1>) -> tensor<i32>
  func.return %r : tensor<i32>
})";
}

TEST(If, RunsTheBranchThePredicateSelects) {
  EXPECT_EQ(RunAndRead<int32_t>(IfProgram("true")), (std::vector<int32_t>{10}));
  EXPECT_EQ(RunAndRead<int32_t>(IfProgram("false")), (std::vector<int32_t>{11}));
}

std::string CaseProgram(int index) {
  return R"(
func.func @main() -> tensor<i32> {
  %i = stablehlo.constant dense<)" +
         std::to_string(index) + R"(> : tensor<i32>
  %r = "stablehlo.case"(%i) ({
    %a = stablehlo.constant dense<100> : tensor<i32>
    stablehlo.return %a : tensor<i32>
  }, {
    %b = stablehlo.constant dense<101> : tensor<i32>
    stablehlo.return %b : tensor<i32>
  }, {
    %c = stablehlo.constant dense<102> : tensor<i32>
    stablehlo.return %c : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  func.return %r : tensor<i32>
})";
}

TEST(Case, OutOfRangeIndicesSelectTheLastBranch) {
  EXPECT_EQ(RunAndRead<int32_t>(CaseProgram(0)), (std::vector<int32_t>{100}));
  EXPECT_EQ(RunAndRead<int32_t>(CaseProgram(1)), (std::vector<int32_t>{101}));
  EXPECT_EQ(RunAndRead<int32_t>(CaseProgram(2)), (std::vector<int32_t>{102}));
  EXPECT_EQ(RunAndRead<int32_t>(CaseProgram(3)), (std::vector<int32_t>{102}));
  EXPECT_EQ(RunAndRead<int32_t>(CaseProgram(-1)), (std::vector<int32_t>{102}));
}

TEST(Composite, RunsItsDecomposition) {
  const char* text = R"(
func.func private @add_n.impl(%arg0: tensor<i64>) -> tensor<i64> {
  %0 = stablehlo.constant dense<2> : tensor<i64>
  %1 = stablehlo.add %arg0, %0 : tensor<i64>
  func.return %1 : tensor<i64>
}
func.func @main() -> tensor<i64> {
  %0 = stablehlo.constant dense<1> : tensor<i64>
  %1 = stablehlo.composite "my.add_n" %0 {
    composite_attributes = { n = 2 : i64 },
    decomposition = @add_n.impl
  } : (tensor<i64>) -> tensor<i64>
  func.return %1 : tensor<i64>
})";
  EXPECT_EQ(RunAndRead<int64_t>(text), (std::vector<int64_t>{3}));
}

TEST(Composite, DecompositionOfTheWrongTypeIsAnError) {
  const char* text = R"(
func.func private @impl(%arg0: tensor<i64>) -> tensor<i32> {
  %0 = stablehlo.constant dense<2> : tensor<i32>
  func.return %0 : tensor<i32>
}
func.func @main() -> tensor<i64> {
  %0 = stablehlo.constant dense<1> : tensor<i64>
  %1 = stablehlo.composite "my.op" %0 {decomposition = @impl} : (tensor<i64>) -> tensor<i64>
  func.return %1 : tensor<i64>
})";
  auto r = RunMlir(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("@impl returns tensor<i32>"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace tpusim::ops
