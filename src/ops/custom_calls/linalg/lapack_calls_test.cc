// jaxlib's CPU FFI targets, called as JAX's CPU exports call them, checked by
// the properties of their results on random and ill-conditioned inputs in
// all four element types.
#include <algorithm>

#include "ops/testing/lapack_test_util.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops::testing {
namespace {

using ir::ElementType;

template <typename T>
class LapackCallsTest : public ::testing::Test {
 protected:
  static std::string Target(const std::string& routine) {
    return std::string("lapack_") + kLetter<T> + routine + "_ffi";
  }
  static ir::Type Of(std::vector<int64_t> shape) { return TypeOf(kElementOf<T>, std::move(shape)); }
  static ir::Type RealOf(std::vector<int64_t> shape) {
    return TypeOf(ir::IsComplex(kElementOf<T>) ? ir::ComplexPartType(kElementOf<T>) : kElementOf<T>,
                  std::move(shape));
  }
  static ir::Type I32(std::vector<int64_t> shape) {
    return TypeOf(ElementType::kSI32, std::move(shape));
  }
  // Random and ill-conditioned m x n inputs.
  static std::vector<Mat<T>> Inputs(int64_t m, int64_t n) {
    return {Random<T>(m, n, 7), Graded<T>(m, n, 11)};
  }
  static std::vector<int32_t> Ints(const Tensor& t) { return Read<int32_t>(t); }
};

using Scalars = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(LapackCallsTest, Scalars);

TYPED_TEST(LapackCallsTest, GetrfGivesPivotedLu) {
  using T = TypeParam;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 5}, {6, 4}, {3, 5}}) {
    for (const Mat<T>& a : this->Inputs(m, n)) {
      const int64_t k = std::min(m, n);
      auto r = RunCall(this->Target("getrf"), "mhlo.backend_config = {}", {ToTensor(a)},
                       {this->Of({m, n}), this->I32({k}), this->I32({})});
      ASSERT_EQ(r.size(), 3u);
      EXPECT_EQ(this->Ints(r[2])[0], 0);
      Mat<T> lu = ToMat<T>(r[0], m, n);
      Mat<T> l(m, k), u(k, n);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < k; ++j) l(i, j) = i == j ? T(1) : i > j ? lu(i, j) : T(0);
      }
      u = Upper(lu.Block(0, k, 0, n));
      Mat<T> pa = a;  // LAPACK's 1-based row swaps, in order
      std::vector<int32_t> ipiv = this->Ints(r[1]);
      for (int64_t i = 0; i < k; ++i) {
        ASSERT_GE(ipiv[i], i + 1);
        ASSERT_LE(ipiv[i], m);
        for (int64_t j = 0; j < n; ++j) std::swap(pa(i, j), pa(ipiv[i] - 1, j));
      }
      ExpectClose(l * u, pa, a.Norm(), "P A = L U");
    }
  }
}

