#include "ops/kernels/lapack_glue.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "ops/util/work_util.h"

// LAPACK's complex types as std::complex (lapack.h's documented way), so
// tensors' c64/c128 storage passes as is.
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>
// (a separate block keeps the order)
#include <cblas.h>

namespace tpusim::ops::la {
namespace {

using c64 = std::complex<float>;
using c128 = std::complex<double>;
constexpr int kRow = LAPACK_ROW_MAJOR;
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

// LAPACK is loaded on first use, not with tpusim: OpenBLAS, behind it,
// starts a thread pool as it loads whose threads spin for about 0.1 s on the
// cores a short run needs (a 2048^3 f32 matmul run took 167 ms with it
// loaded at start, 132 ms without), and few programs call LAPACK at all.
struct Library {
  void* handle = nullptr;
  std::string error;
};

const Library& LapackLibrary() {
  static const Library* library = [] {
    auto* lib = new Library();
    lib->handle = dlopen("liblapacke.so.3", RTLD_NOW | RTLD_LOCAL);
    if (lib->handle == nullptr) {
      const char* e = dlerror();
      lib->error = e != nullptr ? e : "unknown error";
      return lib;
    }
    // LAPACKE's NaN check would refuse NaN inputs with info < 0 before
    // calling LAPACK; JAX's kernels call LAPACK directly, so NaNs must flow.
    auto set_nancheck = reinterpret_cast<decltype(&LAPACKE_set_nancheck)>(
        dlsym(lib->handle, "LAPACKE_set_nancheck"));
    if (set_nancheck != nullptr) set_nancheck(0);
    return lib;
  }();
  return *library;
}

// The LAPACKE or CBLAS function `name` (CBLAS's come from the BLAS LAPACKE
// links). REQUIRES: LoadLapack() succeeded; a standard function missing from
// the loaded library is a broken install, and fatal.
void* LapackSymbol(const char* name) {
  void* f = dlsym(LapackLibrary().handle, name);
  if (f == nullptr) {
    std::fprintf(stderr, "tpusim: the loaded LAPACK has no %s\n", name);
    std::abort();
  }
  return f;
}

// Calls through TPUSIM_LAPACK(fn)(args...) look `fn` up once, where used.
#define TPUSIM_LAPACK(fn)                                                     \
  (*[] {                                                                      \
    static const auto f = reinterpret_cast<decltype(&fn)>(LapackSymbol(#fn)); \
    return f;                                                                 \
  }())

lapack_int I(int64_t v) { return static_cast<lapack_int>(v); }
int64_t Lead(int64_t cols) { return std::max<int64_t>(1, cols); }

std::string TypeList(const std::vector<ir::Type>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + types[i].ToString();
  return s + ")";
}

std::vector<ir::Type> OperandTypes(const ir::Operation& op) {
  std::vector<ir::Type> v;
  for (int i = 0; i < op.num_operands(); ++i) v.push_back(op.operand(i).type());
  return v;
}

std::vector<ir::Type> ResultTypes(const ir::Operation& op) {
  std::vector<ir::Type> v;
  for (int i = 0; i < op.num_results(); ++i) v.push_back(op.result(i).type());
  return v;
}

}  // namespace

Status LoadLapack() {
  const Library& lib = LapackLibrary();
  if (lib.handle != nullptr) return Status::Ok();
  return FailedPrecondition("cannot load LAPACK (liblapacke.so.3, Debian's liblapacke3): " +
                            lib.error);
}

bool IsLapackElement(ir::ElementType e) {
  return e == ir::ElementType::kF32 || e == ir::ElementType::kF64 || e == ir::ElementType::kC64 ||
         e == ir::ElementType::kC128;
}

Batch SplitBatch(const ir::Shape& shape) {
  Batch b;
  const size_t r = shape.size();
  b.rows = shape[r - 2];
  b.cols = shape[r - 1];
  for (size_t i = 0; i + 2 < r; ++i) b.batch *= shape[i];
  return b;
}

ir::Shape Reshape(const ir::Shape& shape, int drop, std::initializer_list<int64_t> tail) {
  ir::Shape s(shape.begin(), shape.end() - std::min<int64_t>(drop, shape.size()));
  s.insert(s.end(), tail.begin(), tail.end());
  return s;
}

ir::Type TensorOf(ir::ElementType e, ir::Shape shape) {
  return ir::Type::Tensor(e, std::move(shape));
}

Status ExpectTypes(const ir::Operation& op, const std::vector<ir::Type>& operands,
                   const std::vector<ir::Type>& results) {
  std::vector<ir::Type> got_operands = OperandTypes(op);
  if (got_operands != operands) {
    return InvalidArgument("takes operands " + TypeList(operands) + ", got " +
                           TypeList(got_operands));
  }
  std::vector<ir::Type> got_results = ResultTypes(op);
  if (got_results != results) {
    return InvalidArgument("gives results " + TypeList(results) + " for these operands, got " +
                           TypeList(got_results));
  }
  return Status::Ok();
}

Status ExpectMatrixOperands(const ir::Operation& op, int count, int matrix) {
  if (op.num_operands() != count) {
    return InvalidArgument("takes " + std::to_string(count) + " operand(s), got " +
                           std::to_string(op.num_operands()));
  }
  for (int i = 0; i < count; ++i) {
    const ir::Type& t = op.operand(i).type();
    if (!t.is_tensor() || !IsLapackElement(t.element())) {
      return InvalidArgument("operand " + std::to_string(i) +
                             " must be an f32, f64, complex<f32> or complex<f64> array, got " +
                             t.ToString());
    }
    for (int64_t d : t.shape()) {
      if (d > kMaxDim) return InvalidArgument("dimensions beyond 2^31 are unsupported");
    }
  }
  if (op.operand(matrix).type().rank() < 2) {
    return InvalidArgument("operand " + std::to_string(matrix) +
                           " must be a (batch of) matrices, got " +
                           op.operand(matrix).type().ToString());
  }
  return Status::Ok();
}

Work FactorizationWork(const ir::Operation& op, int64_t batch, double real_flops, double divides) {
  Work w = ReadsAndWrites(op);
  const bool complex = HasComplexElements(op);
  const double flops = real_flops * (complex ? 4 : 1) * static_cast<double>(batch);
  w.AddVector(VectorClass::kMultiply, static_cast<int64_t>(flops / 2));
  w.AddVector(VectorClass::kAlu, static_cast<int64_t>(flops / 2));
  w.AddVector(VectorClass::kDivide, static_cast<int64_t>(divides * static_cast<double>(batch)));
  w.flops = static_cast<int64_t>(flops);
  return w;
}

Work FactorizationWork(const ir::Operation& op, int64_t batch, Cost cost) {
  return FactorizationWork(op, batch, cost.flops, cost.divides);
}

Cost GetrfCost(double m, double n) {
  const double k = std::min(m, n);
  return {2 * m * n * k - (m + n) * k * k + 2 * k * k * k / 3, k};
}

Cost GeqrfCost(double m, double n) {
  const double k = std::min(m, n), l = std::max(m, n);
  return {2 * l * k * k - 2 * k * k * k / 3, 2 * k};
}

Cost OrgqrCost(double m, double n, double k) {
  return {4 * m * n * k - 2 * (m + n) * k * k + 4 * k * k * k / 3, k};
}

Cost OrmqrCost(double m, double n, double k, bool left) {
  return {4 * m * n * k - 2 * (left ? n : m) * k * k, 0};
}

Cost PotrfCost(double n) { return {n * n * n / 3, n * (n + 1) / 2}; }

Cost SyevdCost(double n, bool vectors) { return {(vectors ? 9 : 4.0 / 3) * n * n * n, n * n}; }

Cost SvdCost(double m, double n, char jobz) {
  const double k = std::min(m, n), l = std::max(m, n);
  const double flops = jobz == 'A'   ? 4 * l * l * k + 8 * l * k * k + 9 * k * k * k
                       : jobz == 'S' ? 6 * l * k * k + 11 * k * k * k
                                     : 4 * l * k * k - 4 * k * k * k / 3;
  return {flops, k * k};
}

Cost SytrdCost(double n) { return {4 * n * n * n / 3, n}; }

Cost GtsvCost(double m, double nrhs) { return {8 * m + 5 * m * nrhs, m + m * nrhs}; }

Cost GeevCost(double n, int sides) { return {(sides == 0 ? 10 : 25 + sides) * n * n * n, n * n}; }

void PivotsToPermutation(const int32_t* pivots, int64_t k, int64_t m, int32_t* perm) {
  for (int64_t i = 0; i < m; ++i) perm[i] = static_cast<int32_t>(i);
  for (int64_t i = 0; i < k; ++i) {
    const int32_t j = pivots[i];
    if (j >= 0 && j < m) std::swap(perm[i], perm[j]);
  }
}

// ------------------------------------------------------------ routines

// Each routine calls LAPACKE's function for T (if constexpr discards the
// others).
template <typename T>
int Getrf(int64_t m, int64_t n, T* a, int32_t* ipiv) {
  const lapack_int rows = I(m), cols = I(n), lda = I(Lead(n));
  if constexpr (std::is_same_v<T, float>)
    return TPUSIM_LAPACK(LAPACKE_sgetrf)(kRow, rows, cols, a, lda, ipiv);
  if constexpr (std::is_same_v<T, double>)
    return TPUSIM_LAPACK(LAPACKE_dgetrf)(kRow, rows, cols, a, lda, ipiv);
  if constexpr (std::is_same_v<T, c64>)
    return TPUSIM_LAPACK(LAPACKE_cgetrf)(kRow, rows, cols, a, lda, ipiv);
  if constexpr (std::is_same_v<T, c128>)
    return TPUSIM_LAPACK(LAPACKE_zgetrf)(kRow, rows, cols, a, lda, ipiv);
}

template <typename T>
int Geqrf(int64_t m, int64_t n, T* a, T* tau) {
  const lapack_int rows = I(m), cols = I(n), lda = I(Lead(n));
  if constexpr (std::is_same_v<T, float>)
    return TPUSIM_LAPACK(LAPACKE_sgeqrf)(kRow, rows, cols, a, lda, tau);
  if constexpr (std::is_same_v<T, double>)
    return TPUSIM_LAPACK(LAPACKE_dgeqrf)(kRow, rows, cols, a, lda, tau);
  if constexpr (std::is_same_v<T, c64>)
    return TPUSIM_LAPACK(LAPACKE_cgeqrf)(kRow, rows, cols, a, lda, tau);
  if constexpr (std::is_same_v<T, c128>)
    return TPUSIM_LAPACK(LAPACKE_zgeqrf)(kRow, rows, cols, a, lda, tau);
}

template <typename T>
int Orgqr(int64_t m, int64_t n, int64_t k, T* a, const T* tau) {
  const lapack_int rows = I(m), cols = I(n), kk = I(k), lda = I(Lead(n));
  if constexpr (std::is_same_v<T, float>)
    return TPUSIM_LAPACK(LAPACKE_sorgqr)(kRow, rows, cols, kk, a, lda, tau);
  if constexpr (std::is_same_v<T, double>)
    return TPUSIM_LAPACK(LAPACKE_dorgqr)(kRow, rows, cols, kk, a, lda, tau);
  if constexpr (std::is_same_v<T, c64>)
    return TPUSIM_LAPACK(LAPACKE_cungqr)(kRow, rows, cols, kk, a, lda, tau);
  if constexpr (std::is_same_v<T, c128>)
    return TPUSIM_LAPACK(LAPACKE_zungqr)(kRow, rows, cols, kk, a, lda, tau);
}

template <typename T>
int Syevd(char jobz, char uplo, int64_t n, T* a, Real<T>* w) {
  const lapack_int nn = I(n), lda = I(Lead(n));
  if constexpr (std::is_same_v<T, float>)
    return TPUSIM_LAPACK(LAPACKE_ssyevd)(kRow, jobz, uplo, nn, a, lda, w);
  if constexpr (std::is_same_v<T, double>)
    return TPUSIM_LAPACK(LAPACKE_dsyevd)(kRow, jobz, uplo, nn, a, lda, w);
  if constexpr (std::is_same_v<T, c64>)
    return TPUSIM_LAPACK(LAPACKE_cheevd)(kRow, jobz, uplo, nn, a, lda, w);
  if constexpr (std::is_same_v<T, c128>)
    return TPUSIM_LAPACK(LAPACKE_zheevd)(kRow, jobz, uplo, nn, a, lda, w);
}

template <typename T>
int Gesdd(char jobz, int64_t m, int64_t n, T* a, Real<T>* s, T* u, int64_t ucols, T* vt) {
  const lapack_int rows = I(m), cols = I(n), lda = I(Lead(n)), ldu = I(Lead(ucols));
  if constexpr (std::is_same_v<T, float>) {
    return TPUSIM_LAPACK(LAPACKE_sgesdd)(kRow, jobz, rows, cols, a, lda, s, u, ldu, vt, lda);
  } else if constexpr (std::is_same_v<T, double>) {
    return TPUSIM_LAPACK(LAPACKE_dgesdd)(kRow, jobz, rows, cols, a, lda, s, u, ldu, vt, lda);
  } else if constexpr (std::is_same_v<T, c64>) {
    return TPUSIM_LAPACK(LAPACKE_cgesdd)(kRow, jobz, rows, cols, a, lda, s, u, ldu, vt, lda);
  } else {
    return TPUSIM_LAPACK(LAPACKE_zgesdd)(kRow, jobz, rows, cols, a, lda, s, u, ldu, vt, lda);
  }
}

template <typename T>
int Gesvd(char jobu, char jobvt, int64_t m, int64_t n, T* a, Real<T>* s, T* u, int64_t ucols,
          T* vt) {
  const lapack_int rows = I(m), cols = I(n), lda = I(Lead(n)), ldu = I(Lead(ucols));
  std::vector<Real<T>> superb(std::max<int64_t>(std::min(m, n), 2));  // unconverged diagonal
  Real<T>* e = superb.data();
  if constexpr (std::is_same_v<T, float>) {
    return TPUSIM_LAPACK(LAPACKE_sgesvd)(kRow, jobu, jobvt, rows, cols, a, lda, s, u, ldu, vt, lda,
                                         e);
  } else if constexpr (std::is_same_v<T, double>) {
    return TPUSIM_LAPACK(LAPACKE_dgesvd)(kRow, jobu, jobvt, rows, cols, a, lda, s, u, ldu, vt, lda,
                                         e);
  } else if constexpr (std::is_same_v<T, c64>) {
    return TPUSIM_LAPACK(LAPACKE_cgesvd)(kRow, jobu, jobvt, rows, cols, a, lda, s, u, ldu, vt, lda,
                                         e);
  } else {
    return TPUSIM_LAPACK(LAPACKE_zgesvd)(kRow, jobu, jobvt, rows, cols, a, lda, s, u, ldu, vt, lda,
                                         e);
  }
}

template <typename T>
int Ormqr(char side, char trans, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* tau, T* c) {
  const lapack_int rows = I(m), cols = I(n), kk = I(k), ld = I(Lead(lda)), ldc = I(Lead(n));
  if constexpr (std::is_same_v<T, float>) {
    return TPUSIM_LAPACK(LAPACKE_sormqr)(kRow, side, trans, rows, cols, kk, a, ld, tau, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    return TPUSIM_LAPACK(LAPACKE_dormqr)(kRow, side, trans, rows, cols, kk, a, ld, tau, c, ldc);
  } else if constexpr (std::is_same_v<T, c64>) {
    return TPUSIM_LAPACK(LAPACKE_cunmqr)(kRow, side, trans, rows, cols, kk, a, ld, tau, c, ldc);
  } else {
    return TPUSIM_LAPACK(LAPACKE_zunmqr)(kRow, side, trans, rows, cols, kk, a, ld, tau, c, ldc);
  }
}

template <typename T>
int Potrf(char uplo, int64_t n, T* a) {
  const lapack_int nn = I(n), lda = I(Lead(n));
  if constexpr (std::is_same_v<T, float>)
    return TPUSIM_LAPACK(LAPACKE_spotrf)(kRow, uplo, nn, a, lda);
  if constexpr (std::is_same_v<T, double>)
    return TPUSIM_LAPACK(LAPACKE_dpotrf)(kRow, uplo, nn, a, lda);
  if constexpr (std::is_same_v<T, c64>)
    return TPUSIM_LAPACK(LAPACKE_cpotrf)(kRow, uplo, nn, a, lda);
  if constexpr (std::is_same_v<T, c128>)
    return TPUSIM_LAPACK(LAPACKE_zpotrf)(kRow, uplo, nn, a, lda);
}

template <typename T>
int Gees(char jobvs, int64_t n, T* a, std::complex<Real<T>>* w, T* vs, int32_t* sdim) {
  const lapack_int nn = I(n), lda = I(Lead(n));
  if constexpr (std::is_same_v<T, c64>) {
    return TPUSIM_LAPACK(LAPACKE_cgees)(kRow, jobvs, 'N', nullptr, nn, a, lda, sdim, w, vs, lda);
  } else if constexpr (std::is_same_v<T, c128>) {
    return TPUSIM_LAPACK(LAPACKE_zgees)(kRow, jobvs, 'N', nullptr, nn, a, lda, sdim, w, vs, lda);
  } else {
    std::vector<T> wr(std::max<int64_t>(n, 1)), wi(std::max<int64_t>(n, 1));
    int info;
    if constexpr (std::is_same_v<T, float>) {
      info = TPUSIM_LAPACK(LAPACKE_sgees)(kRow, jobvs, 'N', nullptr, nn, a, lda, sdim, wr.data(),
                                          wi.data(), vs, lda);
    } else {
      info = TPUSIM_LAPACK(LAPACKE_dgees)(kRow, jobvs, 'N', nullptr, nn, a, lda, sdim, wr.data(),
                                          wi.data(), vs, lda);
    }
    for (int64_t i = 0; i < n; ++i) w[i] = {wr[i], wi[i]};
    return info;
  }
}

template <typename T>
int Gehrd(int64_t n, int64_t ilo, int64_t ihi, T* a, T* tau) {
  const lapack_int nn = I(n), lo = I(ilo), hi = I(ihi), lda = I(Lead(n));
  if constexpr (std::is_same_v<T, float>)
    return TPUSIM_LAPACK(LAPACKE_sgehrd)(kRow, nn, lo, hi, a, lda, tau);
  if constexpr (std::is_same_v<T, double>)
    return TPUSIM_LAPACK(LAPACKE_dgehrd)(kRow, nn, lo, hi, a, lda, tau);
  if constexpr (std::is_same_v<T, c64>)
    return TPUSIM_LAPACK(LAPACKE_cgehrd)(kRow, nn, lo, hi, a, lda, tau);
  if constexpr (std::is_same_v<T, c128>)
    return TPUSIM_LAPACK(LAPACKE_zgehrd)(kRow, nn, lo, hi, a, lda, tau);
}

template <typename T>
int Sytrd(char uplo, int64_t n, T* a, Real<T>* d, Real<T>* e, T* tau) {
  const lapack_int nn = I(n), lda = I(Lead(n));
  if constexpr (std::is_same_v<T, float>)
    return TPUSIM_LAPACK(LAPACKE_ssytrd)(kRow, uplo, nn, a, lda, d, e, tau);
  if constexpr (std::is_same_v<T, double>)
    return TPUSIM_LAPACK(LAPACKE_dsytrd)(kRow, uplo, nn, a, lda, d, e, tau);
  if constexpr (std::is_same_v<T, c64>)
    return TPUSIM_LAPACK(LAPACKE_chetrd)(kRow, uplo, nn, a, lda, d, e, tau);
  if constexpr (std::is_same_v<T, c128>)
    return TPUSIM_LAPACK(LAPACKE_zhetrd)(kRow, uplo, nn, a, lda, d, e, tau);
}

template <typename T>
int Gtsv(int64_t n, int64_t nrhs, T* dl, T* d, T* du, T* b) {
  const lapack_int nn = I(n), cols = I(nrhs), ldb = I(Lead(nrhs));
  if constexpr (std::is_same_v<T, float>)
    return TPUSIM_LAPACK(LAPACKE_sgtsv)(kRow, nn, cols, dl, d, du, b, ldb);
  if constexpr (std::is_same_v<T, double>)
    return TPUSIM_LAPACK(LAPACKE_dgtsv)(kRow, nn, cols, dl, d, du, b, ldb);
  if constexpr (std::is_same_v<T, c64>)
    return TPUSIM_LAPACK(LAPACKE_cgtsv)(kRow, nn, cols, dl, d, du, b, ldb);
  if constexpr (std::is_same_v<T, c128>)
    return TPUSIM_LAPACK(LAPACKE_zgtsv)(kRow, nn, cols, dl, d, du, b, ldb);
}

template <typename T>
void Trsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, T alpha, const T* a,
          T* b) {
  if (m == 0 || n == 0) return;
  const CBLAS_SIDE s = side == 'L' ? CblasLeft : CblasRight;
  const CBLAS_UPLO u = uplo == 'L' ? CblasLower : CblasUpper;
  const CBLAS_TRANSPOSE t = trans == 'T'   ? CblasTrans
                            : trans == 'C' ? CblasConjTrans
                                           : CblasNoTrans;
  const CBLAS_DIAG g = diag == 'U' ? CblasUnit : CblasNonUnit;
  const int lda = static_cast<int>(side == 'L' ? m : n), ldb = static_cast<int>(n);
  const int mm = static_cast<int>(m), nn = static_cast<int>(n);
  if constexpr (std::is_same_v<T, float>) {
    TPUSIM_LAPACK(cblas_strsm)(CblasRowMajor, s, u, t, g, mm, nn, alpha, a, lda, b, ldb);
  } else if constexpr (std::is_same_v<T, double>) {
    TPUSIM_LAPACK(cblas_dtrsm)(CblasRowMajor, s, u, t, g, mm, nn, alpha, a, lda, b, ldb);
  } else if constexpr (std::is_same_v<T, c64>) {
    TPUSIM_LAPACK(cblas_ctrsm)
    (CblasRowMajor, s, u, t, g, mm, nn, reinterpret_cast<const float*>(&alpha),
     reinterpret_cast<const float*>(a), lda, reinterpret_cast<float*>(b), ldb);
  } else {
    TPUSIM_LAPACK(cblas_ztrsm)
    (CblasRowMajor, s, u, t, g, mm, nn, reinterpret_cast<const double*>(&alpha),
     reinterpret_cast<const double*>(a), lda, reinterpret_cast<double*>(b), ldb);
  }
}

namespace {

// Real geev packs a conjugate pair (w[j], w[j+1] = conj(w[j])) as columns
// j (real part) and j+1 (imaginary part) of v; unpacks v (n x n, row-major)
// into complex columns.
template <typename R>
void UnpackEigenvectors(int64_t n, const R* wi, const R* v, std::complex<R>* out) {
  for (int64_t j = 0; j < n; ++j) {
    const bool pair = wi[j] != 0 && j + 1 < n;
    for (int64_t i = 0; i < n; ++i) {
      if (pair) {
        out[i * n + j] = {v[i * n + j], v[i * n + j + 1]};
        out[i * n + j + 1] = {v[i * n + j], -v[i * n + j + 1]};
      } else {
        out[i * n + j] = {v[i * n + j], 0};
      }
    }
    if (pair) ++j;
  }
}

}  // namespace

template <typename T>
int Geev(char jobvl, char jobvr, int64_t n, T* a, std::complex<Real<T>>* w,
         std::complex<Real<T>>* vl, std::complex<Real<T>>* vr) {
  const lapack_int lda = I(Lead(n));
  if constexpr (kIsComplex<T>) {
    if constexpr (std::is_same_v<T, c64>) {
      return TPUSIM_LAPACK(LAPACKE_cgeev)(kRow, jobvl, jobvr, I(n), a, lda, w, vl, lda, vr, lda);
    } else {
      return TPUSIM_LAPACK(LAPACKE_zgeev)(kRow, jobvl, jobvr, I(n), a, lda, w, vl, lda, vr, lda);
    }
  } else {
    const size_t nn = static_cast<size_t>(std::max<int64_t>(n * n, 1));
    std::vector<T> wr(std::max<int64_t>(n, 1)), wi(std::max<int64_t>(n, 1)), l(nn), r(nn);
    int info;
    if constexpr (std::is_same_v<T, float>) {
      info = TPUSIM_LAPACK(LAPACKE_sgeev)(kRow, jobvl, jobvr, I(n), a, lda, wr.data(), wi.data(),
                                          l.data(), lda, r.data(), lda);
    } else {
      info = TPUSIM_LAPACK(LAPACKE_dgeev)(kRow, jobvl, jobvr, I(n), a, lda, wr.data(), wi.data(),
                                          l.data(), lda, r.data(), lda);
    }
    for (int64_t i = 0; i < n; ++i) w[i] = {wr[i], wi[i]};
    if (jobvl == 'V') UnpackEigenvectors(n, wi.data(), l.data(), vl);
    if (jobvr == 'V') UnpackEigenvectors(n, wi.data(), r.data(), vr);
    return info;
  }
}

#define TPUSIM_LA_INSTANTIATE(T)                                                                 \
  template int Getrf<T>(int64_t, int64_t, T*, int32_t*);                                         \
  template int Geqrf<T>(int64_t, int64_t, T*, T*);                                               \
  template int Orgqr<T>(int64_t, int64_t, int64_t, T*, const T*);                                \
  template int Syevd<T>(char, char, int64_t, T*, Real<T>*);                                      \
  template int Gesdd<T>(char, int64_t, int64_t, T*, Real<T>*, T*, int64_t, T*);                  \
  template int Gesvd<T>(char, char, int64_t, int64_t, T*, Real<T>*, T*, int64_t, T*);            \
  template int Ormqr<T>(char, char, int64_t, int64_t, int64_t, const T*, int64_t, const T*, T*); \
  template int Potrf<T>(char, int64_t, T*);                                                      \
  template int Gees<T>(char, int64_t, T*, std::complex<Real<T>>*, T*, int32_t*);                 \
  template int Gehrd<T>(int64_t, int64_t, int64_t, T*, T*);                                      \
  template int Sytrd<T>(char, int64_t, T*, Real<T>*, Real<T>*, T*);                              \
  template int Gtsv<T>(int64_t, int64_t, T*, T*, T*, T*);                                        \
  template void Trsm<T>(char, char, char, char, int64_t, int64_t, T, const T*, T*);              \
  template int Geev<T>(char, char, int64_t, T*, std::complex<Real<T>>*, std::complex<Real<T>>*,  \
                       std::complex<Real<T>>*);
TPUSIM_LA_INSTANTIATE(float)
TPUSIM_LA_INSTANTIATE(double)
TPUSIM_LA_INSTANTIATE(c64)
TPUSIM_LA_INSTANTIATE(c128)
#undef TPUSIM_LA_INSTANTIATE

}  // namespace tpusim::ops::la
