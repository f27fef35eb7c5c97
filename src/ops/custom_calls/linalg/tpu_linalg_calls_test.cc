// The TPU backend's linear algebra targets, in the forms JAX's TPU lowerings
// emit (separate results and, from older exports, one tuple).
#include <algorithm>
#include <numeric>

#include "ops/testing/lapack_test_util.h"
#include "tpusim/hw/chip.h"
#include "tpusim/ops/custom_call.h"
#include "tpusim/timing/timing.h"

namespace tpusim::ops::testing {
namespace {

using ir::ElementType;

template <typename T>
class TpuLinalgCallsTest : public ::testing::Test {
 protected:
  static ir::Type Of(std::vector<int64_t> shape) { return TypeOf(kElementOf<T>, std::move(shape)); }
  static ir::Type I32(std::vector<int64_t> shape) {
    return TypeOf(ElementType::kSI32, std::move(shape));
  }
};

using Scalars = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(TpuLinalgCallsTest, Scalars);

TYPED_TEST(TpuLinalgCallsTest, QrAndHouseholderProductGiveQ) {
  using T = TypeParam;
  const int64_t m = 5, n = 3;
  for (const Mat<T>& a : {Random<T>(m, n, 1), Graded<T>(m, n, 2)}) {
    auto qr =
        RunCall("Qr", "api_version = 1 : i32", {ToTensor(a)}, {this->Of({m, n}), this->Of({n})});
    ASSERT_EQ(qr.size(), 2u);
    auto q =
        RunCall("ProductOfElementaryHouseholderReflectors", "", {qr[0], qr[1]}, {this->Of({m, n})});
    ASSERT_EQ(q.size(), 1u);
    Mat<T> qm = ToMat<T>(q[0], m, n);
    Mat<T> r = Upper(ToMat<T>(qr[0], m, n).Block(0, n, 0, n));
    ExpectClose(qm * r, a, a.Norm(), "Q R = A");
    ExpectClose(qm.H() * qm, Mat<T>::Identity(n), std::sqrt(double(n)), "Q^H Q = I");
  }
}

TYPED_TEST(TpuLinalgCallsTest, LuDecompositionGivesPermutedLu) {
  using T = TypeParam;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{4, 4}, {5, 3}}) {
    const int64_t k = std::min(m, n);
    for (const Mat<T>& a : {Random<T>(m, n, 3), Graded<T>(m, n, 4)}) {
      auto r = RunCall("LuDecomposition", "", {ToTensor(a)},
                       {this->Of({m, n}), this->I32({k}), this->I32({m})});
      ASSERT_EQ(r.size(), 3u);
      Mat<T> lu = ToMat<T>(r[0], m, n);
      Mat<T> l(m, k);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < k; ++j) l(i, j) = i == j ? T(1) : i > j ? lu(i, j) : T(0);
      }
      std::vector<int32_t> pivots = Read<int32_t>(r[1]), perm = Read<int32_t>(r[2]);
      std::vector<int32_t> expect(m);
      std::iota(expect.begin(), expect.end(), 0);
      for (int64_t i = 0; i < k; ++i) {
        ASSERT_GE(pivots[i], i);  // 0-based
        std::swap(expect[i], expect[pivots[i]]);
      }
      EXPECT_EQ(perm, expect);
      Mat<T> pa(m, n);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) pa(i, j) = a(perm[i], j);
      }
      ExpectClose(l * Upper(lu.Block(0, k, 0, n)), pa, a.Norm(), "A[perm] = L U");
    }
  }
}

TYPED_TEST(TpuLinalgCallsTest, BatchedLuKeepsEachMatrixsPivots) {
  using T = TypeParam;
  const int64_t n = 3;
  Mat<T> a0 = Random<T>(n, n, 5), a1 = Random<T>(n, n, 6), both(2 * n, n);
  std::copy(a0.v.begin(), a0.v.end(), both.v.begin());
  std::copy(a1.v.begin(), a1.v.end(), both.v.begin() + n * n);
  auto r = RunCall("LuDecomposition", "", {ToTensor(both, {2, n, n})},
                   {this->Of({2, n, n}), this->I32({2, n}), this->I32({2, n})});
  ASSERT_EQ(r.size(), 3u);
  std::vector<int32_t> perm = Read<int32_t>(r[2]);
  for (int64_t b = 0; b < 2; ++b) {
    const Mat<T>& a = b == 0 ? a0 : a1;
    Mat<T> lu = ToMat<T>(r[0], n, n, b * n * n);
    Mat<T> l = Upper(lu.H(), 1).H(), pa(n, n);
    for (int64_t i = 0; i < n; ++i) {
      l(i, i) = T(1);
      for (int64_t j = 0; j < n; ++j) pa(i, j) = a(perm[b * n + i], j);
    }
    ExpectClose(l * Upper(lu), pa, a.Norm(), "batch element");
  }
}

