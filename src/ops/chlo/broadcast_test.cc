#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>

#include "ops/kernels/special_functions.h"
#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::RunAndRead;
using testing::VerifyMlir;

// @main() -> result { %r = op(constants) }, in generic form.
std::string Program(const std::string& op, const std::vector<std::string>& operands,
                    const std::string& result, const std::string& attrs = "") {
  std::string text = "func.func @main() -> " + result + " {\n";
  std::string names, types;
  for (size_t i = 0; i < operands.size(); ++i) {
    // operands[i] is "values : type"
    const std::string type = operands[i].substr(operands[i].find(": ") + 2);
    text += "  %a" + std::to_string(i) + " = stablehlo.constant dense<" +
            operands[i].substr(0, operands[i].find(" : ")) + "> : " + type + "\n";
    names += (i ? ", %a" : "%a") + std::to_string(i);
    types += (i ? ", " : "") + type;
  }
  text += "  %r = \"" + op + "\"(" + names + ") " + (attrs.empty() ? "" : "{" + attrs + "} ") +
          ": (" + types + ") -> " + result + "\n  return %r : " + result + "\n}\n";
  return text;
}

TEST(ChloBroadcastTest, NumpyAlignsTrailingDimensions) {
  EXPECT_EQ(RunAndRead<float>(Program("chlo.broadcast_add",
                                      {"[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] : tensor<2x3xf32>",
                                       "[10.0, 20.0, 30.0] : tensor<3xf32>"},
                                      "tensor<2x3xf32>")),
            (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(ChloBroadcastTest, SizeOneDimensionsStretchOnBothSides) {
  EXPECT_EQ(
      RunAndRead<int32_t>(Program(
          "chlo.broadcast_multiply",
          {"[[1], [2]] : tensor<2x1xi32>", "[[10, 20, 30]] : tensor<1x3xi32>"}, "tensor<2x3xi32>")),
      (std::vector<int32_t>{10, 20, 30, 20, 40, 60}));
}

TEST(ChloBroadcastTest, ExplicitBroadcastDimensions) {
  // rhs dimension 0 lands on lhs dimension 0 (numpy would use dimension 1).
  EXPECT_EQ(RunAndRead<float>(Program("chlo.broadcast_subtract",
                                      {"[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] : tensor<2x3xf32>",
                                       "[1.0, 4.0] : tensor<2xf32>"},
                                      "tensor<2x3xf32>", "broadcast_dimensions = array<i64: 0>")),
            (std::vector<float>{0, 1, 2, 0, 1, 2}));
}

TEST(ChloBroadcastTest, CompareUsesTheChloDirection) {
  EXPECT_EQ(RunAndRead<uint8_t>(Program(
                "chlo.broadcast_compare", {"[1.0, 2.0, 3.0] : tensor<3xf32>", "2.0 : tensor<f32>"},
                "tensor<3xi1>", "comparison_direction = #chlo<comparison_direction LT>")),
            (std::vector<uint8_t>{1, 0, 0}));
}

TEST(ChloBroadcastTest, ComplexBuildsComplexFromFloats) {
  using C = std::complex<float>;
  EXPECT_EQ(RunAndRead<C>(Program("chlo.broadcast_complex",
                                  {"[1.0, 2.0] : tensor<2xf32>", "5.0 : tensor<f32>"},
                                  "tensor<2xcomplex<f32>>")),
            (std::vector<C>{C(1, 5), C(2, 5)}));
}

TEST(ChloBroadcastTest, SelectBroadcastsAllThree) {
  EXPECT_EQ(RunAndRead<int32_t>(Program("chlo.broadcast_select",
                                        {"[true, false] : tensor<2xi1>",
                                         "[[1, 2], [3, 4]] : tensor<2x2xi32>", "0 : tensor<i32>"},
                                        "tensor<2x2xi32>")),
            (std::vector<int32_t>{1, 0, 3, 0}));
}

TEST(ChloBroadcastTest, ChloTargets) {
  auto z = RunAndRead<double>(Program(
      "chlo.broadcast_zeta", {"2.0 : tensor<f64>", "[1.0, 2.0] : tensor<2xf64>"}, "tensor<2xf64>"));
  ASSERT_EQ(z.size(), 2u);
  EXPECT_EQ(z[0], special::Zeta(2, 1));
  EXPECT_EQ(z[1], special::Zeta(2, 2));
  auto p = RunAndRead<double>(Program("chlo.broadcast_polygamma",
                                      {"[0.0, 1.0] : tensor<2xf64>", "3.0 : tensor<f64>"},
                                      "tensor<2xf64>"));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], special::Polygamma(0, 3));
  EXPECT_EQ(p[1], special::Polygamma(1, 3));
}

TEST(ChloBroadcastTest, PrettyForm) {
  EXPECT_EQ(RunAndRead<int32_t>(R"(
func.func @main() -> tensor<2xi32> {
  %a = stablehlo.constant dense<[6, 7]> : tensor<2xi32>
  %b = stablehlo.constant dense<3> : tensor<i32>
  %r = chlo.broadcast_remainder %a, %b : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  return %r : tensor<2xi32>
})"),
            (std::vector<int32_t>{0, 1}));
}

TEST(ChloBroadcastTest, ShapeRules) {
  const std::string f23 = "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] : tensor<2x3xf32>";
  // 3 and 4 do not broadcast.
  EXPECT_EQ(VerifyMlir(Program("chlo.broadcast_add", {f23, "[1.0, 2.0, 3.0, 4.0] : tensor<4xf32>"},
                               "tensor<2x4xf32>"))
                .code(),
            StatusCode::kInvalidArgument);
  // The result must have the broadcast shape.
  EXPECT_EQ(VerifyMlir(Program("chlo.broadcast_add", {f23, "[1.0, 2.0, 3.0] : tensor<3xf32>"},
                               "tensor<3x3xf32>"))
                .code(),
            StatusCode::kInvalidArgument);
  // broadcast_dimensions must name dimensions of the larger operand.
  EXPECT_EQ(VerifyMlir(Program("chlo.broadcast_add", {f23, "[1.0, 2.0] : tensor<2xf32>"},
                               "tensor<2x3xf32>", "broadcast_dimensions = array<i64: 2>"))
                .code(),
            StatusCode::kInvalidArgument);
  // The target op's own rules apply: no shifts on floats.
  EXPECT_EQ(VerifyMlir(Program("chlo.broadcast_shift_left",
                               {f23, "[1.0, 2.0, 3.0] : tensor<3xf32>"}, "tensor<2x3xf32>"))
                .code(),
            StatusCode::kInvalidArgument);
  // complex needs f32 or f64.
  EXPECT_EQ(VerifyMlir(Program("chlo.broadcast_complex",
                               {"[1.0] : tensor<1xf16>", "[1.0] : tensor<1xf16>"},
                               "tensor<1xcomplex<f32>>"))
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