TYPED_TEST(LapackCallsTest, GetrfReportsASingularMatrixInInfo) {
  using T = TypeParam;
  Mat<T> a(3, 3);
  a(0, 0) = T(1);
  auto r = RunCall(this->Target("getrf"), "", {ToTensor(a)},
                   {this->Of({3, 3}), this->I32({3}), this->I32({})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(this->Ints(r[2])[0], 2);  // U(2, 2) is exactly zero
}

TYPED_TEST(LapackCallsTest, GeqrfAndOrgqrGiveOrthonormalQr) {
  using T = TypeParam;
  const int64_t m = 6, n = 4;
  for (const Mat<T>& a : this->Inputs(m, n)) {
    auto qr = RunCall(this->Target("geqrf"), "", {ToTensor(a)}, {this->Of({m, n}), this->Of({n})});
    ASSERT_EQ(qr.size(), 2u);
    const std::string orgqr = ir::IsComplex(kElementOf<T>) ? "ungqr" : "orgqr";
    auto q = RunCall(this->Target(orgqr), "", {qr[0], qr[1]}, {this->Of({m, n})});
    ASSERT_EQ(q.size(), 1u);
    Mat<T> qm = ToMat<T>(q[0], m, n);
    Mat<T> r = Upper(ToMat<T>(qr[0], m, n).Block(0, n, 0, n));
    ExpectClose(qm * r, a, a.Norm(), "Q R = A");
    ExpectClose(qm.H() * qm, Mat<T>::Identity(n), std::sqrt(double(n)), "Q^H Q = I");
    // The packed reflectors themselves make the same Q.
    Mat<T> full = Reflectors(ToMat<T>(qr[0], m, n), Read<T>(qr[1]), 0);
    ExpectClose(full.Block(0, m, 0, n), qm, std::sqrt(double(n)), "reflectors");
  }
}

TYPED_TEST(LapackCallsTest, SyevdGivesAscendingEigenpairs) {
  using T = TypeParam;
  const int64_t n = 6;
  using R = la::Real<T>;
  for (bool ill : {false, true}) {
    Mat<T> a = Hermitian<T>(n, 3, ill);
    const std::string routine = ir::IsComplex(kElementOf<T>) ? "heevd" : "syevd";
    for (char uplo : {'L', 'U'}) {
      Mat<T> one_triangle = a;  // the other triangle must not be read
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (uplo == 'L' ? j > i : j < i) one_triangle(i, j) = T(99);
        }
      }
      auto r = RunCall(
          this->Target(routine),
          "mhlo.backend_config = {mode = 86 : ui8, uplo = " + std::to_string(int(uplo)) + " : ui8}",
          {ToTensor(one_triangle)}, {this->Of({n, n}), this->RealOf({n}), this->I32({})});
      ASSERT_EQ(r.size(), 3u);
      EXPECT_EQ(this->Ints(r[2])[0], 0);
      ExpectEigendecomposition(a, ToMat<T>(r[0], n, n), Read<R>(r[1]), "syevd");
    }
  }
}

// gesdd (divide and conquer) and gesvd (QR iteration) alike.
TYPED_TEST(LapackCallsTest, GesddAndGesvdGiveSingularValueDecomposition) {
  using T = TypeParam;
  using R = la::Real<T>;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 3}, {3, 5}}) {
    const int64_t k = std::min(m, n);
    for (const Mat<T>& a : this->Inputs(m, n)) {
      for (auto [routine, mode] : {std::pair<const char*, char>{"gesdd", 'A'},
                                   {"gesdd", 'S'}, {"gesvd", 'A'}, {"gesvd", 'S'}}) {
        const int64_t uc = mode == 'A' ? m : k, vr = mode == 'A' ? n : k;
        auto r = RunCall(this->Target(routine),
                         "mhlo.backend_config = {mode = " + std::to_string(int(mode)) + " : ui8}",
                         {ToTensor(a)},
                         {this->Of({m, n}), this->RealOf({k}), this->Of({m, uc}), this->Of({vr, n}),
                          this->I32({})});
        ASSERT_EQ(r.size(), 5u);
        EXPECT_EQ(this->Ints(r[4])[0], 0);
        std::vector<R> s = Read<R>(r[1]);
        EXPECT_TRUE(std::is_sorted(s.rbegin(), s.rend()));
        EXPECT_GE(s.back(), 0);
        Mat<T> u = ToMat<T>(r[2], m, uc), vt = ToMat<T>(r[3], vr, n);
        Mat<T> us = u.Block(0, m, 0, k);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < k; ++j) us(i, j) *= T(s[j]);
        }
        ExpectClose(us * vt.Block(0, k, 0, n), a, a.Norm(), "U S V^H = A");
        ExpectClose(u.H() * u, Mat<T>::Identity(uc), std::sqrt(double(uc)), "U^H U = I");
        ExpectClose(vt * vt.H(), Mat<T>::Identity(vr), std::sqrt(double(vr)), "V^H V = I");
      }
    }
  }
}

