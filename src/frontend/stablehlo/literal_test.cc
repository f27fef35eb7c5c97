// Dense literals, numbers and error reporting of the StableHLO parser.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::frontend {
namespace {

// The `value` of `stablehlo.constant <literal>` in a one-op function.
StatusOr<ir::Attribute> Constant(const std::string& literal) {
  std::string text = "func.func @f() {\n  %0 = stablehlo.constant " + literal + "\n  func.return\n}\n";
  auto m = ParseStableHlo(text, "lit.mlir");
  if (!m.ok()) return m.status();
  return (*m)->functions()[0]->entry().ops()[0]->attr("value");
}

template <typename T>
std::vector<T> Elements(const ir::Attribute& a) {
  std::vector<T> out(a.bytes().size() / sizeof(T));
  std::memcpy(out.data(), a.bytes().data(), a.bytes().size());
  return out;
}

TEST(DenseLiteralTest, IntegersOfAllWidths) {
  auto a = Constant("dense<[0, 18446744073709551615]> : tensor<2xui64>");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(Elements<uint64_t>(*a), (std::vector<uint64_t>{0, 18446744073709551615ull}));
  auto b = Constant("dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->AsInts(), (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
  auto c = Constant("dense<[-8, 7, 15]> : tensor<3xi4>");  // signless: 15 is the pattern of -1
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->AsInts(), (std::vector<int64_t>{-8, 7, -1}));
  auto d = Constant("dense<[0, 15]> : tensor<2xui4>");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->AsInts(), (std::vector<int64_t>{0, 15}));
  EXPECT_FALSE(Constant("dense<16> : tensor<ui4>").ok());
  EXPECT_FALSE(Constant("dense<-1> : tensor<ui8>").ok());
  EXPECT_FALSE(Constant("dense<-129> : tensor<i8>").ok());
  EXPECT_FALSE(Constant("dense<18446744073709551616> : tensor<ui64>").ok());
}

TEST(DenseLiteralTest, Booleans) {
  auto a = Constant("dense<[[true, false], [false, true]]> : tensor<2x2xi1>");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->bytes(), (std::vector<uint8_t>{1, 0, 0, 1}));
  auto splat = Constant("dense<true> : tensor<5xi1>");
  ASSERT_TRUE(splat.ok());
  EXPECT_TRUE(splat->is_splat());
  // Older MLIR bit-packed i1 hex blobs, least significant bit first.
  auto hex = Constant("dense<\"0x05\"> : tensor<3xi1>");
  ASSERT_TRUE(hex.ok()) << hex.status().ToString();
  EXPECT_EQ(hex->bytes(), (std::vector<uint8_t>{1, 0, 1}));
}

TEST(DenseLiteralTest, BooleanHexOneBytePerElement) {
  // Current MLIR writes one byte per i1 element, 16 of them here where a
  // bit-packed blob would take 2.
  auto a = Constant("dense<\"0x01000100000000000000000000000001\"> : tensor<4x4xi1>");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  std::vector<uint8_t> want(16, 0);
  want[0] = want[2] = want[15] = 1;
  EXPECT_EQ(a->bytes(), want);
  // One byte is a splat, in either form.
  for (const char* splat : {"0x01", "0xFF"}) {
    auto s = Constant(std::string("dense<\"") + splat + "\"> : tensor<100x100xi1>");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_TRUE(s->is_splat());
    EXPECT_EQ(s->bytes(), (std::vector<uint8_t>{1}));
  }
  auto f = Constant("dense<\"0x00\"> : tensor<9xi1>");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->bytes(), (std::vector<uint8_t>{0}));
  auto bad = Constant("dense<\"0x010001\"> : tensor<4xi1>");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("3 bytes does not match tensor<4xi1>"), std::string::npos)
      << bad.status().ToString();
}

TEST(DenseLiteralTest, FloatsRoundToTheElementType) {
  auto f = Constant("dense<[0.1, -2.5, 3.4028234663852886e+38]> : tensor<3xf32>");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(Elements<float>(*f), (std::vector<float>{0.1f, -2.5f, 3.4028234663852886e+38f}));
  auto bf = Constant("dense<[1.0, 0.1, 5.390630e-01]> : tensor<3xbf16>");
  ASSERT_TRUE(bf.ok());
  std::vector<uint16_t> bits = Elements<uint16_t>(*bf);
  EXPECT_EQ(bits[0], 0x3F80);
  EXPECT_EQ(bits[1], numerics::EncodeSmallFloat(ir::ElementType::kBF16, 0.1));
  EXPECT_EQ(bits[2], numerics::EncodeSmallFloat(ir::ElementType::kBF16, 0.539063));
  auto f8 = Constant("dense<[448.0, -0.0]> : tensor<2xf8E4M3FN>");
  ASSERT_TRUE(f8.ok());
  EXPECT_EQ(f8->bytes(), (std::vector<uint8_t>{0x7E, 0x80}));
  auto ints_as_floats = Constant("dense<[1, -2]> : tensor<2xf64>");
  ASSERT_TRUE(ints_as_floats.ok());
  EXPECT_EQ(Elements<double>(*ints_as_floats), (std::vector<double>{1.0, -2.0}));
}

