#include "ops/kernels/region_kernels.h"

#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunMlir;

// The reduce body region of @main's first stablehlo.reduce in `text`.
const ir::Region* FirstRegion(const ir::Module& m) {
  for (const auto& op : m.functions()[0]->entry().ops()) {
    if (op->num_regions() > 0) return &op->region(0);
  }
  return nullptr;
}

std::unique_ptr<ir::Module> ParseReduce(const std::string& body) {
  auto m = frontend::ParseStableHlo(R"(
    func.func @main(%x: tensor<4xf32>, %c: tensor<f32>) -> tensor<f32> {
      %r = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
        reducer(%a: tensor<f32>, %b: tensor<f32>) {
          )" + body + R"(
        }
      return %r : tensor<f32>
    })",
                                    "test.mlir");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(*m) : nullptr;
}

TEST(MatchRegionTest, RecognizesOneBinaryOpInEitherOrder) {
  auto m = ParseReduce("%s = stablehlo.maximum %b, %a : tensor<f32>\n"
                       "stablehlo.return %s : tensor<f32>");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(MatchBinaryRegion(*FirstRegion(*m)), BinaryKind::kMaximum);
  EXPECT_FALSE(MatchReturnOfArgument(*FirstRegion(*m), 1));
}

// A complex product's last bit depends on the operand order (ComplexMultiply),
// so only the in-order body takes the fast path; the other runs the region.
TEST(MatchRegionTest, ComplexMultiplyOnlyInOrder) {
  for (bool swapped : {false, true}) {
    auto m = frontend::ParseStableHlo(std::string(R"(
      func.func @main(%x: tensor<4xcomplex<f32>>, %c: tensor<complex<f32>>) -> tensor<complex<f32>> {
        %r = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<4xcomplex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
          reducer(%a: tensor<complex<f32>>, %b: tensor<complex<f32>>) {
            %s = stablehlo.multiply )") + (swapped ? "%b, %a" : "%a, %b") + R"( : tensor<complex<f32>>
            stablehlo.return %s : tensor<complex<f32>>
          }
        return %r : tensor<complex<f32>>
      })",
                                      "test.mlir");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const std::optional<BinaryKind> kind = MatchBinaryRegion(*FirstRegion(**m));
    EXPECT_EQ(kind.has_value(), !swapped);
    if (kind) {
      EXPECT_EQ(*kind, BinaryKind::kMultiply);
    }
  }
}

TEST(MatchRegionTest, RejectsOtherBodies) {
  for (const char* body : {"%s = stablehlo.add %a, %a : tensor<f32>\n"
                           "stablehlo.return %s : tensor<f32>",
                           "%s = stablehlo.subtract %a, %b : tensor<f32>\n"
                           "stablehlo.return %s : tensor<f32>",
                           "%s = stablehlo.add %a, %b : tensor<f32>\n"
                           "%t = stablehlo.add %s, %b : tensor<f32>\n"
                           "stablehlo.return %t : tensor<f32>"}) {
    auto m = ParseReduce(body);
    ASSERT_NE(m, nullptr);
    EXPECT_FALSE(MatchBinaryRegion(*FirstRegion(*m)).has_value()) << body;
  }
  auto m = ParseReduce("stablehlo.return %b : tensor<f32>");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(MatchReturnOfArgument(*FirstRegion(*m), 1));
}

TEST(MatchRegionTest, RecognizesJaxCanonicalizingComparator) {
  auto m = frontend::ParseStableHlo(R"(
    func.func @main(%a: tensor<4xbf16>) -> tensor<4xbf16> {
      %r = "stablehlo.sort"(%a) ({
      ^bb0(%x: tensor<bf16>, %y: tensor<bf16>):
        %z = stablehlo.constant dense<0.0> : tensor<bf16>
        %ex = stablehlo.compare EQ, %x, %z, FLOAT : (tensor<bf16>, tensor<bf16>) -> tensor<i1>
        %sx = stablehlo.select %ex, %z, %x : tensor<i1>, tensor<bf16>
        %nx = stablehlo.compare NE, %x, %x, FLOAT : (tensor<bf16>, tensor<bf16>) -> tensor<i1>
        %q = stablehlo.constant dense<0x7FC0> : tensor<bf16>
        %cx = stablehlo.select %nx, %q, %sx : tensor<i1>, tensor<bf16>
        %ey = stablehlo.compare EQ, %y, %z, FLOAT : (tensor<bf16>, tensor<bf16>) -> tensor<i1>
        %sy = stablehlo.select %ey, %z, %y : tensor<i1>, tensor<bf16>
        %ny = stablehlo.compare NE, %y, %y, FLOAT : (tensor<bf16>, tensor<bf16>) -> tensor<i1>
        %cy = stablehlo.select %ny, %q, %sy : tensor<i1>, tensor<bf16>
        %p = stablehlo.compare GT, %cx, %cy, TOTALORDER : (tensor<bf16>, tensor<bf16>) -> tensor<i1>
        stablehlo.return %p : tensor<i1>
      }) {dimension = 0 : i64} : (tensor<4xbf16>) -> tensor<4xbf16>
      return %r : tensor<4xbf16>
    })",
                                    "test.mlir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::optional<CompareMatch> match = MatchCompareRegion(*FirstRegion(**m));
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->direction, CompareDirection::kGt);
  EXPECT_TRUE(match->total_order && match->canonical);
  EXPECT_EQ(match->nan_bits, 0x7FC0u);
  EXPECT_EQ(match->zero_bits, 0u);
}