TYPED_TEST(LapackCallsTest, ValuesAloneMatchTheFullDecompositions) {
  using T = TypeParam;
  using R = la::Real<T>;
  const int64_t m = 5, n = 3, k = 3;
  Mat<T> a = Random<T>(m, n, 41);
  auto full = RunCall(
      this->Target("gesdd"), "mhlo.backend_config = {mode = 65 : ui8}", {ToTensor(a)},
      {this->Of({m, n}), this->RealOf({k}), this->Of({m, m}), this->Of({n, n}), this->I32({})});
  auto values = RunCall(
      this->Target("gesdd"), "mhlo.backend_config = {mode = 78 : ui8}", {ToTensor(a)},
      {this->Of({m, n}), this->RealOf({k}), this->Of({m, k}), this->Of({k, n}), this->I32({})});
  ASSERT_EQ(full.size(), 5u);
  ASSERT_EQ(values.size(), 5u);
  Mat<R> s_full(1, k), s_values(1, k);
  s_full.v = Read<R>(full[1]);
  s_values.v = Read<R>(values[1]);
  ExpectClose(s_values, s_full, s_full.Norm(), "singular values");

  Mat<T> h = Hermitian<T>(4, 42, false);
  const std::string routine = ir::IsComplex(kElementOf<T>) ? "heevd" : "syevd";
  Mat<R> w[2];
  for (int i = 0; i < 2; ++i) {
    auto r = RunCall(this->Target(routine),
                     std::string("mhlo.backend_config = {mode = ") + (i ? "78" : "86") +
                         " : ui8, uplo = 76 : ui8}",
                     {ToTensor(h)}, {this->Of({4, 4}), this->RealOf({4}), this->I32({})});
    ASSERT_EQ(r.size(), 3u);
    w[i] = Mat<R>(1, 4);
    w[i].v = Read<R>(r[1]);
  }
  ExpectClose(w[1], w[0], w[0].Norm(), "eigenvalues");
}

TYPED_TEST(LapackCallsTest, PotrfGivesCholeskyFactor) {
  using T = TypeParam;
  const int64_t n = 6;
  for (bool ill : {false, true}) {
    Mat<T> a = Hermitian<T>(n, 5, ill);
    for (char uplo : {'L', 'U'}) {
      auto r = RunCall(this->Target("potrf"),
                       "mhlo.backend_config = {uplo = " + std::to_string(int(uplo)) + " : ui8}",
                       {ToTensor(a)}, {this->Of({n, n}), this->I32({})});
      ASSERT_EQ(r.size(), 2u);
      EXPECT_EQ(this->Ints(r[1])[0], 0);
      Mat<T> f = ToMat<T>(r[0], n, n);
      if (uplo == 'L') {
        Mat<T> l = Upper(f.H()).H();
        ExpectClose(l * l.H(), a, a.Norm(), "L L^H = A");
      } else {
        Mat<T> u = Upper(f);
        ExpectClose(u.H() * u, a, a.Norm(), "U^H U = A");
      }
    }
  }
  // Not positive definite: info names the failing minor.
  Mat<T> bad = Mat<T>::Identity(3);
  bad(1, 1) = T(-1);
  auto r = RunCall(this->Target("potrf"), "mhlo.backend_config = {uplo = 76 : ui8}",
                   {ToTensor(bad)}, {this->Of({3, 3}), this->I32({})});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(this->Ints(r[1])[0], 2);
}

