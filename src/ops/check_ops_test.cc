#include <gtest/gtest.h>

#include <string>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::RunMlir;

// @main comparing constants `a` and `b` of `type` with the check `op` (its
// attributes, if any, follow the operands as in the pretty form).
std::string Program(const std::string& op, const std::string& type, const std::string& a,
                    const std::string& b, const std::string& attrs = "") {
  return "func.func @main() {\n"
         "  %a = stablehlo.constant dense<" +
         a + "> : " + type +
         "\n"
         "  %b = stablehlo.constant dense<" +
         b + "> : " + type +
         "\n"
         "  " +
         op + " %a, %b" + attrs + " : " + type + (op == "check.expect_close" ? ", " + type : "") +
         "\n"
         "  func.return\n}\n";
}

// The same check written as JAX's tests write it.
std::string CustomCall(const std::string& target, const std::string& type, const std::string& a,
                       const std::string& b) {
  return "func.func @main() {\n"
         "  %a = stablehlo.constant dense<" +
         a + "> : " + type +
         "\n"
         "  %b = stablehlo.constant dense<" +
         b + "> : " + type +
         "\n"
         "  stablehlo.custom_call @" +
         target + "(%a, %b) {has_side_effect = true} : (" + type + ", " + type +
         ") -> ()\n"
         "  func.return\n}\n";
}

Status Check(const std::string& text) {
  auto r = RunMlir(text);
  return r.ok() ? Status::Ok() : r.status();
}

void ExpectFails(const std::string& text, const std::string& message_part) {
  Status st = Check(text);
  ASSERT_FALSE(st.ok()) << text;
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find(message_part), std::string::npos) << st.message();
}

TEST(ExpectEq, ExactIncludingSignOfZeroAndNanMatchesNan) {
  EXPECT_TRUE(Check(Program("check.expect_eq", "tensor<3xi32>", "[1, -2, 3]", "[1, -2, 3]")).ok());
  ExpectFails(Program("check.expect_eq", "tensor<2x2xi32>", "[[1, 2], [3, 4]]", "[[1, 2], [3, 5]]"),
              "1 of 4 elements differ (exactly); first at [1, 1]: got 4, expected 5");
  ExpectFails(Program("check.expect_eq", "tensor<f32>", "0.0", "-0.0"), "1 of 1");
  EXPECT_TRUE(
      Check(Program("check.expect_eq", "tensor<2xf32>", "[0x7FC00000, 1.0]", "[0x7FC00001, 1.0]"))
          .ok());
  EXPECT_TRUE(
      Check(Program("check.expect_eq", "tensor<2xi1>", "[true, false]", "[true, false]")).ok());
}

TEST(ExpectEq, ConstForm) {
  std::string text =
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[1.5, 2.5]> : tensor<2xbf16>\n"
      "  check.expect_eq_const %a, dense<[1.5, 2.5]> : tensor<2xbf16>\n"
      "  check.expect_almost_eq_const %a, dense<[1.5, 2.51]> : tensor<2xbf16> {tolerance = 0.1 : "
      "f64}\n"
      "  func.return\n}\n";
  EXPECT_TRUE(Check(text).ok()) << Check(text).ToString();
}

TEST(ExpectAlmostEq, DefaultToleranceIsOneInTenThousand) {
  const std::string t = "tensor<2xf64>";
  EXPECT_TRUE(Check(Program("check.expect_almost_eq", t, "[5.0, 1.0]", "[5.00009, 1.0]")).ok());
  ExpectFails(Program("check.expect_almost_eq", t, "[5.0, 1.0]", "[5.0002, 1.0]"), "within 0.0001");
  EXPECT_TRUE(
      Check(Program("check.expect_almost_eq", t, "[5.0, 1.0]", "[5.05, 1.0]", ", tolerance = 0.1"))
          .ok());
}

TEST(ExpectAlmostEq, NonFiniteValuesMustMatch) {
  const std::string t = "tensor<3xf32>";
  EXPECT_TRUE(Check(Program("check.expect_almost_eq", t, "[0x7FC00000, 0x7F800000, 1.0]",
                            "[0x7FC00001, 0x7F800000, 1.0]"))
                  .ok());
  ExpectFails(
      Program("check.expect_almost_eq", t, "[0x7F800000, 1.0, 1.0]", "[0xFF800000, 1.0, 1.0]"),
      "first at [0]");
  ExpectFails(Program("check.expect_almost_eq", t, "[1.0, 0x7FC00000, 1.0]", "[1.0, 1.0, 1.0]"),
              "first at [1]");
}

