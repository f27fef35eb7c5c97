// The StableHLO text form of layouts: `tensor<4x3xf32, #tpusim.layout<{0,1}>>`
// (ir::Type::ToString's spelling) parses back to the same type.
#include <gtest/gtest.h>

#include <string>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/printer.h"

namespace tpusim::frontend {
namespace {

std::string Program(const std::string& type) {
  return "func.func @main(%x: " + type + ") -> " + type + " {\n  return %x : " + type + "\n}\n";
}

TEST(LayoutTextTest, RoundTrips) {
  for (const std::string type :
       {"tensor<4x3xf32, #tpusim.layout<{0,1}>>", "tensor<2x3x4xbf16, #tpusim.layout<{1,2,0}>>",
        "tensor<4x3xf32>"}) {
    auto m = ParseStableHlo(Program(type), "t.mlir");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const ir::Type& t = (*m)->Lookup("main")->type().inputs[0];
    EXPECT_EQ(t.ToString(), type);
    auto again = ParseStableHlo(ir::PrintModule(**m), "printed.mlir");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(ir::PrintModule(**again), ir::PrintModule(**m));
  }
}

// Row-major spelled out is stored as the default (empty) layout.
TEST(LayoutTextTest, RowMajorIsTheDefault) {
  auto m = ParseStableHlo(Program("tensor<4x3xf32, #tpusim.layout<{1,0}>>"), "t.mlir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const ir::Type& t = (*m)->Lookup("main")->type().inputs[0];
  EXPECT_TRUE(t.layout().empty());
  EXPECT_EQ(t.ToString(), "tensor<4x3xf32>");
}

TEST(LayoutTextTest, RejectsNonPermutations) {
  for (const std::string layout : {"{0,0}", "{0,2}", "{0}", "{0,1,2}", "{-1,0}"}) {
    auto m = ParseStableHlo(Program("tensor<4x3xf32, #tpusim.layout<" + layout + ">>"), "t.mlir");
    ASSERT_FALSE(m.ok()) << layout;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << layout;
  }
}

}  // namespace
}  // namespace tpusim::frontend