TYPED_TEST(LapackCallsTest, GeesGivesSchurForm) {
  using T = TypeParam;
  const int64_t n = 5;
  const bool complex = ir::IsComplex(kElementOf<T>);
  for (const Mat<T>& a : this->Inputs(n, n)) {
    std::vector<ir::Type> results{this->Of({n, n}), this->Of({n, n}), this->Of({n})};
    if (!complex) results.push_back(this->Of({n}));
    results.push_back(this->I32({}));
    results.push_back(this->I32({}));
    auto r =
        RunCall(this->Target("gees"), "mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}",
                {ToTensor(a)}, results);
    ASSERT_EQ(r.size(), results.size());
    EXPECT_EQ(this->Ints(r.back())[0], 0);
    Mat<T> t = ToMat<T>(r[0], n, n), z = ToMat<T>(r[1], n, n);
    // Upper triangular, or quasi-triangular with 2x2 blocks for real types.
    ExpectClose(Upper(t, complex ? 0 : -1), t, 0, "T is (quasi-)triangular");
    ExpectClose(z * t * z.H(), a, a.Norm(), "Z T Z^H = A");
    ExpectClose(z.H() * z, Mat<T>::Identity(n), std::sqrt(double(n)), "Z^H Z = I");
  }
}

TYPED_TEST(LapackCallsTest, GehrdGivesHessenbergReduction) {
  using T = TypeParam;
  const int64_t n = 5;
  for (const Mat<T>& a : this->Inputs(n, n)) {
    auto r = RunCall(this->Target("gehrd"), "mhlo.backend_config = {high = 5 : i32, low = 1 : i32}",
                     {ToTensor(a)}, {this->Of({n, n}), this->Of({n - 1}), this->I32({})});
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(this->Ints(r[2])[0], 0);
    Mat<T> packed = ToMat<T>(r[0], n, n);
    Mat<T> q = Reflectors(packed, Read<T>(r[1]), 1);
    ExpectClose(q * Upper(packed, -1) * q.H(), a, a.Norm(), "Q H Q^H = A");
  }
}

TYPED_TEST(LapackCallsTest, SytrdGivesTridiagonalReduction) {
  using T = TypeParam;
  using R = la::Real<T>;
  const int64_t n = 5;
  const std::string routine = ir::IsComplex(kElementOf<T>) ? "hetrd" : "sytrd";
  for (bool ill : {false, true}) {
    Mat<T> a = Hermitian<T>(n, 9, ill);
    auto r =
        RunCall(this->Target(routine), "mhlo.backend_config = {uplo = 76 : ui8}", {ToTensor(a)},
                {this->Of({n, n}), this->RealOf({n}), this->RealOf({n - 1}), this->Of({n - 1}),
                 this->I32({})});
    ASSERT_EQ(r.size(), 5u);
    EXPECT_EQ(this->Ints(r[4])[0], 0);
    std::vector<R> d = Read<R>(r[1]), e = Read<R>(r[2]);
    Mat<T> tri(n, n);
    for (int64_t i = 0; i < n; ++i) tri(i, i) = T(d[i]);
    for (int64_t i = 0; i + 1 < n; ++i) tri(i + 1, i) = tri(i, i + 1) = T(e[i]);
    Mat<T> q = Reflectors(ToMat<T>(r[0], n, n), Read<T>(r[3]), 1);
    ExpectClose(q * tri * q.H(), a, a.Norm(), "Q T Q^H = A");
  }
}

TYPED_TEST(LapackCallsTest, GtsvSolvesTridiagonalSystems) {
  using T = TypeParam;
  const int64_t m = 6, nrhs = 2;
  std::mt19937 g(5);
  Mat<T> dl(1, m), d(1, m), du(1, m);
  for (int64_t i = 0; i < m; ++i) {
    dl(0, i) = i == 0 ? T(0) : RandomScalar<T>(g);
    du(0, i) = i == m - 1 ? T(0) : RandomScalar<T>(g);
    d(0, i) = RandomScalar<T>(g);
  }
  d(0, 2) = T(1e-7);  // a tiny pivot partial pivoting must step around
  Mat<T> b = Random<T>(m, nrhs, 8);
  auto r =
      RunCall(this->Target("gtsv"), "",
              {ToTensor(dl, {m}), ToTensor(d, {m}), ToTensor(du, {m}), ToTensor(b)},
              {this->Of({m}), this->Of({m}), this->Of({m}), this->Of({m, nrhs}), this->I32({})});
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(this->Ints(r[4])[0], 0);
  Mat<T> t(m, m);
  for (int64_t i = 0; i < m; ++i) {
    t(i, i) = d(0, i);
    if (i > 0) t(i, i - 1) = dl(0, i);
    if (i + 1 < m) t(i, i + 1) = du(0, i);
  }
  Mat<T> x = ToMat<T>(r[3], m, nrhs);
  ExpectClose(t * x, b, t.Norm() * x.Norm(), "T X = B");
}

