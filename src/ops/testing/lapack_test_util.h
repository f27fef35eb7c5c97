// Test helpers for the linear algebra custom calls (lapack_calls_test.cc,
// tpu_linalg_calls_test.cc): small dense matrices, random and ill-conditioned
// inputs, and programs that call one custom call and return its results.
#ifndef TPUSIM_OPS_TESTING_LAPACK_TEST_UTIL_H_
#define TPUSIM_OPS_TESTING_LAPACK_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/kernels/lapack_glue.h"
#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops::testing {

template <typename T>
constexpr ir::ElementType kElementOf =
    std::is_same_v<T, float>                 ? ir::ElementType::kF32
    : std::is_same_v<T, double>              ? ir::ElementType::kF64
    : std::is_same_v<T, std::complex<float>> ? ir::ElementType::kC64
                                             : ir::ElementType::kC128;
template <typename T>
constexpr char kLetter = std::is_same_v<T, float>                 ? 's'
                         : std::is_same_v<T, double>              ? 'd'
                         : std::is_same_v<T, std::complex<float>> ? 'c'
                                                                  : 'z';

template <typename T>
T Conj(T x) {
  if constexpr (la::kIsComplex<T>) {
    return std::conj(x);
  } else {
    return x;
  }
}

// A row-major matrix.
template <typename T>
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<T> v;
  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c)) {}
  T& operator()(int64_t i, int64_t j) { return v[i * cols + j]; }
  T operator()(int64_t i, int64_t j) const { return v[i * cols + j]; }

  static Mat Identity(int64_t n) {
    Mat m(n, n);
    for (int64_t i = 0; i < n; ++i) m(i, i) = T(1);
    return m;
  }
  // Rows [r0, r1) and columns [c0, c1).
  Mat Block(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const {
    Mat m(r1 - r0, c1 - c0);
    for (int64_t i = r0; i < r1; ++i) {
      for (int64_t j = c0; j < c1; ++j) m(i - r0, j - c0) = (*this)(i, j);
    }
    return m;
  }
  Mat H() const {
    Mat m(cols, rows);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) m(j, i) = Conj((*this)(i, j));
    }
    return m;
  }
  double Norm() const {
    double s = 0;
    for (const T& x : v) s += std::norm(std::complex<double>(x));
    return std::sqrt(s);
  }
};

template <typename T>
Mat<T> operator*(const Mat<T>& a, const Mat<T>& b) {
  Mat<T> c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = 0; k < a.cols; ++k) {
      for (int64_t j = 0; j < b.cols; ++j) c(i, j) += a(i, k) * b(k, j);
    }
  }
  return c;
}

template <typename T>
Mat<T> operator-(const Mat<T>& a, const Mat<T>& b) {
  Mat<T> c = a;
  for (size_t i = 0; i < c.v.size(); ++i) c.v[i] -= b.v[i];
  return c;
}

template <typename T>
double Eps() {
  return std::numeric_limits<la::Real<T>>::epsilon();
}

// ||x - y|| <= 100 n eps scale: what a backward-stable routine achieves.
template <typename T>
void ExpectClose(const Mat<T>& x, const Mat<T>& y, double scale, const std::string& what) {
  ASSERT_EQ(x.rows, y.rows) << what;
  ASSERT_EQ(x.cols, y.cols) << what;
  const double n = static_cast<double>(std::max<int64_t>({x.rows, x.cols, 1}));
  const double err = (x - y).Norm();
  EXPECT_LE(err, 100 * n * Eps<T>() * std::max(scale, 1e-30)) << what << ": error " << err;
}

template <typename T>
T RandomScalar(std::mt19937& g) {
  std::normal_distribution<double> d;
  if constexpr (la::kIsComplex<T>) {
    return T(d(g), d(g));
  } else {
    return T(d(g));
  }
}

template <typename T>
Mat<T> Random(int64_t r, int64_t c, uint32_t seed) {
  std::mt19937 g(seed);
  Mat<T> m(r, c);
  for (T& x : m.v) x = RandomScalar<T>(g);
  return m;
}

// Columns scaled from 1 down to 1e-6 (f32) or 1e-12 (f64): condition
// numbers near 1/eps^(3/4).
template <typename T>
Mat<T> Graded(int64_t r, int64_t c, uint32_t seed) {
  Mat<T> m = Random<T>(r, c, seed);
  const double decades = std::is_same_v<la::Real<T>, float> ? 6 : 12;
  for (int64_t j = 0; j < c; ++j) {
    const double s = std::pow(10.0, -decades * j / std::max<int64_t>(c - 1, 1));
    for (int64_t i = 0; i < r; ++i) m(i, j) *= la::Real<T>(s);
  }
  return m;
}

// A Hermitian positive definite matrix: B B^H + n I for random B, or the
// Hilbert matrix (condition ~1e7 at n = 6) when ill-conditioned.
template <typename T>
Mat<T> Hermitian(int64_t n, uint32_t seed, bool ill_conditioned) {
  Mat<T> m(n, n);
  if (ill_conditioned) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) m(i, j) = T(1.0 / static_cast<double>(i + j + 1));
    }
    return m;
  }
  Mat<T> b = Random<T>(n, n, seed);
  m = b * b.H();
  for (int64_t i = 0; i < n; ++i) m(i, i) += T(static_cast<double>(n));
  return m;
}

