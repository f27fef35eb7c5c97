// jaxlib's GPU targets, called as JAX's CUDA and ROCm exports call them,
// checked by the properties of their results on random and ill-conditioned
// batched inputs in all four element types, under both platforms' names.
#include <algorithm>
#include <numeric>

#include "ops/testing/lapack_test_util.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops::testing {
namespace {

using ir::ElementType;

constexpr int64_t kBatch = 2;

template <typename T>
class GpuSolverCallsTest : public ::testing::Test {
 protected:
  using R = la::Real<T>;
  // Both platforms' names of a target.
  static std::vector<std::string> Targets(const std::string& suffix) {
    return {"cu" + suffix, "hip" + suffix};
  }
  static ir::Type Of(std::vector<int64_t> shape) { return TypeOf(kElementOf<T>, std::move(shape)); }
  static ir::Type RealOf(std::vector<int64_t> shape) {
    return TypeOf(kElementOf<R>, std::move(shape));
  }
  static ir::Type I32(std::vector<int64_t> shape) {
    return TypeOf(ElementType::kSI32, std::move(shape));
  }
  // A batch of kBatch m x n inputs: random, then ill-conditioned.
  static std::vector<Mat<T>> Inputs(int64_t m, int64_t n) {
    return {Random<T>(m, n, 7), Graded<T>(m, n, 11)};
  }
  static Tensor Stack(const std::vector<Mat<T>>& ms) {
    Mat<T> all(0, ms[0].cols);
    for (const Mat<T>& m : ms) all.v.insert(all.v.end(), m.v.begin(), m.v.end());
    return ToTensor(all, {static_cast<int64_t>(ms.size()), ms[0].rows, ms[0].cols});
  }
  // Matrix b of a batched result.
  static Mat<T> At(const Tensor& t, int64_t b, int64_t rows, int64_t cols) {
    return ToMat<T>(t, rows, cols, b * rows * cols);
  }
  static std::vector<R> RealsAt(const Tensor& t, int64_t b, int64_t n) {
    std::vector<R> all = Read<R>(t);
    return {all.begin() + b * n, all.begin() + (b + 1) * n};
  }
  static std::string Bools(const std::vector<std::pair<std::string, bool>>& attrs) {
    std::string s;
    for (const auto& [k, v] : attrs)
      s += (s.empty() ? "" : ", ") + k + " = " + (v ? "true" : "false");
    return "mhlo.backend_config = {" + s + "}";
  }
};

using Scalars = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuSolverCallsTest, Scalars);

// a with the entries outside the `lower` (or upper) triangle set to `mark`.
template <typename T>
Mat<T> OneTriangle(const Mat<T>& a, bool lower, T mark) {
  Mat<T> m = a;
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) {
      if (lower ? j > i : j < i) m(i, j) = mark;
    }
  }
  return m;
}

// u diag(s) vt, u's first k columns and vt's first k rows.
template <typename T>
Mat<T> Product(const Mat<T>& u, const std::vector<la::Real<T>>& s, const Mat<T>& vt) {
  const int64_t k = static_cast<int64_t>(s.size());
  Mat<T> us = u.Block(0, u.rows, 0, k);
  for (int64_t i = 0; i < us.rows; ++i) {
    for (int64_t j = 0; j < k; ++j) us(i, j) *= T(s[j]);
  }
  return us * vt.Block(0, k, 0, vt.cols);
}

