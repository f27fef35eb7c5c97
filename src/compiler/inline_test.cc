#include <gtest/gtest.h>

#include "compiler/simplify_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::AfterPasses;
using testing::Printed;

std::string Inlined(std::string_view input, PassContext ctx = {}) {
  return AfterPasses(input, {RunInlining}, std::move(ctx));
}

TEST(InlineTest, InlinesPrivateCalleesAtAnyDepthAndRemovesThem) {
  EXPECT_EQ(Inlined(R"(
    func.func @main(%x: tensor<f32>) -> tensor<f32> {
      %0 = func.call @twice(%x) : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
    func.func private @twice(%a: tensor<f32>) -> tensor<f32> {
      %0 = func.call @double(%a) : (tensor<f32>) -> tensor<f32>
      %1 = func.call @double(%0) : (tensor<f32>) -> tensor<f32>
      return %1 : tensor<f32>
    }
    func.func private @double(%a: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.add %a, %a : tensor<f32>
      return %0 : tensor<f32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.add %x, %x : tensor<f32>
      %1 = stablehlo.add %0, %0 : tensor<f32>
      return %1 : tensor<f32>
    })"));
}

TEST(InlineTest, InlinesInsideRegionsAndPassesArgumentsThrough) {
  EXPECT_EQ(Inlined(R"(
    func.func @main(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
      %0 = stablehlo.while(%i = %x) : tensor<i32>
        cond {
          %c = func.call @small(%i) : (tensor<i32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1>
        } do {
          %n, %m = func.call @step(%i) : (tensor<i32>) -> (tensor<i32>, tensor<i32>)
          stablehlo.return %m : tensor<i32>
        }
      return %0, %x : tensor<i32>, tensor<i32>
    }
    func.func private @small(%a: tensor<i32>) -> tensor<i1> {
      %ten = stablehlo.constant dense<10> : tensor<i32>
      %0 = stablehlo.compare LT, %a, %ten, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      return %0 : tensor<i1>
    }
    func.func private @step(%a: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %0 = stablehlo.add %a, %one : tensor<i32>
      return %a, %0 : tensor<i32>, tensor<i32>
    })"),
            Printed(R"(
    func.func @main(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
      %0 = stablehlo.while(%i = %x) : tensor<i32>
        cond {
          %ten = stablehlo.constant dense<10> : tensor<i32>
          %c = stablehlo.compare LT, %i, %ten, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %m = stablehlo.add %i, %one : tensor<i32>
          stablehlo.return %m : tensor<i32>
        }
      return %0, %x : tensor<i32>, tensor<i32>
    })"));
}

TEST(InlineTest, KeepsPublicCalleesAndReferencedFunctions) {
  const char* program = R"(
    func.func @main(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
      %0 = func.call @api(%x) : (tensor<f32>) -> tensor<f32>
      %1 = stablehlo.composite "my.op" %x {decomposition = @impl} : (tensor<f32>) -> tensor<f32>
      return %0, %1 : tensor<f32>, tensor<f32>
    }
    func.func @api(%a: tensor<f32>) -> tensor<f32> {
      return %a : tensor<f32>
    }
    func.func private @impl(%a: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.negate %a : tensor<f32>
      return %0 : tensor<f32>
    })";
  EXPECT_EQ(Inlined(program), Printed(program));
}

TEST(InlineTest, KeepsAPrivateEntryAndDropsUncalledPrivates) {
  PassContext ctx;
  ctx.entry = "entry";
  EXPECT_EQ(Inlined(R"(
    func.func private @entry(%x: tensor<f32>) -> tensor<f32> {
      return %x : tensor<f32>
    }
    func.func private @unused(%x: tensor<f32>) -> tensor<f32> {
      return %x : tensor<f32>
    })",
                    ctx),
            Printed(R"(
    func.func private @entry(%x: tensor<f32>) -> tensor<f32> {
      return %x : tensor<f32>
    })"));
}

TEST(InlineTest, LeavesRecursiveCallsAndNotesTheCycle) {
  const char* program = R"(
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %0 = func.call @even(%x) : (tensor<i32>) -> tensor<i32>
      return %0 : tensor<i32>
    }
    func.func private @even(%x: tensor<i32>) -> tensor<i32> {
      %0 = func.call @odd(%x) : (tensor<i32>) -> tensor<i32>
      return %0 : tensor<i32>
    }
    func.func private @odd(%x: tensor<i32>) -> tensor<i32> {
      %0 = func.call @even(%x) : (tensor<i32>) -> tensor<i32>
      return %0 : tensor<i32>
    })";
  std::unique_ptr<ir::Module> module = testing::ParseVerified(program);
  ASSERT_NE(module, nullptr);
  PassContext ctx;
  Status s = RunInlining(*module, ctx);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // main and even inline odd, whose call of even closes the cycle; odd is
  // then called no more.
  EXPECT_EQ(ir::PrintModule(*module), Printed(R"(
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %0 = func.call @even(%x) : (tensor<i32>) -> tensor<i32>
      return %0 : tensor<i32>
    }
    func.func private @even(%x: tensor<i32>) -> tensor<i32> {
      %0 = func.call @even(%x) : (tensor<i32>) -> tensor<i32>
      return %0 : tensor<i32>
    })"));
  ASSERT_FALSE(ctx.notes.empty());
  EXPECT_NE(ctx.notes[0].find("@even -> @odd -> @even"), std::string::npos) << ctx.notes[0];
}

TEST(InlineTest, UnknownEntryIsAnError) {
  std::unique_ptr<ir::Module> module = testing::ParseVerified(R"(
    func.func @main(%x: tensor<f32>) -> tensor<f32> {
      return %x : tensor<f32>
    })");
  ASSERT_NE(module, nullptr);
  PassContext ctx;
  ctx.entry = "nope";
  EXPECT_EQ(RunInlining(*module, ctx).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::compiler