TEST(DenseLiteralTest, HexBitPatternsForSpecialValues) {
  auto f = Constant("dense<[0x7FC00000, 0xFF800000, 0x7F800000, 0x00000001]> : tensor<4xf32>");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::vector<float> v = Elements<float>(*f);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], -INFINITY);
  EXPECT_EQ(v[2], INFINITY);
  EXPECT_EQ(v[3], std::numeric_limits<float>::denorm_min());
  auto bf = Constant("dense<[0xFFC0, 0x7FFF, 1.0]> : tensor<3xbf16>");
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ(Elements<uint16_t>(*bf), (std::vector<uint16_t>{0xFFC0, 0x7FFF, 0x3F80}));
  EXPECT_FALSE(Constant("dense<0x1FFFF> : tensor<bf16>").ok());
}

TEST(DenseLiteralTest, HexBlobs) {
  auto a = Constant("dense<\"0x0000803F000000C0\"> : tensor<2xf32>");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Elements<float>(*a), (std::vector<float>{1.0f, -2.0f}));
  // One element's worth is a splat.
  auto s = Constant("dense<\"0x0000803F\"> : tensor<1000xf32>");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->is_splat());
  auto i4 = Constant("dense<\"0x0F07\"> : tensor<2xi4>");  // sign-extended into bytes
  ASSERT_TRUE(i4.ok());
  EXPECT_EQ(i4->AsInts(), (std::vector<int64_t>{-1, 7}));
  EXPECT_FALSE(Constant("dense<\"0x0000803F00\"> : tensor<2xf32>").ok());
  EXPECT_FALSE(Constant("dense<\"0x0G\"> : tensor<1xi8>").ok());
}

TEST(DenseLiteralTest, Complex) {
  auto c = Constant("dense<[(1.0, 2.0), (-0.5, 0x7FF0000000000000)]> : tensor<2xcomplex<f64>>");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::vector<double> v = Elements<double>(*c);
  EXPECT_EQ(v, (std::vector<double>{1.0, 2.0, -0.5, INFINITY}));
  auto splat = Constant("dense<(1.5, -1.0)> : tensor<3xcomplex<f32>>");
  ASSERT_TRUE(splat.ok());
  EXPECT_TRUE(splat->is_splat());
  EXPECT_EQ(Elements<float>(*splat), (std::vector<float>{1.5f, -1.0f}));
  EXPECT_FALSE(Constant("dense<[1.0]> : tensor<1xcomplex<f32>>").ok());
}

TEST(DenseLiteralTest, ShapesAndSplats) {
  EXPECT_TRUE(Constant("dense<> : tensor<0xui8>").ok());
  EXPECT_TRUE(Constant("dense<[]> : tensor<0xi8>").ok());
  EXPECT_TRUE(Constant("dense<[[], []]> : tensor<2x0xi8>").ok());
  EXPECT_FALSE(Constant("dense<[[1, 2], [3]]> : tensor<2x2xi8>").ok());
  EXPECT_FALSE(Constant("dense<[1, [2]]> : tensor<2xi8>").ok());
  EXPECT_FALSE(Constant("dense<[1, 2, 3]> : tensor<2xi8>").ok());
  // A huge splat stays one element.
  auto big = Constant("dense<0> : tensor<100000000000xf32>");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->bytes().size(), 4u);
  EXPECT_FALSE(Constant("dense<0> : tensor<100000000000x100000000000xf32>").ok());
}