TYPED_TEST(GpuSolverCallsTest, GetrfGivesLuWithOneBasedPivots) {
  using T = TypeParam;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 5}, {6, 4}, {3, 5}}) {
    const int64_t k = std::min(m, n);
    const std::vector<Mat<T>> a = this->Inputs(m, n);
    for (const std::string& target : this->Targets("solver_getrf_ffi")) {
      auto r = RunCall(target, "mhlo.backend_config = {}", {this->Stack(a)},
                       {this->Of({kBatch, m, n}), this->I32({kBatch, k}), this->I32({kBatch})});
      ASSERT_EQ(r.size(), 3u);
      EXPECT_EQ(Read<int32_t>(r[2]), (std::vector<int32_t>{0, 0}));
      const std::vector<int32_t> ipiv = Read<int32_t>(r[1]);
      for (int64_t b = 0; b < kBatch; ++b) {
        Mat<T> lu = this->At(r[0], b, m, n), l(m, k), pa = a[b];
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < k; ++j) l(i, j) = i == j ? T(1) : i > j ? lu(i, j) : T(0);
        }
        for (int64_t i = 0; i < k; ++i) {  // 1-based row swaps, in order
          const int32_t p = ipiv[b * k + i];
          ASSERT_GE(p, i + 1);
          ASSERT_LE(p, m);
          for (int64_t j = 0; j < n; ++j) std::swap(pa(i, j), pa(p - 1, j));
        }
        ExpectClose(l * Upper(lu.Block(0, k, 0, n)), pa, a[b].Norm(), target + ": P A = L U");
      }
    }
  }
  Mat<T> singular(3, 3);
  singular(0, 0) = T(1);
  auto r = RunCall("hipsolver_getrf_ffi", "mhlo.backend_config = {}", {ToTensor(singular)},
                   {this->Of({3, 3}), this->I32({3}), this->I32({})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(Read<int32_t>(r[2])[0], 2);  // U(2, 2) is exactly zero
}

TYPED_TEST(GpuSolverCallsTest, GeqrfAndOrgqrGiveOrthonormalQr) {
  using T = TypeParam;
  const int64_t m = 6, n = 4;
  const std::vector<Mat<T>> a = this->Inputs(m, n);
  for (const std::string platform : {"cu", "hip"}) {
    auto qr = RunCall(platform + "solver_geqrf_ffi", "mhlo.backend_config = {}", {this->Stack(a)},
                      {this->Of({kBatch, m, n}), this->Of({kBatch, n})});
    ASSERT_EQ(qr.size(), 2u);
    auto q = RunCall(platform + "solver_orgqr_ffi", "mhlo.backend_config = {}", {qr[0], qr[1]},
                     {this->Of({kBatch, m, n})});
    ASSERT_EQ(q.size(), 1u);
    for (int64_t b = 0; b < kBatch; ++b) {
      Mat<T> qb = this->At(q[0], b, m, n);
      Mat<T> r = Upper(this->At(qr[0], b, m, n).Block(0, n, 0, n));
      ExpectClose(qb * r, a[b], a[b].Norm(), platform + ": Q R = A");
      ExpectClose(qb.H() * qb, Mat<T>::Identity(n), std::sqrt(double(n)), "Q^H Q = I");
    }
  }
}

TYPED_TEST(GpuSolverCallsTest, PotrfFactorsOneTriangleAndKeepsTheOther) {
  using T = TypeParam;
  const int64_t n = 6;
  const std::vector<Mat<T>> a = {Hermitian<T>(n, 5, false), Hermitian<T>(n, 5, true)};
  for (bool lower : {true, false}) {
    // The other triangle is not read, and comes back as given.
    const std::vector<Mat<T>> in = {OneTriangle(a[0], lower, T(99)),
                                    OneTriangle(a[1], lower, T(99))};
    for (const std::string& target : this->Targets("solver_potrf_ffi")) {
      auto r = RunCall(target, this->Bools({{"lower", lower}}), {this->Stack(in)},
                       {this->Of({kBatch, n, n}), this->I32({kBatch})});
      ASSERT_EQ(r.size(), 2u);
      EXPECT_EQ(Read<int32_t>(r[1]), (std::vector<int32_t>{0, 0}));
      for (int64_t b = 0; b < kBatch; ++b) {
        Mat<T> f = this->At(r[0], b, n, n);
        Mat<T> l = lower ? Upper(f.H()).H() : Upper(f).H();
        ExpectClose(l * l.H(), a[b], a[b].Norm(), target + ": L L^H = A");
        ExpectClose(OneTriangle(f, lower, T(99)), f, 0, "the other triangle as given");
      }
    }
  }
  Mat<T> bad = Mat<T>::Identity(3);
  bad(1, 1) = T(-1);
  auto r = RunCall("cusolver_potrf_ffi", this->Bools({{"lower", true}}), {ToTensor(bad)},
                   {this->Of({3, 3}), this->I32({})});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Read<int32_t>(r[1])[0], 2);  // not positive definite at the second minor
}

TYPED_TEST(GpuSolverCallsTest, SyevdGivesAscendingEigenpairsForEveryAlgorithm) {
  using T = TypeParam;
  const int64_t n = 6;
  const std::vector<Mat<T>> a = {Hermitian<T>(n, 3, false), Hermitian<T>(n, 3, true)};
  for (bool lower : {true, false}) {
    const std::vector<Mat<T>> in = {OneTriangle(a[0], lower, T(-5)),
                                    OneTriangle(a[1], lower, T(-5))};
    for (int algorithm : {0, 1, 2}) {
      const std::string attrs = "mhlo.backend_config = {algorithm = " + std::to_string(algorithm) +
                                " : ui8, lower = " + (lower ? "true" : "false") + "}";
      for (const std::string& target : this->Targets("solver_syevd_ffi")) {
        auto r =
            RunCall(target, attrs, {this->Stack(in)},
                    {this->Of({kBatch, n, n}), this->RealOf({kBatch, n}), this->I32({kBatch})});
        ASSERT_EQ(r.size(), 3u);
        EXPECT_EQ(Read<int32_t>(r[2]), (std::vector<int32_t>{0, 0}));
        for (int64_t b = 0; b < kBatch; ++b) {
          ExpectEigendecomposition(a[b], this->At(r[0], b, n, n), this->RealsAt(r[1], b, n),
                                   target);
        }
      }
    }
  }
}