TYPED_TEST(TpuLinalgCallsTest, EighGivesSortedEigenpairs) {
  using T = TypeParam;
  using R = la::Real<T>;
  const int64_t n = 6;
  for (bool ill : {false, true}) {
    Mat<T> a = Hermitian<T>(n, 4, ill);
    for (bool lower : {true, false}) {
      Mat<T> one_triangle = a;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (lower ? j > i : j < i) one_triangle(i, j) = T(-7);
        }
      }
      auto r = RunCall("Eigh",
                       std::string("backend_config = \"") + (lower ? "1" : "0") + ",1,100,1e-6\"",
                       {ToTensor(one_triangle)}, {this->Of({n, n}), TypeOf(kElementOf<R>, {n})});
      ASSERT_EQ(r.size(), 2u);
      ExpectEigendecomposition(a, ToMat<T>(r[0], n, n), Read<R>(r[1]), "Eigh");
    }
  }
}

// JAX's tpu_Lu back-compat case: iota(9) as 3x3 gives LU [[6,7,8],[0,1,2],
// [.5,.5,0]], pivots [2,2,2] and permutation [2,0,1], here in the old tuple
// form.
TEST(TpuLinalgCallsFormTest, TupleResultsAsOlderExportsWrite) {
  const std::string text =
      R"(func.func @main(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>) {
  %0 = stablehlo.custom_call @LuDecomposition(%a) : (tensor<3x3xf32>) -> tuple<tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>>
  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>>) -> tensor<3x3xf32>
  %2 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>>) -> tensor<3xi32>
  %3 = stablehlo.get_tuple_element %0[2] : (tuple<tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>>) -> tensor<3xi32>
  return %1, %2, %3 : tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>
}
)";
  Mat<float> a(3, 3);
  std::iota(a.v.begin(), a.v.end(), 0.0f);
  auto r = RunMlir(text, {ToTensor(a)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<float>((*r)[0]), (std::vector<float>{6, 7, 8, 0, 1, 2, 0.5, 0.5, 0}));
  EXPECT_EQ(Read<int32_t>((*r)[1]), (std::vector<int32_t>{2, 2, 2}));
  EXPECT_EQ(Read<int32_t>((*r)[2]), (std::vector<int32_t>{2, 0, 1}));
}

TEST(TpuLinalgCallsFormTest, BadShapesAndConfigsAreVerifyErrors) {
  const ir::Type f32_3x3 = TypeOf(ElementType::kF32, {3, 3});
  Status s = VerifyMlir(CallProgram("Eigh", "backend_config = \"2,1,100,1e-6\"", {f32_3x3},
                                    {f32_3x3, TypeOf(ElementType::kF32, {3})}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("Eigh"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("must be 0 or 1"), std::string::npos) << s.ToString();

  s = VerifyMlir(CallProgram("ProductOfElementaryHouseholderReflectors", "",
                             {TypeOf(ElementType::kF32, {2, 3}), TypeOf(ElementType::kF32, {2})},
                             {TypeOf(ElementType::kF32, {2, 3})}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("m >= n >= k"), std::string::npos) << s.ToString();

  s = VerifyMlir(CallProgram("Qr", "", {f32_3x3}, {f32_3x3}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("gives results"), std::string::npos) << s.ToString();
}

TEST(TpuLinalgCallsFormTest, EighIsPricedAsJacobiSweeps) {
  auto module = frontend::ParseStableHlo(
      CallProgram("Eigh", "backend_config = \"1,1,100,1e-6\"", {TypeOf(ElementType::kF32, {8, 8})},
                  {TypeOf(ElementType::kF32, {8, 8}), TypeOf(ElementType::kF32, {8})}),
      "test.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation& op = *(*module)->functions().at(0)->entry().ops()[0];
  Work w = CustomCallRegistry::Lookup("Eigh")->work(op);
  EXPECT_EQ(w.flops, 4 * 9 * 8 * 8 * 8);  // 1 + log2(8) sweeps of 9 n^3
  EXPECT_NE(w.priced_as.find("Jacobi"), std::string::npos);
}

// The report says how the call was priced, and that it has values.
TEST(TpuLinalgCallsFormTest, TimingNotesThePricing) {
  auto module = frontend::ParseStableHlo(
      CallProgram("Qr", "", {TypeOf(ElementType::kF32, {6, 4})},
                  {TypeOf(ElementType::kF32, {6, 4}), TypeOf(ElementType::kF32, {4})}),
      "test.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto t = timing::TimeStatically(**module, "main", *hw::FindPreset("v5e"), {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->notes().size(), 1u);
  // 2 m n^2 - 2/3 n^3 = 192 - 42.67
  EXPECT_EQ(t->notes()[0],
            "custom-call 'Qr' at test.mlir:2:3 priced as Householder QR (geqrf): 149 FLOP");
}

}  // namespace
}  // namespace tpusim::ops::testing
