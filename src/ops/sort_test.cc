#include <gtest/gtest.h>

#include "ops/sort.h"
#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunAndRead;
using testing::RunMlir;
using testing::VerifyMlir;

TEST(StableSortTest, KeepsEqualKeysInOrder) {
  const std::vector<int> keys = {3, 1, 3, 0, 1, 3, 2};
  std::vector<int64_t> perm = {0, 1, 2, 3, 4, 5, 6};
  StableSort(perm, [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
  EXPECT_EQ(perm, (std::vector<int64_t>{3, 1, 4, 6, 0, 2, 5}));
}

TEST(StableSortTest, SurvivesInconsistentComparator) {
  std::vector<int64_t> perm(100);
  for (int64_t i = 0; i < 100; ++i) perm[i] = i;
  StableSort(perm, [](int64_t, int64_t) { return true; });
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);  // still a permutation
}

TEST(SortTest, TwoInputsAlongDimZero) {
  // The spec's example: sorted by input 0, descending, stable.
  auto r = RunMlir(R"(
    func.func @main() -> (tensor<2x3xi64>, tensor<2x3xi64>) {
      %a = stablehlo.constant dense<[[1, 2, 3], [3, 2, 1]]> : tensor<2x3xi64>
      %b = stablehlo.constant dense<[[3, 2, 1], [1, 2, 3]]> : tensor<2x3xi64>
      %r:2 = "stablehlo.sort"(%a, %b) ({
      ^bb0(%x: tensor<i64>, %y: tensor<i64>, %z: tensor<i64>, %w: tensor<i64>):
        %p = stablehlo.compare GT, %x, %y : (tensor<i64>, tensor<i64>) -> tensor<i1>
        stablehlo.return %p : tensor<i1>
      }) {dimension = 0 : i64, is_stable = true} : (tensor<2x3xi64>, tensor<2x3xi64>) -> (tensor<2x3xi64>, tensor<2x3xi64>)
      return %r#0, %r#1 : tensor<2x3xi64>, tensor<2x3xi64>
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<int64_t>((*r)[0]), (std::vector<int64_t>{3, 2, 3, 1, 2, 1}));
  EXPECT_EQ(Read<int64_t>((*r)[1]), (std::vector<int64_t>{1, 2, 1, 3, 2, 3}));
}

// Sorts [3, -0, NaN, 0, -1] (f32) with `comparator` over %x, %y.
std::vector<uint32_t> SortFloats(const std::string& comparator) {
  return RunAndRead<uint32_t>(R"(
    func.func @main() -> tensor<5xf32> {
      %a = stablehlo.constant dense<[3.0, -0.0, 0x7FC00000, 0.0, -1.0]> : tensor<5xf32>
      %r = "stablehlo.sort"(%a) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        )" + comparator + R"(
      }) {dimension = -1 : i64} : (tensor<5xf32>) -> tensor<5xf32>
      return %r : tensor<5xf32>
    })");
}

TEST(SortTest, TotalOrderFastPathMatchesRegion) {
  const std::vector<uint32_t> expected = {0xBF800000, 0x80000000, 0x00000000, 0x40400000,
                                          0x7FC00000};
  EXPECT_EQ(SortFloats(R"(
        %p = stablehlo.compare LT, %x, %y, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %p : tensor<i1>)"),
            expected);
  // The same order through a region that is not one compare.
  EXPECT_EQ(SortFloats(R"(
        %p = stablehlo.compare GT, %y, %x, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %t = stablehlo.constant dense<true> : tensor<i1>
        %q = stablehlo.and %p, %t : tensor<i1>
        stablehlo.return %q : tensor<i1>)"),
            expected);
}

// JAX's comparator for float sorts: -0 and NaNs canonicalized, then a
// total-order LT; `extra` is spliced in before the return.
std::string JaxFloatComparator(const std::string& result) {
  std::string body;
  for (const char* v : {"x", "y"}) {
    const std::string x = v;
    body += "%z" + x + " = stablehlo.constant dense<0.0> : tensor<f32>\n"
            "%e" + x + " = stablehlo.compare EQ, %" + x + ", %z" + x + ", FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "%s" + x + " = stablehlo.select %e" + x + ", %z" + x + ", %" + x + " : tensor<i1>, tensor<f32>\n"
            "%n" + x + " = stablehlo.compare NE, %" + x + ", %" + x + ", FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "%q" + x + " = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n"
            "%c" + x + " = stablehlo.select %n" + x + ", %q" + x + ", %s" + x + " : tensor<i1>, tensor<f32>\n";
  }
  return body + "%p = stablehlo.compare LT, %cx, %cy, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n" +
         result;
}

TEST(SortTest, JaxCanonicalizingComparatorFastPathMatchesRegion) {
  // -0 and +0 compare equal, so the stable sort keeps their input order.
  const std::vector<uint32_t> expected = {0xBF800000, 0x80000000, 0x00000000, 0x40400000,
                                          0x7FC00000};
  EXPECT_EQ(SortFloats(JaxFloatComparator("stablehlo.return %p : tensor<i1>")), expected);
  EXPECT_EQ(SortFloats(JaxFloatComparator(
                "%t = stablehlo.constant dense<true> : tensor<i1>\n"
                "%r = stablehlo.and %p, %t : tensor<i1>\n"
                "stablehlo.return %r : tensor<i1>")),
            expected);
}

TEST(SortTest, RejectsComparatorOfWrongType) {
  Status st = VerifyMlir(R"(
    func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
      %r = "stablehlo.sort"(%a) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        stablehlo.return %x : tensor<f32>
      }) {dimension = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
      return %r : tensor<3xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