// JAX sets transposed when rows < cols: slot 2 then holds V^H and slot 3 U.
TYPED_TEST(GpuSolverCallsTest, GesvdGivesSvdIncludingTransposed) {
  using T = TypeParam;
  using R = la::Real<T>;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 3}, {3, 5}, {4, 4}}) {
    const int64_t k = std::min(m, n);
    const bool transposed = m < n;
    const std::vector<Mat<T>> a = this->Inputs(m, n);
    for (bool full : {true, false}) {
      const int64_t uc = full ? m : k, vr = full ? n : k;
      const ir::Type u = this->Of({kBatch, m, uc}), vt = this->Of({kBatch, vr, n});
      for (const std::string& target : this->Targets("solver_gesvd_ffi")) {
        auto r = RunCall(
            target,
            this->Bools(
                {{"compute_uv", true}, {"full_matrices", full}, {"transposed", transposed}}),
            {this->Stack(a)},
            {this->Of({kBatch, m, n}), this->RealOf({kBatch, k}), transposed ? vt : u,
             transposed ? u : vt, this->I32({kBatch})});
        ASSERT_EQ(r.size(), 5u);
        EXPECT_EQ(Read<int32_t>(r[4]), (std::vector<int32_t>{0, 0}));
        for (int64_t b = 0; b < kBatch; ++b) {
          std::vector<R> s = this->RealsAt(r[1], b, k);
          EXPECT_TRUE(std::is_sorted(s.rbegin(), s.rend()));
          Mat<T> ub = this->At(r[transposed ? 3 : 2], b, m, uc);
          Mat<T> vtb = this->At(r[transposed ? 2 : 3], b, vr, n);
          ExpectClose(Product(ub, s, vtb), a[b], a[b].Norm(), target + ": U S V^H = A");
          ExpectClose(ub.H() * ub, Mat<T>::Identity(uc), std::sqrt(double(uc)), "U^H U = I");
          ExpectClose(vtb * vtb.H(), Mat<T>::Identity(vr), std::sqrt(double(vr)), "V^H V = I");
        }
      }
    }
    // Without U and V, their slots are rank-0 placeholders.
    auto values = RunCall(
        "cusolver_gesvd_ffi",
        this->Bools({{"compute_uv", false}, {"full_matrices", false}, {"transposed", transposed}}),
        {this->Stack(a)},
        {this->Of({kBatch, m, n}), this->RealOf({kBatch, k}), this->Of({}), this->Of({}),
         this->I32({kBatch})});
    ASSERT_EQ(values.size(), 5u);
    Mat<R> s(1, kBatch * k), s_ref(1, kBatch * k);
    s.v = Read<R>(values[1]);
    for (int64_t b = 0; b < kBatch; ++b) {
      Mat<T> u(m, m), vt(n, n), copy = a[b];
      la::Gesdd<T>('A', m, n, copy.v.data(), s_ref.v.data() + b * k, u.v.data(), m, vt.v.data());
    }
    ExpectClose(s, s_ref, s_ref.Norm(), "singular values alone");
  }
}