template <typename T>
Tensor ToTensor(const Mat<T>& m, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {m.rows, m.cols};
  return Make<T>(ir::Type::Tensor(kElementOf<T>, shape), m.v);
}

template <typename T>
Mat<T> ToMat(const Tensor& t, int64_t rows, int64_t cols, int64_t offset = 0) {
  Mat<T> m(rows, cols);
  std::vector<T> all = Read<T>(t);
  for (int64_t i = 0; i < rows * cols; ++i) m.v[i] = all[offset + i];
  return m;
}

inline std::string TypeList(const std::vector<ir::Type>& types) {
  std::string s;
  for (const ir::Type& t : types) s += (s.empty() ? "" : ", ") + t.ToString();
  return s;
}

// A module whose @main passes its arguments to custom call `target` with
// `attrs` (an attribute dictionary body) and returns its results.
inline std::string CallProgram(const std::string& target, const std::string& attrs,
                               const std::vector<ir::Type>& operands,
                               const std::vector<ir::Type>& results) {
  std::string args, uses, rets;
  for (size_t i = 0; i < operands.size(); ++i) {
    args += (i ? ", " : "") + ("%a" + std::to_string(i) + ": " + operands[i].ToString());
    uses += (i ? ", " : "") + ("%a" + std::to_string(i));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    rets += (i ? ", " : "") + ("%r#" + std::to_string(i));
  }
  return "func.func @main(" + args + ") -> (" + TypeList(results) +
         ") {\n  %r:" + std::to_string(results.size()) + " = stablehlo.custom_call @" + target +
         "(" + uses + ") {" + attrs + "} : (" + TypeList(operands) + ") -> (" + TypeList(results) +
         ")\n  return " + rets + " : " + TypeList(results) + "\n}\n";
}

inline ir::Type TypeOf(ir::ElementType e, std::vector<int64_t> shape) {
  return ir::Type::Tensor(e, std::move(shape));
}

// Runs the call and returns its results; a test failure (and empty) if it fails.
inline std::vector<Tensor> RunCall(const std::string& target, const std::string& attrs,
                                   const std::vector<Tensor>& args,
                                   const std::vector<ir::Type>& results) {
  std::vector<ir::Type> operands;
  for (const Tensor& t : args) operands.push_back(t.type());
  const std::string text = CallProgram(target, attrs, operands, results);
  auto r = RunMlir(text, args);
  if (!r.ok()) {
    ADD_FAILURE() << r.status().ToString() << "\n" << text;
    return {};
  }
  return *std::move(r);
}

// The unitary product of reflectors I - tau v v^H, v from column `col` of
// `a` (zero above `first`, 1 at `first`, a's entries below), in order.
template <typename T>
Mat<T> Reflectors(const Mat<T>& a, const std::vector<T>& taus, int64_t offset) {
  const int64_t m = a.rows;
  Mat<T> q = Mat<T>::Identity(m);
  for (size_t i = 0; i < taus.size(); ++i) {
    const int64_t col = static_cast<int64_t>(i), first = col + offset;
    Mat<T> v(m, 1);
    if (first >= m) continue;
    v(first, 0) = T(1);
    for (int64_t r = first + 1; r < m; ++r) v(r, 0) = a(r, col);
    Mat<T> h = Mat<T>::Identity(m);
    Mat<T> vvh = v * v.H();
    for (size_t k = 0; k < h.v.size(); ++k) h.v[k] -= taus[i] * vvh.v[k];
    q = q * h;
  }
  return q;
}

// Keeps the entries with j - i >= lowest_diagonal (0: upper triangle, -1:
// upper Hessenberg).
template <typename T>
Mat<T> Upper(const Mat<T>& a, int64_t lowest_diagonal = 0) {
  Mat<T> m = a;
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) {
      if (j - i < lowest_diagonal) m(i, j) = T(0);
    }
  }
  return m;
}

// A Hermitian eigendecomposition of `a`: w ascending, V diag(w) V^H = A and
// V unitary; `what` names the call in failures.
template <typename T>
void ExpectEigendecomposition(const Mat<T>& a, const Mat<T>& v,
                              const std::vector<la::Real<T>>& w, const std::string& what) {
  const int64_t n = a.rows;
  EXPECT_TRUE(std::is_sorted(w.begin(), w.end())) << what << ": eigenvalues not ascending";
  Mat<T> vw = v;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) vw(i, j) *= T(w[j]);
  }
  ExpectClose(vw * v.H(), a, a.Norm(), what + ": V diag(w) V^H = A");
  ExpectClose(v.H() * v, Mat<T>::Identity(n), std::sqrt(double(n)), what + ": V^H V = I");
}

}  // namespace tpusim::ops::testing

#endif  // TPUSIM_OPS_TESTING_LAPACK_TEST_UTIL_H_