TEST(DenseLiteralTest, ArrayAttributes) {
  auto m = ParseStableHlo(R"(func.func @f(%x: tensor<2x3xf32>) -> () {
      %0 = "stablehlo.transpose"(%x) {permutation = array<i64: 1, 0>, flags = array<i1: true, false>, empty = array<i32>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
      func.return
    })", "a.mlir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const ir::Operation& op = *(*m)->functions()[0]->entry().ops()[0];
  EXPECT_EQ(op.attr("permutation").AsInts(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(op.attr("flags").AsInts(), (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(op.attr("empty").AsInts().empty());
}

TEST(ParseErrorTest, LocationAndCaret) {
  auto m = ParseStableHlo("func.func @f() {\n  %0 = stablehlo.constant dense<[1, 2> : tensor<2xi32>\n}\n",
                          "bad.mlir");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.status().message(),
            "bad.mlir:2:38: expected ']', found '>'\n"
            "  %0 = stablehlo.constant dense<[1, 2> : tensor<2xi32>\n"
            "                                     ^");
}

TEST(ParseErrorTest, UndefinedValueAndTypeMismatch) {
  auto undefined = ParseStableHlo("func.func @f() {\n  %0 = stablehlo.abs %x : tensor<f32>\n}", "u.mlir");
  ASSERT_FALSE(undefined.ok());
  EXPECT_NE(undefined.status().message().find("u.mlir:2:22: use of undefined value %x"),
            std::string::npos)
      << undefined.status().message();
  auto mismatch = ParseStableHlo(
      "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.abs %a : tensor<f64>\n}", "t.mlir");
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("t.mlir:2:27:"), std::string::npos)
      << mismatch.status().message();
}

TEST(ParseErrorTest, UnsupportedFeaturesAreUnimplemented) {
  auto unranked = ParseStableHlo("func.func @f(%a: tensor<*xf32>) {\n  func.return\n}", "d.mlir");
  ASSERT_FALSE(unranked.ok());
  EXPECT_EQ(unranked.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(unranked.status().message().find("d.mlir:1:25: unranked tensors"), std::string::npos)
      << unranked.status().message();
  auto quant = ParseStableHlo(
      "func.func @f(%a: tensor<2x!quant.uniform<i8:f32, 0.1:-30>>) {\n  func.return\n}", "q.mlir");
  ASSERT_FALSE(quant.ok());
  EXPECT_EQ(quant.status().code(), StatusCode::kUnimplemented);
  auto bounded = ParseStableHlo(
      "func.func @f(%a: tensor<2xf32, #stablehlo.type_extensions<bounds = [4]>>) {\n  func.return\n}",
      "b.mlir");
  ASSERT_FALSE(bounded.ok());
  EXPECT_EQ(bounded.status().code(), StatusCode::kUnimplemented);
}

TEST(ParseErrorTest, DeepNestingIsRejectedNotOverflowed) {
  std::string text = "func.func @f() {\n  %0 = stablehlo.constant dense<" + std::string(100000, '[') +
                     "1" + std::string(100000, ']') + "> : tensor<1xi32>\n}";
  auto m = ParseStableHlo(text, "deep.mlir");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("nesting too deep"), std::string::npos);
}

TEST(ParseErrorTest, DeepRegionsAndTypesAreRejected) {
  std::string regions = "func.func @f() {\n";
  for (int i = 0; i < 5000; ++i) regions += "\"test.op\"() ({\n";
  auto m = ParseStableHlo(regions, "regions.mlir");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("nesting too deep"), std::string::npos);
  std::string types = "func.func @f(%a: ";
  for (int i = 0; i < 5000; ++i) types += "tuple<";
  auto t = ParseStableHlo(types, "types.mlir");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("nesting too deep"), std::string::npos);
}

TEST(ParseCasesTest, SplitsOnSeparatorsKeepingFileLines) {
  std::string text =
      "func.func @a() {\n  func.return\n}\n// -----\nfunc.func @b() {\n  %0 = bogus\n}\n";
  std::vector<ParsedCase> cases = ParseStableHloCases(text, "cases.mlir");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_TRUE(cases[0].module.ok());
  EXPECT_EQ(cases[1].first_line, 5);
  ASSERT_FALSE(cases[1].module.ok());
  EXPECT_NE(cases[1].module.status().message().find("cases.mlir:6:"), std::string::npos)
      << cases[1].module.status().message();
}

TEST(ParsePerformanceTest, TenThousandOps) {
  std::string text = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %v0 = stablehlo.add %a, %a : tensor<4xf32>\n";
  for (int i = 1; i < 10000; ++i) {
    text += "  %v" + std::to_string(i) + " = stablehlo.multiply %v" + std::to_string(i - 1) +
            ", %a : tensor<4xf32>\n";
  }
  text += "  return %v9999 : tensor<4xf32>\n}\n";
  std::string blob = "func.func @g() {\n  %0 = stablehlo.constant dense<\"0x" +
                     std::string(16 * 1000000, 'A') + "\"> : tensor<1000000xf64>\n  func.return\n}\n";
  auto start = std::chrono::steady_clock::now();
  auto m = ParseStableHlo(text, "big.mlir");
  auto b = ParseStableHlo(blob, "blob.mlir");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*m)->functions()[0]->entry().ops().size(), 10001u);
  EXPECT_LT(seconds, 5.0);  // ~0.05 s in an optimized build; loose for sanitizers
}

}  // namespace
}  // namespace tpusim::frontend