// gesvdj and gesvdp give V itself and always allocate u and v; ROCm's
// gesdd gives V^H.
TYPED_TEST(GpuSolverCallsTest, JacobiPolarAndDivideAndConquerSvds) {
  using T = TypeParam;
  using R = la::Real<T>;
  const std::vector<std::string> targets = {"cusolver_gesvdj_ffi", "hipsolver_gesvdj_ffi",
                                            "cusolver_gesvdp_ffi", "hipsolver_gesdd_ffi"};
  for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 3}, {3, 5}}) {
    const int64_t k = std::min(m, n);
    const std::vector<Mat<T>> a = this->Inputs(m, n);
    for (bool full : {true, false}) {
      const int64_t uc = full ? m : k, vc = full ? n : k;
      for (const std::string& target : targets) {
        const bool gives_v = target.find("gesdd") == std::string::npos;
        std::vector<std::pair<std::string, bool>> attrs = {{"compute_uv", true},
                                                           {"full_matrices", full}};
        if (!gives_v) attrs.push_back({"transposed", false});
        auto r = RunCall(
            target, this->Bools(attrs), {this->Stack(a)},
            {this->Of({kBatch, m, n}), this->RealOf({kBatch, k}), this->Of({kBatch, m, uc}),
             gives_v ? this->Of({kBatch, n, vc}) : this->Of({kBatch, vc, n}), this->I32({kBatch})});
        ASSERT_EQ(r.size(), 5u);
        EXPECT_EQ(Read<int32_t>(r[4]), (std::vector<int32_t>{0, 0}));
        for (int64_t b = 0; b < kBatch; ++b) {
          std::vector<R> s = this->RealsAt(r[1], b, k);
          EXPECT_TRUE(std::is_sorted(s.rbegin(), s.rend()));
          Mat<T> u = this->At(r[2], b, m, uc);
          Mat<T> vt = gives_v ? this->At(r[3], b, n, vc).H() : this->At(r[3], b, vc, n);
          ExpectClose(Product(u, s, vt), a[b], a[b].Norm(), target + ": U S V^H = A");
          ExpectClose(vt * vt.H(), Mat<T>::Identity(vc), std::sqrt(double(vc)), "V^H V = I");
        }
      }
    }
  }
  // Without vectors, gesvdj still takes the u and v buffers.
  auto r = RunCall(
      "cusolver_gesvdj_ffi", this->Bools({{"compute_uv", false}, {"full_matrices", true}}),
      {ToTensor(Random<T>(4, 3, 2))},
      {this->Of({4, 3}), this->RealOf({3}), this->Of({4, 4}), this->Of({3, 3}), this->I32({})});
  ASSERT_EQ(r.size(), 5u);
  EXPECT_GT(Read<R>(r[1])[0], 0);
}

TYPED_TEST(GpuSolverCallsTest, SytrdGivesSimilarTridiagonal) {
  using T = TypeParam;
  using R = la::Real<T>;
  const int64_t n = 5;
  const std::vector<Mat<T>> a = {Hermitian<T>(n, 9, false), Hermitian<T>(n, 9, true)};
  for (bool lower : {true, false}) {
    for (const std::string& target : this->Targets("solver_sytrd_ffi")) {
      auto r =
          RunCall(target, this->Bools({{"lower", lower}}), {this->Stack(a)},
                  {this->Of({kBatch, n, n}), this->RealOf({kBatch, n}),
                   this->RealOf({kBatch, n - 1}), this->Of({kBatch, n - 1}), this->I32({kBatch})});
      ASSERT_EQ(r.size(), 5u);
      EXPECT_EQ(Read<int32_t>(r[4]), (std::vector<int32_t>{0, 0}));
      for (int64_t b = 0; b < kBatch; ++b) {
        std::vector<R> d = this->RealsAt(r[1], b, n), e = this->RealsAt(r[2], b, n - 1);
        Mat<T> tri(n, n);
        for (int64_t i = 0; i < n; ++i) tri(i, i) = T(d[i]);
        for (int64_t i = 0; i + 1 < n; ++i) tri(i + 1, i) = tri(i, i + 1) = T(e[i]);
        if (lower) {  // the reflectors below the subdiagonal make Q
          const std::vector<T> taus = Read<T>(r[3]);
          Mat<T> q = Reflectors(this->At(r[0], b, n, n),
                                {taus.begin() + b * (n - 1), taus.begin() + (b + 1) * (n - 1)}, 1);
          ExpectClose(q * tri * q.H(), a[b], a[b].Norm(), target + ": Q T Q^H = A");
        }
        // Either triangle: T is similar to A, so their eigenvalues agree.
        Mat<R> wt(1, n), wa(1, n);
        Mat<T> t = tri, copy = a[b];
        la::Syevd<T>('N', 'L', n, t.v.data(), wt.v.data());
        la::Syevd<T>('N', 'L', n, copy.v.data(), wa.v.data());
        ExpectClose(wt, wa, wa.Norm(), target + ": eigenvalues of T");
      }
    }
  }
}

