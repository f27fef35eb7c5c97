// Shardy's ops and attributes as JAX prints them: the pretty forms read to
// the same IR as MLIR's generic forms, and the attributes print back as
// written.
#include <gtest/gtest.h>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/printer.h"

namespace tpusim::frontend {
namespace {

std::string Printed(const std::string& text) {
  auto m = ParseStableHlo(text, "test.mlir");
  if (!m.ok()) {
    ADD_FAILURE() << m.status().ToString() << "\n" << text;
    return "";
  }
  return ir::PrintModule(**m);
}

// `ops` in a module over mesh @mesh = ["x"=2, "y"=4], in @main(%a: 8x8).
std::string Module(const std::string& mesh, const std::string& ops) {
  return "module @m {\n  " + mesh +
         "\n  func.func @main(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {\n" + ops + "\n  }\n}\n";
}

constexpr const char* kMesh = R"(sdy.mesh @mesh = <["x"=2, "y"=4]>)";

TEST(ShardyForms, MeshPrettyAndGenericAreTheSame) {
  const std::string ret = "    func.return %a : tensor<8x8xf32>";
  const std::string pretty = Printed(
      Module(R"(sdy.mesh @mesh = <["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>)", ret));
  const std::string generic = Printed(Module(
      R"("sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>, sym_name = "mesh"}> : () -> ())",
      ret));
  EXPECT_EQ(pretty, generic);
  EXPECT_NE(pretty.find(R"(device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>)"), std::string::npos) << pretty;
  // Empty and maximal meshes.
  EXPECT_NE(Printed(Module("sdy.mesh @empty = <[]>", ret)).find("sdy.mesh @empty = <[]>"),
            std::string::npos);
  EXPECT_NE(Printed(Module("sdy.mesh @one = <[], device_ids=[3]>", ret))
                .find("sdy.mesh @one = <[], device_ids=[3]>"),
            std::string::npos);
}

TEST(ShardyForms, ShardingConstraintPrettyAndGenericAreTheSame) {
  const std::string pretty = Printed(Module(kMesh, R"(
    %0 = sdy.sharding_constraint %a <@mesh, [{"x", ?}, {}]> : tensor<8x8xf32>
    func.return %0 : tensor<8x8xf32>)"));
  const std::string generic = Printed(Module(kMesh, R"(
    %0 = "sdy.sharding_constraint"(%a) <{sharding = #sdy.sharding<@mesh, [{"x", ?}, {}]>}> : (tensor<8x8xf32>) -> tensor<8x8xf32>
    "func.return"(%0) : (tensor<8x8xf32>) -> ())"));
  EXPECT_EQ(pretty, generic);
  EXPECT_NE(pretty.find(R"(#sdy.sharding<@mesh, [{"x", ?}, {}]>)"), std::string::npos) << pretty;
}

TEST(ShardyForms, ManualComputationPrettyAndGenericAreTheSame) {
  const std::string pretty = Printed(Module(kMesh, R"(
    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%t: tensor<4x8xf32>) {
      %1 = stablehlo.negate %t : tensor<4x8xf32>
      sdy.return %1 : tensor<4x8xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    func.return %0 : tensor<8x8xf32>)"));
  const std::string generic = Printed(Module(kMesh, R"(
    %0 = "sdy.manual_computation"(%a) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}> ({
    ^bb0(%t: tensor<4x8xf32>):
      %1 = "stablehlo.negate"(%t) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      "sdy.return"(%1) : (tensor<4x8xf32>) -> ()
    }) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    func.return %0 : tensor<8x8xf32>)"));
  EXPECT_FALSE(pretty.empty());
  EXPECT_EQ(pretty, generic);
}

// Sub-axes, priorities, replicated and unreduced axes and inline meshes
// are kept and print back as written.
TEST(ShardyForms, ShardingDetailsRoundTrip) {
  for (const char* sharding :
       {R"(#sdy.sharding<@mesh, [{"x":(1)2, "y"}p0, {?}p12], replicated={"x":(2)1}>)",
        R"(#sdy.sharding<@mesh, [{}, {"y"}], unreduced={"x"}>)",
        R"(#sdy.sharding<@mesh, [{}, {}], replicated={"y"}, unreduced=max{"x"}>)",
        R"(#sdy.sharding<mesh<["a"=2]>, [{"a"}, {}]>)"}) {
    const std::string text = Module(
        kMesh,
        std::string("    %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[") +
            (std::string(sharding).substr(13)) +
            "]>} : tensor<8x8xf32>\n    func.return %0 : "
            "tensor<8x8xf32>");
    const std::string printed = Printed(text);
    EXPECT_NE(printed.find(std::string(sharding).substr(13)), std::string::npos) << sharding << "\n"
                                                                                 << printed;
    EXPECT_EQ(Printed(printed), printed);
  }
}

TEST(ShardyForms, MalformedShardingsAreErrorsWithLocations) {
  for (const char* bad : {R"(<@mesh, [{"x"}q1, {}]>)", R"(<@mesh, [{"x"}p01, {}]>)",
                          R"(<@mesh, [{"x":(0)2}, {}]>)", R"(<@mesh, [{?, "x"}, {}]>)",
                          R"(<@mesh, [{"x"}, {}], other={"y"}>)", R"(<mesh, [{"x"}, {}]>)"}) {
    auto m =
        ParseStableHlo(Module(kMesh, std::string("    %0 = sdy.sharding_constraint %a ") + bad +
                                         " : tensor<8x8xf32>\n    func.return %0 : "
                                         "tensor<8x8xf32>"),
                       "test.mlir");
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_NE(m.status().ToString().find("test.mlir:4:"), std::string::npos)
        << m.status().ToString();
  }
}

}  // namespace
}  // namespace tpusim::frontend