TYPED_TEST(LapackCallsTest, TrsmSolvesTriangularSystems) {
  using T = TypeParam;
  const int64_t m = 4, n = 3;
  for (char side : {'L', 'R'}) {
    for (char uplo : {'L', 'U'}) {
      for (char trans : {'N', 'T', 'C'}) {
        const int64_t k = side == 'L' ? m : n;
        for (bool ill : {false, true}) {
          // Ill-conditioned: a graded triangle (condition ~1e6 / 1e12).
          Mat<T> a = ill ? Graded<T>(k, k, 23) : Random<T>(k, k, 21);
          for (int64_t i = 0; i < k; ++i) a(i, i) += ill ? a(i, i) : T(4);
          Mat<T> tri = uplo == 'U' ? Upper(a) : Upper(a.H()).H();
          Mat<T> op = trans == 'N' ? tri : trans == 'C' ? tri.H() : Upper(tri);
          if (trans == 'T') {  // the plain transpose
            for (int64_t i = 0; i < k; ++i) {
              for (int64_t j = 0; j < k; ++j) op(i, j) = tri(j, i);
            }
          }
          Mat<T> b = Random<T>(m, n, 22);
          const std::string attrs =
              "mhlo.backend_config = {diag = 78 : ui8, side = " + std::to_string(int(side)) +
              " : ui8, trans_x = " + std::to_string(int(trans)) +
              " : ui8, uplo = " + std::to_string(int(uplo)) + " : ui8}";
          // The older (a, b, alpha) form with alpha 2, and jax 0.5.3's (a, b).
          for (const char* prefix : {"blas_", "lapack_"}) {
            for (bool alpha : {true, false}) {
              std::vector<Tensor> in{ToTensor(a), ToTensor(b)};
              if (alpha) in.push_back(Make<T>(this->Of({}), {T(2)}));
              auto r = RunCall(std::string(prefix) + kLetter<T> + "trsm_ffi", attrs, in,
                               {this->Of({m, n})});
              ASSERT_EQ(r.size(), 1u);
              Mat<T> x = ToMat<T>(r[0], m, n);
              Mat<T> alpha_b = b;
              for (T& v : alpha_b.v) v *= T(alpha ? 2 : 1);
              ExpectClose(side == 'L' ? op * x : x * op, alpha_b, op.Norm() * x.Norm(),
                          std::string("op(A) X = alpha B, side ") + side + " uplo " + uplo +
                              " trans " + trans + (alpha ? ", alpha 2" : ", no alpha"));
            }
          }
        }
      }
    }
  }
}