TYPED_TEST(GpuSolverCallsTest, Gtsv2SolvesTridiagonalSystems) {
  using T = TypeParam;
  const int64_t m = 6;
  std::mt19937 g(5);
  Mat<T> dl(kBatch, m), d(kBatch, m), du(kBatch, m);
  for (T& x : dl.v) x = RandomScalar<T>(g);
  for (T& x : d.v) x = RandomScalar<T>(g);
  for (T& x : du.v) x = RandomScalar<T>(g);
  d(0, 2) = T(1e-7);  // a tiny pivot partial pivoting must step around
  for (int64_t nrhs : {1, 2}) {
    const std::vector<Mat<T>> b = {Random<T>(m, nrhs, 8), Random<T>(m, nrhs, 9)};
    for (const std::string& target : this->Targets("sparse_gtsv2_ffi")) {
      auto r = RunCall(target, "mhlo.backend_config = {}",
                       {ToTensor(dl), ToTensor(d), ToTensor(du), this->Stack(b)},
                       {this->Of({kBatch, m, nrhs})});
      ASSERT_EQ(r.size(), 1u);
      for (int64_t k = 0; k < kBatch; ++k) {
        Mat<T> t(m, m);  // dl[0] and du[m-1] are outside the matrix
        for (int64_t i = 0; i < m; ++i) {
          t(i, i) = d(k, i);
          if (i > 0) t(i, i - 1) = dl(k, i);
          if (i + 1 < m) t(i, i + 1) = du(k, i);
        }
        Mat<T> x = this->At(r[0], k, m, nrhs);
        ExpectClose(t * x, b[k], t.Norm() * x.Norm(), target + ": T X = B");
      }
    }
  }
  // Singular: no info result, the solution is NaN.
  Mat<T> zeros(1, 3);
  auto r = RunCall("cusparse_gtsv2_ffi", "",
                   {ToTensor(zeros, {3}), ToTensor(zeros, {3}), ToTensor(zeros, {3}),
                    ToTensor(Random<T>(3, 1, 4))},
                   {this->Of({3, 1})});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(std::isnan(std::abs(Read<T>(r[0])[0])));
}

TYPED_TEST(GpuSolverCallsTest, OrmqrAppliesQFromEitherSide) {
  using T = TypeParam;
  const int64_t m = 5, n = 3, k = 3;
  const std::vector<Mat<T>> a = this->Inputs(m, k);
  auto qr = RunCall("cusolver_geqrf_ffi", "", {this->Stack(a)},
                    {this->Of({kBatch, m, k}), this->Of({kBatch, k})});
  ASSERT_EQ(qr.size(), 2u);
  const std::vector<T> taus = Read<T>(qr[1]);
  for (bool left : {true, false}) {
    for (bool transpose : {false, true}) {
      const int64_t rows = left ? m : n, cols = left ? n : m;
      const std::vector<Mat<T>> c = {Random<T>(rows, cols, 3), Random<T>(rows, cols, 4)};
      for (const std::string& target : this->Targets("solver_ormqr_ffi")) {
        auto r = RunCall(target, this->Bools({{"left", left}, {"transpose", transpose}}),
                         {qr[0], qr[1], this->Stack(c)}, {this->Of({kBatch, rows, cols})});
        ASSERT_EQ(r.size(), 1u);
        for (int64_t b = 0; b < kBatch; ++b) {
          const std::vector<T> tb(taus.begin() + b * k, taus.begin() + (b + 1) * k);
          Mat<T> q = Reflectors(this->At(qr[0], b, m, k), tb, 0);
          if (transpose) q = q.H();
          ExpectClose(this->At(r[0], b, rows, cols), left ? q * c[b] : c[b] * q, c[b].Norm(),
                      target + (left ? ": op(Q) C" : ": C op(Q)"));
        }
      }
    }
  }
}

TYPED_TEST(GpuSolverCallsTest, GeevGivesRightEigenvectors) {
  using T = TypeParam;
  using C = std::complex<la::Real<T>>;
  const int64_t n = 4;
  const std::vector<Mat<T>> a = this->Inputs(n, n);
  auto r = RunCall("cusolver_geev_ffi", this->Bools({{"left", false}, {"right", true}}),
                   {this->Stack(a)},
                   {this->Of({kBatch, n, n}), TypeOf(kElementOf<C>, {kBatch, n}),
                    this->Of({kBatch, n, n}), this->Of({kBatch, n, n}), this->I32({kBatch})});
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(Read<int32_t>(r[4]), (std::vector<int32_t>{0, 0}));
  const std::vector<C> w = Read<C>(r[1]);
  for (int64_t b = 0; b < kBatch; ++b) {
    Mat<T> packed = this->At(r[3], b, n, n);
    Mat<C> v(n, n), ac(n, n), wd(n, n);
    for (int64_t j = 0; j < n; ++j) {  // real types: a pair j, j+1 is (Re, Im) of v_j
      const C wj = w[b * n + j];
      const bool pair = !la::kIsComplex<T> && wj.imag() > 0;
      for (int64_t i = 0; i < n; ++i) {
        v(i, j) = C(packed(i, j)) + (pair ? C(0, 1) * C(packed(i, j + 1)) : C(0));
        if (pair) v(i, j + 1) = std::conj(v(i, j));
      }
      wd(j, j) = wj;
      if (pair) {
        wd(j + 1, j + 1) = w[b * n + j + 1];
        ++j;
      }
    }
    for (size_t i = 0; i < ac.v.size(); ++i) ac.v[i] = C(a[b].v[i]);
    ExpectClose(ac * v, v * wd, ac.Norm(), "A V = V diag(w)");
  }
}

// ------------------------------------------------------------ jaxlib's kernels