TEST(ExpectAlmostEq, ComplexComparesBothParts) {
  const std::string t = "tensor<1xcomplex<f32>>";
  EXPECT_TRUE(Check(Program("check.expect_almost_eq", t, "[(1.0, 2.0)]", "[(1.00001, 2.0)]")).ok());
  ExpectFails(Program("check.expect_almost_eq", t, "[(1.0, 2.0)]", "[(1.0, 2.1)]"), "(1, 2)");
}

TEST(ExpectClose, UlpDistanceWithinBounds) {
  // f16 values near 5 are 2^-8 apart: 5.010 rounds to 5 + 3 * 2^-8.
  const std::string t = "tensor<f16>";
  EXPECT_TRUE(
      Check(Program("check.expect_close", t, "5.0", "5.010", ", max_ulp_difference = 3")).ok());
  ExpectFails(Program("check.expect_close", t, "5.0", "5.010", ", max_ulp_difference = 2"),
              "within [0, 2] ULP");
  ExpectFails(Program("check.expect_close", t, "5.0", "5.010",
                      ", max_ulp_difference = 5, min_ulp_difference = 4"),
              "within [4, 5] ULP");
}

TEST(ExpectClose, CountsUlpsAcrossZero) {
  // -min_subnormal .. +min_subnormal is two steps; -0 and +0 are the same point.
  const std::string t = "tensor<2xf32>";
  EXPECT_TRUE(Check(Program("check.expect_close", t, "[0x80000001, -0.0]", "[0x00000001, 0.0]",
                            ", max_ulp_difference = 2"))
                  .ok());
  ExpectFails(Program("check.expect_close", t, "[0x80000001, -0.0]", "[0x00000001, 0.0]",
                      ", max_ulp_difference = 1"),
              "first at [0]");
}

TEST(ExpectClose, CustomCallFormAllowsThreeUlpsAndMatchesNans) {
  const std::string t = "tensor<3xbf16>";
  // bf16 steps near 1 are 2^-7: 1.0234375 is three steps above 1.
  EXPECT_TRUE(Check(CustomCall("check.expect_close", t, "[1.0, 0x7FC0, 0xFF80]",
                               "[1.0234375, 0x7FC1, 0xFF80]"))
                  .ok());
  Status st = Check(CustomCall("check.expect_close", t, "[1.0, 1.0, 1.0]", "[1.03125, 1.0, 1.0]"));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("check.expect_close"), std::string::npos) << st.message();
  EXPECT_FALSE(
      Check(CustomCall("check.expect_close", t, "[0x7F80, 1.0, 1.0]", "[0x7FC0, 1.0, 1.0]")).ok());
}

TEST(CustomCall, AlmostEqToleranceIsOneInAThousand) {
  const std::string t = "tensor<f32>";
  EXPECT_TRUE(Check(CustomCall("check.expect_almost_eq", t, "1.0", "1.0009")).ok());
  EXPECT_FALSE(Check(CustomCall("check.expect_almost_eq", t, "1.0", "1.002")).ok());
  EXPECT_TRUE(Check(CustomCall("check.expect_eq", t, "1.0", "1.0")).ok());
}

TEST(CustomCall, OtherTargetsAreUnsupportedByName) {
  Status st = Check(CustomCall("my_kernel", "tensor<f32>", "1.0", "1.0"));
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_NE(st.message().find("'my_kernel'"), std::string::npos) << st.message();
}

TEST(ExpectEq, MismatchedTypesAreAVerifyError) {
  std::string text =
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<1> : tensor<i32>\n"
      "  check.expect_eq_const %a, dense<1> : tensor<i64>\n"
      "  func.return\n}\n";
  EXPECT_EQ(testing::VerifyMlir(text).code(), StatusCode::kInvalidArgument);
}

TEST(Probe, PassesItsOperandThrough) {
  std::string text =
      "func.func @main() -> tensor<2xi32> {\n"
      "  %a = stablehlo.constant dense<[3, 4]> : tensor<2xi32>\n"
      "  %b = interpreter.probe %a, probe_id = \"p\" : tensor<2xi32>\n"
      "  func.return %b : tensor<2xi32>\n}\n";
  EXPECT_EQ(testing::RunAndRead<int32_t>(text), (std::vector<int32_t>{3, 4}));
}

}  // namespace
}  // namespace tpusim::ops