TYPED_TEST(LapackCallsTest, GeevGivesEigenvectors) {
  using T = TypeParam;
  using C = std::complex<la::Real<T>>;
  const int64_t n = 4;
  const bool complex = ir::IsComplex(kElementOf<T>);
  const ElementType c = kElementOf<C>;
  Mat<T> a = Random<T>(n, n, 31);
  std::vector<ir::Type> results{this->Of({n})};
  if (!complex) results.push_back(this->Of({n}));
  results.push_back(TypeOf(c, {n, n}));
  results.push_back(TypeOf(c, {n, n}));
  results.push_back(this->I32({}));
  auto r = RunCall(this->Target("geev"),
                   "mhlo.backend_config = {compute_left = 86 : ui8, compute_right = 86 : ui8}",
                   {ToTensor(a)}, results);
  ASSERT_EQ(r.size(), results.size());
  const size_t v = complex ? 1 : 2;
  EXPECT_EQ(this->Ints(r[v + 2])[0], 0);
  Mat<C> ac(n, n), w(n, n);
  for (size_t i = 0; i < a.v.size(); ++i) ac.v[i] = C(a.v[i]);
  std::vector<T> w0 = Read<T>(r[0]);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (la::kIsComplex<T>) {
      w(i, i) = w0[i];
    } else {
      w(i, i) = C(w0[i], Read<T>(r[1])[i]);
    }
  }
  Mat<C> vl = ToMat<C>(r[v], n, n), vr = ToMat<C>(r[v + 1], n, n);
  ExpectClose(ac * vr, vr * w, ac.Norm(), "A VR = VR diag(w)");
  ExpectClose(vl.H() * ac, w * vl.H(), ac.Norm(), "VL^H A = diag(w) VL^H");
}

TYPED_TEST(LapackCallsTest, BatchesLoopOverLeadingDimensions) {
  using T = TypeParam;
  const int64_t n = 3;
  Mat<T> both(2 * n, n);
  Mat<T> a0 = Hermitian<T>(n, 1, false), a1 = Hermitian<T>(n, 2, false);
  std::copy(a0.v.begin(), a0.v.end(), both.v.begin());
  std::copy(a1.v.begin(), a1.v.end(), both.v.begin() + n * n);
  auto r = RunCall(this->Target("potrf"), "mhlo.backend_config = {uplo = 76 : ui8}",
                   {ToTensor(both, {2, n, n})}, {this->Of({2, n, n}), this->I32({2})});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(this->Ints(r[1]), (std::vector<int32_t>{0, 0}));
  for (int64_t b = 0; b < 2; ++b) {
    Mat<T> l = Upper(ToMat<T>(r[0], n, n, b * n * n).H()).H();
    ExpectClose(l * l.H(), b == 0 ? a0 : a1, a0.Norm(), "batch element");
  }
}

// ------------------------------------------------------------ errors and pricing

TEST(LapackCallsErrorsTest, WrongOperandsAndAttributesNameTheTarget) {
  const std::string getrf =
      CallProgram("lapack_sgetrf_ffi", "", {TypeOf(ElementType::kF64, {3, 3})},
                  {TypeOf(ElementType::kF64, {3, 3}), TypeOf(ElementType::kSI32, {3}),
                   TypeOf(ElementType::kSI32, {})});
  Status s = VerifyMlir(getrf);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("lapack_sgetrf_ffi"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("f32"), std::string::npos) << s.ToString();

  const std::string few_results =
      CallProgram("lapack_sgetrf_ffi", "", {TypeOf(ElementType::kF32, {3, 3})},
                  {TypeOf(ElementType::kF32, {3, 3})});
  s = VerifyMlir(few_results);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("gives results"), std::string::npos) << s.ToString();

  const std::string bad_uplo =
      CallProgram("lapack_spotrf_ffi", "mhlo.backend_config = {uplo = 88 : ui8}",
                  {TypeOf(ElementType::kF32, {2, 2})},
                  {TypeOf(ElementType::kF32, {2, 2}), TypeOf(ElementType::kSI32, {})});
  s = VerifyMlir(bad_uplo);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("'uplo' must be 'L' or 'U'"), std::string::npos) << s.ToString();

  const std::string ints =
      CallProgram("lapack_spotrf_ffi", "", {TypeOf(ElementType::kSI32, {2, 2})},
                  {TypeOf(ElementType::kSI32, {2, 2}), TypeOf(ElementType::kSI32, {})});
  s = VerifyMlir(ints);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("complex<f64>"), std::string::npos) << s.ToString();

  const std::string one_operand =
      CallProgram("lapack_strsm_ffi", "", {TypeOf(ElementType::kF32, {2, 2})},
                  {TypeOf(ElementType::kF32, {2, 2})});
  s = VerifyMlir(one_operand);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("takes 2 to 3 operands, got 1"), std::string::npos)
      << s.ToString();
}