// JAX's back-compat case: iota(24) as 2x3x4 pivots with P = 8; pivots >= 8
// are skipped.
TEST(GpuKernelCallsTest, LuPivotsToPermutationSkipsOutOfRangePivots) {
  std::vector<int32_t> pivots(24);
  std::iota(pivots.begin(), pivots.end(), 0);
  const Tensor in = Make<int32_t>(TypeOf(ElementType::kSI32, {2, 3, 4}), pivots);
  // Only pivots [4, 5, 6, 7] (batch element (0, 1)) are in range.
  std::vector<int32_t> expect;
  for (int row = 0; row < 6; ++row) {
    for (int32_t i = 0; i < 8; ++i) expect.push_back(row == 1 ? (i + 4) % 8 : i);
  }
  for (const char* attrs :
       {"mhlo.backend_config = {}", "mhlo.backend_config = {permutation_size = 8 : i32}"}) {
    for (const char* target : {"cu_lu_pivots_to_permutation", "hip_lu_pivots_to_permutation"}) {
      auto r = RunCall(target, attrs, {in}, {TypeOf(ElementType::kSI32, {2, 3, 8})});
      ASSERT_EQ(r.size(), 1u);
      EXPECT_EQ(Read<int32_t>(r[0]), expect) << target << " " << attrs;
    }
  }
}

TEST(GpuKernelCallsTest, LuPivotsFollowTheSwapsInOrder) {
  const Tensor in = Make<int32_t>(TypeOf(ElementType::kSI32, {3}), {2, 2, 2});
  auto r = RunCall("cu_lu_pivots_to_permutation", "", {in}, {TypeOf(ElementType::kSI32, {3})});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Read<int32_t>(r[0]), (std::vector<int32_t>{2, 0, 1}));
}

// Random123's known-answer vectors for threefry2x32_20.
TEST(GpuKernelCallsTest, Threefry2x32MatchesKnownAnswers) {
  const ir::Type u32 = TypeOf(ElementType::kUI32, {3});
  const Tensor k0 = Make<uint32_t>(u32, {0x13198a2e, 0, 0xffffffff});
  const Tensor k1 = Make<uint32_t>(u32, {0x03707344, 0, 0xffffffff});
  const Tensor x0 = Make<uint32_t>(u32, {0x243f6a88, 0, 0xffffffff});
  const Tensor x1 = Make<uint32_t>(u32, {0x85a308d3, 0, 0xffffffff});
  for (const char* target : {"cu_threefry2x32_ffi", "hip_threefry2x32_ffi"}) {
    auto r = RunCall(target, "mhlo.backend_config = {}", {k0, k1, x0, x1}, {u32, u32});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(Read<uint32_t>(r[0]), (std::vector<uint32_t>{0xc4923a9c, 0x6b200159, 0x1cb996fc}));
    EXPECT_EQ(Read<uint32_t>(r[1]), (std::vector<uint32_t>{0x483df7a0, 0x99ba4efe, 0xbb002be7}));
  }
}

// ------------------------------------------------------------ legacy descriptors

// The descriptor's bytes as MLIR writes a string attribute: \XX escapes.
std::string Escaped(const std::vector<int32_t>& fields) {
  std::string s;
  char hex[4];
  for (int32_t f : fields) {
    for (int i = 0; i < 4; ++i) {
      std::snprintf(hex, sizeof hex, "\\%02X", (static_cast<uint32_t>(f) >> (8 * i)) & 0xff);
      s += hex;
    }
  }
  return s;
}