// reduce of `values` (a dense literal of `type`) by `op`, once with
// `applies op` (the typed kernel) and once with a body the matcher does not
// recognize (the region path); returns both results' bytes.
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> BothPaths(const std::string& type,
                                                                const std::string& values,
                                                                const std::string& init,
                                                                const std::string& op) {
  const std::string t = "tensor<" + type + ">", v = "tensor<4x" + type + ">";
  const std::string head = "func.func @main() -> " + t + " {\n"
                           "  %x = stablehlo.constant dense<" + values + "> : " + v + "\n"
                           "  %c = stablehlo.constant dense<" + init + "> : " + t + "\n";
  const std::string fast = head + "  %r = stablehlo.reduce(%x init: %c) applies " + op +
                           " across dimensions = [0] : (" + v + ", " + t + ") -> " + t +
                           "\n  return %r : " + t + "\n}";
  const std::string slow = head + "  %r = stablehlo.reduce(%x init: %c) across dimensions = [0] : (" +
                           v + ", " + t + ") -> " + t + "\n" +
                           "    reducer(%a: " + t + ", %b: " + t + ") {\n" +
                           "      %s = " + op + " %a, %b : " + t + "\n" +
                           "      %u = stablehlo.optimization_barrier %s : " + t + "\n" +
                           "      stablehlo.return %u : " + t + "\n    }\n" +
                           "  return %r : " + t + "\n}";
  auto a = RunMlir(fast);
  auto b = RunMlir(slow);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  if (!a.ok() || !b.ok()) return {};
  return {Read<uint8_t>((*a)[0]), Read<uint8_t>((*b)[0])};
}

TEST(BinaryKernelTest, FastPathMatchesRegionForEveryType) {
  struct Case {
    const char* type;
    const char* values;
    const char* init;
  };
  const Case cases[] = {
      {"i1", "[true, false, true, true]", "false"},
      {"i8", "[100, 27, -5, 90]", "1"},
      {"ui8", "[200, 100, 7, 3]", "1"},
      {"i4", "[7, 1, -8, 3]", "1"},
      {"i32", "[2147483647, 1, -3, 5]", "2"},
      {"ui64", "[18446744073709551615, 2, 3, 4]", "1"},
      {"bf16", "[1.0, 0x7FC0, -0.0, 3.5]", "0.0"},
      {"f16", "[65504.0, 65504.0, -0.0, 0.0]", "-0.0"},
      {"f32", "[1.0e30, 1.0e30, -1.0e-45, 0.1]", "0.0"},
      {"f64", "[0.1, 0.2, 0.3, -0.0]", "1.0"},
      {"f8E4M3FN", "[1.0, 2.0, 448.0, -0.5]", "0.0"},
      {"complex<f32>", "[(1.0, 2.0), (3.0, -1.0), (0.5, 0.5), (-2.0, 0.0)]", "(1.0, 0.0)"},
  };
  for (const Case& c : cases) {
    for (const char* op : {"stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
                           "stablehlo.minimum"}) {
      auto [fast, slow] = BothPaths(c.type, c.values, c.init, op);
      EXPECT_FALSE(fast.empty()) << c.type << " " << op;
      EXPECT_EQ(fast, slow) << c.type << " " << op;
    }
  }
  for (const char* op : {"stablehlo.and", "stablehlo.or", "stablehlo.xor"}) {
    auto [fast, slow] = BothPaths("i16", "[12, -7, 255, 1024]", "-1", op);
    EXPECT_EQ(fast, slow) << op;
  }
}

}  // namespace
}  // namespace tpusim::ops