// XLA's HLO text keeps a typed FFI call's attributes as a backend_config
// string holding the dictionary.
TEST(LapackCallsErrorsTest, ConfigAsDictionaryText) {
  Mat<double> a = Hermitian<double>(3, 4, false);
  auto r = RunCall("lapack_dpotrf_ffi", "backend_config = \"{uplo = 85 : ui8}\"", {ToTensor(a)},
                   {TypeOf(ElementType::kF64, {3, 3}), TypeOf(ElementType::kSI32, {})});
  ASSERT_EQ(r.size(), 2u);
  Mat<double> u = Upper(ToMat<double>(r[0], 3, 3));
  ExpectClose(u.H() * u, a, a.Norm(), "U^H U = A from the upper triangle");
  EXPECT_EQ(ToMat<double>(r[0], 3, 3)(1, 0), a(1, 0));  // the lower one untouched

  Status s = VerifyMlir(CallProgram(
      "lapack_dpotrf_ffi", "backend_config = \"uplo=U\"", {TypeOf(ElementType::kF64, {3, 3})},
      {TypeOf(ElementType::kF64, {3, 3}), TypeOf(ElementType::kSI32, {})}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("not an attribute dictionary"), std::string::npos) << s.ToString();
}

TEST(LapackCallsErrorsTest, NanInputsFlowThrough) {
  Mat<float> a(2, 2);
  a.v = {std::nanf(""), 1, 2, 3};
  auto r = RunCall("lapack_sgetrf_ffi", "", {ToTensor(a)},
                   {TypeOf(ElementType::kF32, {2, 2}), TypeOf(ElementType::kSI32, {2}),
                    TypeOf(ElementType::kSI32, {})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(std::isnan(Read<float>(r[0])[0]) || std::isnan(Read<float>(r[0])[3]));
}

TEST(LapackCallsWorkTest, PricedByFlopCount) {
  auto module = frontend::ParseStableHlo(
      CallProgram("lapack_dgetrf_ffi", "", {TypeOf(ElementType::kF64, {2, 64, 64})},
                  {TypeOf(ElementType::kF64, {2, 64, 64}), TypeOf(ElementType::kSI32, {2, 64}),
                   TypeOf(ElementType::kSI32, {2})}),
      "test.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation& op = *(*module)->functions().at(0)->entry().ops()[0];
  const CustomCallDef* def = CustomCallRegistry::Lookup("lapack_dgetrf_ffi");
  ASSERT_NE(def, nullptr);
  Work w = def->work(op);
  EXPECT_NEAR(static_cast<double>(w.flops), 2 * (2.0 / 3 * 64 * 64 * 64), 2);  // 2/3 n^3 each
  EXPECT_EQ(w.priced_as, "LAPACK getrf");
  EXPECT_EQ(w.bytes_read(), 2 * 64 * 64 * 8);
  EXPECT_GT(w.vector_ops[static_cast<int>(VectorClass::kMultiply)], 0);
  EXPECT_TRUE(w.matmuls.empty());

  // A call that fails its signature (unverified) is priced by its traffic.
  auto bad = frontend::ParseStableHlo(
      "func.func @main() -> tensor<i32> {\n  %0 = stablehlo.custom_call @lapack_dgetrf_ffi() : "
      "() -> tensor<i32>\n  return %0 : tensor<i32>\n}\n",
      "test.mlir");
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  Work traffic = def->work(*(*bad)->functions().at(0)->entry().ops()[0]);
  EXPECT_EQ(traffic.flops, 0);
  EXPECT_EQ(traffic.bytes_written(), 4);
}

}  // namespace
}  // namespace tpusim::ops::testing