TEST(GpuLegacyCallsTest, StringAttributesHoldRawBytes) {
  auto module = frontend::ParseStableHlo(
      CallProgram("hipsolver_syevj", R"(backend_config = "\00\00\00\00z\00\00\00\01\00\00\00")",
                  {TypeOf(ElementType::kF32, {2, 2})}, {TypeOf(ElementType::kF32, {2, 2})}),
      "test.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation& op = *(*module)->functions().at(0)->entry().ops()[0];
  EXPECT_EQ(op.attr("backend_config").str(), std::string("\0\0\0\0z\0\0\0\1\0\0\0", 12));
}

TEST(GpuLegacyCallsTest, SyevdAndSyevjReadTheTriangleFromTheDescriptor) {
  const int64_t n = 5;
  const Mat<double> a = Hermitian<double>(n, 6, false);
  struct Case {
    std::string target;
    int32_t uplo;
    bool lower, tuple;
  };
  for (const Case& c : {Case{"cusolver_syevd", 0, true, true},
                        {"cusolver_syevj", 1, false, false},
                        Case{"hipsolver_syevd", 122, true, false},
                        {"hipsolver_syevj", 121, false, true}}) {
    const std::string config =
        "api_version = 2 : i32, backend_config = \"" + Escaped({1, c.uplo, 1, n, 7}) + "\"";
    const std::string types = "tensor<5x5xf64>, tensor<5xf64>, tensor<i32>, tensor<7xf64>";
    const std::string results = c.tuple ? "tuple<" + types + ">" : "(" + types + ")";
    std::string text = "func.func @main(%a: tensor<5x5xf64>) -> (" + types + ") {\n";
    if (c.tuple) {
      text += "  %t = stablehlo.custom_call @" + c.target + "(%a) {" + config +
              "} : (tensor<5x5xf64>) -> " + results + "\n";
      for (int i = 0; i < 4; ++i) {
        text += "  %r" + std::to_string(i) + " = stablehlo.get_tuple_element %t[" +
                std::to_string(i) + "] : (" + results + ") -> " +
                std::vector<std::string>{"tensor<5x5xf64>", "tensor<5xf64>", "tensor<i32>",
                                         "tensor<7xf64>"}[i] +
                "\n";
      }
      text += "  return %r0, %r1, %r2, %r3 : " + types + "\n}\n";
    } else {
      text += "  %r:4 = stablehlo.custom_call @" + c.target + "(%a) {" + config +
              "} : (tensor<5x5xf64>) -> " + results +
              "\n  return %r#0, %r#1, %r#2, %r#3 : " + types + "\n}\n";
    }
    auto r = RunMlir(text, {ToTensor(OneTriangle(a, c.lower, 42.0))});
    ASSERT_TRUE(r.ok()) << c.target << ": " << r.status().ToString() << "\n" << text;
    ASSERT_EQ(r->size(), 4u);
    Mat<double> v = ToMat<double>((*r)[0], n, n);
    std::vector<double> w = Read<double>((*r)[1]);
    Mat<double> vw = v;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) vw(i, j) *= w[j];
    }
    ExpectClose(vw * v.H(), a, a.Norm(), c.target + ": V diag(w) V^T = A");
    EXPECT_EQ(Read<int32_t>((*r)[2])[0], 0);
    EXPECT_EQ(Read<double>((*r)[3]), std::vector<double>(7, 0.0)) << "workspace";
  }
}

TEST(GpuLegacyCallsTest, BadDescriptorsAreOneLineErrors) {
  const ir::Type a = TypeOf(ElementType::kF32, {4, 4});
  const std::vector<ir::Type> results = {a, TypeOf(ElementType::kF32, {4}),
                                         TypeOf(ElementType::kSI32, {}),
                                         TypeOf(ElementType::kF32, {9})};
  auto error = [&](const std::string& target, const std::string& bytes,
                   std::vector<ir::Type> operands) {
    Status s =
        VerifyMlir(CallProgram(target, "backend_config = \"" + bytes + "\"", operands, results));
    EXPECT_FALSE(s.ok()) << target;
    EXPECT_NE(s.ToString().find(target), std::string::npos) << s.ToString();
    EXPECT_EQ(s.ToString().find('\n'), std::string::npos) << s.ToString();
    return s.ToString();
  };
  EXPECT_NE(error("cusolver_syevd", "\\00\\00", {a}).find("20 bytes"), std::string::npos);
  EXPECT_NE(error("cusolver_syevd", Escaped({0, 0, -1, 4, 9}), {a, TypeOf(ElementType::kSI32, {})})
                .find("dynamic-batch"),
            std::string::npos);
  EXPECT_NE(error("hipsolver_syevd", Escaped({0, 0, 1, 4, 9}), {a}).find("neither lower (122)"),
            std::string::npos);
  EXPECT_NE(error("cusolver_syevj", Escaped({1, 0, 1, 4, 9}), {a}).find("does not describe"),
            std::string::npos);
  EXPECT_NE(error("cusolver_syevj", Escaped({0, 0, 1, 3, 9}), {a}).find("does not describe"),
            std::string::npos);
}

// ------------------------------------------------------------ errors and pricing

