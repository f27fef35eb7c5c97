#include <gtest/gtest.h>

#include "compiler/simplify_test_util.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::compiler {
namespace {

using testing::AfterPasses;
using testing::ParseVerified;
using testing::Printed;

std::string Dce(std::string_view input) { return AfterPasses(input, {RunDeadCodeElimination}); }

TEST(DceTest, RemovesUnusedChains) {
  EXPECT_EQ(Dce(R"(
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = stablehlo.exponential %x : tensor<4xf32>
      %1 = stablehlo.add %0, %0 : tensor<4xf32>
      %2 = stablehlo.negate %x : tensor<4xf32>
      %3 = stablehlo.reshape %1 : (tensor<4xf32>) -> tensor<2x2xf32>
      return %2 : tensor<4xf32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %2 = stablehlo.negate %x : tensor<4xf32>
      return %2 : tensor<4xf32>
    })"));
}

TEST(DceTest, NothingDeadIsNoChange) {
  const char* program = R"(
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = stablehlo.exponential %x : tensor<4xf32>
      %1 = stablehlo.add %0, %x : tensor<4xf32>
      return %1 : tensor<4xf32>
    })";
  EXPECT_EQ(Dce(program), Printed(program));
}

TEST(DceTest, RemovesInsideRegionsAndWholeDeadLoops) {
  EXPECT_EQ(Dce(R"(
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %dead = stablehlo.while(%j = %x) : tensor<i32>
        cond {
          %c = stablehlo.compare LT, %j, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1>
        } do {
          stablehlo.return %j : tensor<i32>
        }
      %0 = stablehlo.while(%i = %x) : tensor<i32>
        cond {
          %limit = stablehlo.constant dense<10> : tensor<i32>
          %unused = stablehlo.multiply %i, %limit : tensor<i32>
          %lt = stablehlo.compare LT, %i, %limit, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %unused = stablehlo.negate %x : tensor<i32>
          %next = stablehlo.add %i, %one : tensor<i32>
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

TEST(DceTest, KeepsOpsWithSideEffects) {
  const char* program = R"(
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %c = stablehlo.constant dense<1> : tensor<i32>
      check.expect_eq_const %x, dense<1> : tensor<i32>
      %0 = "stablehlo.all_reduce"(%x) ({
        ^bb0(%a: tensor<i32>, %b: tensor<i32>):
          %s = stablehlo.add %a, %b : tensor<i32>
          stablehlo.return %s : tensor<i32>
      }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<i32>) -> tensor<i32>
      stablehlo.custom_call @check.expect_eq(%x, %c) : (tensor<i32>, tensor<i32>) -> ()
      %2 = "interpreter.probe"(%x) {probe_id = "p"} : (tensor<i32>) -> tensor<i32>
      %3 = stablehlo.while(%i = %x) : tensor<i32>
        cond {
          %lt = stablehlo.compare LT, %i, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          check.expect_eq_const %i, dense<0> : tensor<i32>
          stablehlo.return %c : tensor<i32>
        }
      return %x : tensor<i32>
    })";
  EXPECT_EQ(Dce(program), Printed(program));
}

TEST(DceTest, CallsAreAsEffectfulAsTheirCallees) {
  EXPECT_EQ(Dce(R"(
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %0 = func.call @pure(%x) : (tensor<i32>) -> tensor<i32>
      %1 = func.call @checks(%x) : (tensor<i32>) -> tensor<i32>
      %2 = func.call @recursive(%x) : (tensor<i32>) -> tensor<i32>
      return %x : tensor<i32>
    }
    func.func @pure(%x: tensor<i32>) -> tensor<i32> {
      %0 = stablehlo.negate %x : tensor<i32>
      return %0 : tensor<i32>
    }
    func.func @checks(%x: tensor<i32>) -> tensor<i32> {
      check.expect_eq_const %x, dense<1> : tensor<i32>
      return %x : tensor<i32>
    }
    func.func @recursive(%x: tensor<i32>) -> tensor<i32> {
      %0 = func.call @recursive(%x) : (tensor<i32>) -> tensor<i32>
      check.expect_eq_const %0, dense<1> : tensor<i32>
      return %0 : tensor<i32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %1 = func.call @checks(%x) : (tensor<i32>) -> tensor<i32>
      %2 = func.call @recursive(%x) : (tensor<i32>) -> tensor<i32>
      return %x : tensor<i32>
    }
    func.func @pure(%x: tensor<i32>) -> tensor<i32> {
      %0 = stablehlo.negate %x : tensor<i32>
      return %0 : tensor<i32>
    }
    func.func @checks(%x: tensor<i32>) -> tensor<i32> {
      check.expect_eq_const %x, dense<1> : tensor<i32>
      return %x : tensor<i32>
    }
    func.func @recursive(%x: tensor<i32>) -> tensor<i32> {
      %0 = func.call @recursive(%x) : (tensor<i32>) -> tensor<i32>
      check.expect_eq_const %0, dense<1> : tensor<i32>
      return %0 : tensor<i32>
    })"));
}

TEST(HasSideEffectsTest, FollowsTheRule) {
  auto module = ParseVerified(R"(
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %0 = stablehlo.negate %x : tensor<i32>
      %1 = func.call @pure(%x) : (tensor<i32>) -> tensor<i32>
      %t = stablehlo.create_token : !stablehlo.token
      %2 = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>}
          : (tensor<i32>, !stablehlo.token) -> !stablehlo.token
      return %0 : tensor<i32>
    }
    func.func @pure(%x: tensor<i32>) -> tensor<i32> {
      return %x : tensor<i32>
    })");
  ASSERT_NE(module, nullptr);
  const auto& ops = module->Lookup("main")->entry().ops();
  EXPECT_FALSE(ops::HasSideEffects(*ops[0], module.get()));
  EXPECT_FALSE(ops::HasSideEffects(*ops[1], module.get()));
  EXPECT_TRUE(ops::HasSideEffects(*ops[1], nullptr));  // the callee is unknown
  EXPECT_FALSE(ops::HasSideEffects(*ops[2], module.get()));
  EXPECT_TRUE(ops::HasSideEffects(*ops[3], module.get()));
  EXPECT_TRUE(ops::HasSideEffects(*ops[4], module.get()));  // a terminator
}

}  // namespace
}  // namespace tpusim::compiler