TEST(GpuSolverCallsErrorsTest, WrongOperandsAndAttributesNameTheTarget) {
  const ir::Type f32 = TypeOf(ElementType::kF32, {3, 3}), i32 = TypeOf(ElementType::kSI32, {});
  const ir::Type u32 = TypeOf(ElementType::kUI32, {3});
  struct Case {
    std::string target, attrs;
    std::vector<ir::Type> operands, results;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"cusolver_getrf_ffi", "", {f32, f32}, {f32}, "takes 1 operand(s), got 2"},
      {"hipsolver_getrf_ffi", "", {TypeOf(ElementType::kSI32, {3, 3})}, {f32}, "complex<f64>"},
      {"cusolver_getrf_ffi", "", {f32}, {f32}, "gives results"},
      {"cusolver_potrf_ffi", "", {f32}, {f32, i32}, "bool attribute 'lower'"},
      {"hipsolver_potrf_ffi",
       "mhlo.backend_config = {lower = 1 : i32}",
       {f32},
       {f32, i32},
       "bool attribute 'lower'"},
      {"cusolver_syevd_ffi",
       "mhlo.backend_config = {algorithm = 3 : ui8, lower = true}",
       {f32},
       {f32, TypeOf(ElementType::kF32, {3}), i32},
       "'algorithm' in [0, 2]"},
      {"cusolver_gesvd_ffi",
       "mhlo.backend_config = {compute_uv = false, full_matrices = false, transposed = false}",
       {TypeOf(ElementType::kF32, {2, 3})},
       {TypeOf(ElementType::kF32, {2, 3}), TypeOf(ElementType::kF32, {2}),
        TypeOf(ElementType::kF32, {}), TypeOf(ElementType::kF32, {}), i32},
       "rows >= cols"},
      {"hipsolver_gesdd_ffi",
       "mhlo.backend_config = {compute_uv = true, full_matrices = true, transposed = true}",
       {f32},
       {f32, TypeOf(ElementType::kF32, {3}), f32, f32, i32},
       "transposed = true is unsupported"},
      {"cu_threefry2x32_ffi",
       "",
       {u32, u32, u32, TypeOf(ElementType::kUI32, {4})},
       {u32, u32},
       "takes operands"},
      {"hip_threefry2x32_ffi", "", {f32, f32, f32, f32}, {f32, f32}, "ui32"},
      {"cu_lu_pivots_to_permutation",
       "",
       {TypeOf(ElementType::kSI32, {4})},
       {TypeOf(ElementType::kSI32, {3})},
       "k <= P"},
  };
  for (const Case& c : cases) {
    Status s = VerifyMlir(CallProgram(c.target, c.attrs, c.operands, c.results));
    ASSERT_FALSE(s.ok()) << c.target;
    EXPECT_NE(s.ToString().find(c.target), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find(c.message), std::string::npos) << s.ToString();
  }
}

const ir::Operation& FirstOp(const std::unique_ptr<ir::Module>& module) {
  return *module->functions().at(0)->entry().ops()[0];
}

TEST(GpuSolverCallsWorkTest, PricedAsTheLapackRoutine) {
  const ir::Type a = TypeOf(ElementType::kF64, {2, 64, 64});
  const std::vector<ir::Type> results = {a, TypeOf(ElementType::kSI32, {2, 64}),
                                         TypeOf(ElementType::kSI32, {2})};
  Work cpu, gpu;
  for (const char* target : {"lapack_dgetrf_ffi", "cusolver_getrf_ffi"}) {
    auto module = frontend::ParseStableHlo(CallProgram(target, "", {a}, results), "test.mlir");
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    (target[0] == 'l' ? cpu : gpu) = CustomCallRegistry::Lookup(target)->work(FirstOp(*module));
  }
  EXPECT_EQ(gpu.flops, cpu.flops);
  EXPECT_EQ(gpu.vector_ops[static_cast<int>(VectorClass::kMultiply)],
            cpu.vector_ops[static_cast<int>(VectorClass::kMultiply)]);
  EXPECT_EQ(gpu.priced_as,
            "cuSOLVER getrf (a GPU solver call), priced as LAPACK getrf on the vector units");

  const ir::Type u32 = TypeOf(ElementType::kUI32, {10});
  auto prng = frontend::ParseStableHlo(
      CallProgram("hip_threefry2x32_ffi", "", {u32, u32, u32, u32}, {u32, u32}), "test.mlir");
  ASSERT_TRUE(prng.ok()) << prng.status().ToString();
  Work w = CustomCallRegistry::Lookup("hip_threefry2x32_ffi")->work(FirstOp(*prng));
  EXPECT_EQ(w.vector_ops[static_cast<int>(VectorClass::kAlu)], 10 * (20 * 5 + 5 * 3));
  EXPECT_EQ(w.priced_as,
            "ROCm threefry2x32 (a jaxlib GPU kernel), priced as Threefry-2x32 (20 rounds) on the "
            "vector units");

  // A call that fails its signature is priced by its traffic alone.
  auto bad = frontend::ParseStableHlo(CallProgram("cusolver_getrf_ffi", "", {a}, {a}), "test.mlir");
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  Work traffic = CustomCallRegistry::Lookup("cusolver_getrf_ffi")->work(FirstOp(*bad));
  EXPECT_EQ(traffic.flops, 0);
  EXPECT_TRUE(traffic.priced_as.empty());
}

}  // namespace
}  // namespace tpusim::ops::testing
