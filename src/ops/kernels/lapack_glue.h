// Glue between tpusim tensors and LAPACKE/CBLAS, shared by the linear algebra
// custom calls (lapack_calls.cc: jaxlib's CPU FFI targets; tpu_linalg_calls.cc:
// the TPU backend's targets). Internal to src/ops.
//
// Tensors are logical row-major arrays whose last two dimensions are the
// matrix, so each routine here works on one contiguous row-major matrix and
// asks LAPACKE for LAPACK_ROW_MAJOR: the results are those of LAPACK on the
// logical matrix, which is what JAX's column-major kernels compute too.
// Scalars T are float, double, std::complex<float>, std::complex<double>;
// each routine returns LAPACK's `info`.
#ifndef TPUSIM_OPS_KERNELS_LAPACK_GLUE_H_
#define TPUSIM_OPS_KERNELS_LAPACK_GLUE_H_

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/ops/work.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops::la {

template <typename T>
struct RealPart {
  using type = T;
};
template <typename T>
struct RealPart<std::complex<T>> {
  using type = T;
};
template <typename T>
using Real = typename RealPart<T>::type;
template <typename T>
inline constexpr bool kIsComplex = !std::is_same_v<T, Real<T>>;

// Calls f(T{}) with T the scalar of element type `e` (f32, f64, c64, c128).
// REQUIRES: IsLapackElement(e).
template <typename F>
decltype(auto) Dispatch(ir::ElementType e, F&& f) {
  switch (e) {
    case ir::ElementType::kF32:
      return f(float{});
    case ir::ElementType::kF64:
      return f(double{});
    case ir::ElementType::kC64:
      return f(std::complex<float>{});
    default:
      return f(std::complex<double>{});
  }
}
// Loads LAPACK (LAPACKE and CBLAS) on the first call; kFailedPrecondition
// naming the library when it cannot. The routines below REQUIRE that it
// succeeded. Thread-safe.
Status LoadLapack();

bool IsLapackElement(ir::ElementType e);

// A tensor [batch..., rows, cols] as `batch` row-major matrices.
struct Batch {
  int64_t batch = 1, rows = 0, cols = 0;
};
// REQUIRES: shape has rank >= 2.
Batch SplitBatch(const ir::Shape& shape);

// The shape with its last `drop` dimensions replaced by `tail`.
ir::Shape Reshape(const ir::Shape& shape, int drop, std::initializer_list<int64_t> tail);
ir::Type TensorOf(ir::ElementType e, ir::Shape shape);

// Checks `op`'s operand and result types against a target's signature;
// the messages name what differs (the caller adds the target).
Status ExpectTypes(const ir::Operation& op, const std::vector<ir::Type>& operands,
                   const std::vector<ir::Type>& results);
// The operands must be `count` arrays with element f32/f64/c64/c128 and
// operand `matrix` a (batch of) matrices.
Status ExpectMatrixOperands(const ir::Operation& op, int count, int matrix = 0);

template <typename T>
T* Data(Tensor& t) {
  return reinterpret_cast<T*>(t.mutable_raw());
}

// Work of a dense factorization, priced on the TPU's vector units: these
// routines are chains of pivoting, rank-1 and narrow rank-k updates, which
// the VPU runs; the MXU is not counted (a blocked implementation at large n
// would move part of the flops there, so large matrices are priced high).
// `real_flops` per matrix of a real type, 4x that for complex (a complex
// multiply-add is four real ones), half multiplies and half adds;
// `divides` per matrix on top (pivot reciprocals, square roots); plus the
// op's operand and result traffic.
Work FactorizationWork(const ir::Operation& op, int64_t batch, double real_flops, double divides);

// A routine's standard operation count per matrix of a real type, the
// numbers FactorizationWork takes; shared by every target that runs the
// routine (CPU, GPU and TPU calls).
struct Cost {
  double flops = 0, divides = 0;
};
Work FactorizationWork(const ir::Operation& op, int64_t batch, Cost cost);
// LU with partial pivoting: 2mnk - (m + n)k^2 + 2/3 k^3, k = min(m, n);
// k pivot reciprocals.
Cost GetrfCost(double m, double n);
// Householder QR: 2Mk^2 - 2/3 k^3, M = max(m, n); a norm and a division
// per reflector.
Cost GeqrfCost(double m, double n);
// Forming the m x n Q from k reflectors: 4mnk - 2(m + n)k^2 + 4/3 k^3.
Cost OrgqrCost(double m, double n, double k);
// Applying k reflectors to an m x n matrix from the left: 4mnk - 2nk^2
// (from the right: 4mnk - 2mk^2).
Cost OrmqrCost(double m, double n, double k, bool left);
// Cholesky: n^3 / 3; n(n + 1)/2 divisions and square roots.
Cost PotrfCost(double n);
// Symmetric eigensolver (divide and conquer): 9n^3 with the eigenvectors
// (tridiagonal reduction, merges, back transformation), 4/3 n^3 without.
Cost SyevdCost(double n, bool vectors);
// SVD (Golub & Van Loan's counts), M = max(m, n), k = min(m, n): jobz 'A'
// 4M^2k + 8Mk^2 + 9k^3 (full U and V^H), 'S' 6Mk^2 + 11k^3 (thin), 'N'
// 4Mk^2 - 4/3 k^3 (values alone); k^2 divisions.
Cost SvdCost(double m, double n, char jobz);
// Tridiagonal reduction: 4/3 n^3; n divisions.
Cost SytrdCost(double n);
// Tridiagonal LU with partial pivoting: 8m to factor, 5m per right-hand
// side; a division per row and per solved element.
Cost GtsvCost(double m, double nrhs);
// Nonsymmetric eigenproblem: 10n^3 for the eigenvalues (Hessenberg QR);
// with eigenvectors on `sides` sides, 25n^3 for the Schur vectors plus n^3
// per side (Golub & Van Loan); n^2 divisions.
Cost GeevCost(double n, int sides);

// The row permutation that applying the row swaps `pivots` (0-based, row i
// with row pivots[i]) to the identity of size m makes: A[perm] = L U.
// Swaps with a pivot outside [0, m) are skipped. REQUIRES: k <= m.
void PivotsToPermutation(const int32_t* pivots, int64_t k, int64_t m, int32_t* perm);

// ---- LAPACKE routines on one row-major matrix (lapack_glue.cc) ----
template <typename T>
int Getrf(int64_t m, int64_t n, T* a, int32_t* ipiv);
template <typename T>
int Geqrf(int64_t m, int64_t n, T* a, T* tau);
// orgqr / ungqr: the m x n Q from the first k reflectors in a.
template <typename T>
int Orgqr(int64_t m, int64_t n, int64_t k, T* a, const T* tau);
// ormqr / unmqr: c (m x n) := op(Q) c (side 'L') or c op(Q) (side 'R'),
// Q from the k reflectors in a (rows x k, rows = m or n by side, `lda`
// columns); trans 'N', or 'T' (real) / 'C' (complex).
template <typename T>
int Ormqr(char side, char trans, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* tau, T* c);
// syevd / heevd; jobz 'V' or 'N', uplo 'L' or 'U'.
template <typename T>
int Syevd(char jobz, char uplo, int64_t n, T* a, Real<T>* w);
// gesdd; jobz 'A', 'S' or 'N'. u is m x ucols, vt is vtrows x n.
template <typename T>
int Gesdd(char jobz, int64_t m, int64_t n, T* a, Real<T>* s, T* u, int64_t ucols, T* vt);
// gesvd; jobu and jobvt 'A', 'S' or 'N'. u is m x ucols, vt is vtrows x n.
template <typename T>
int Gesvd(char jobu, char jobvt, int64_t m, int64_t n, T* a, Real<T>* s, T* u, int64_t ucols,
          T* vt);
template <typename T>
int Potrf(char uplo, int64_t n, T* a);
// gees without sorting; w gets the eigenvalues (wr + i wi for real types).
template <typename T>
int Gees(char jobvs, int64_t n, T* a, std::complex<Real<T>>* w, T* vs, int32_t* sdim);
template <typename T>
int Gehrd(int64_t n, int64_t ilo, int64_t ihi, T* a, T* tau);
// sytrd / hetrd.
template <typename T>
int Sytrd(char uplo, int64_t n, T* a, Real<T>* d, Real<T>* e, T* tau);
// dl and du have n - 1 elements; b is n x nrhs.
template <typename T>
int Gtsv(int64_t n, int64_t nrhs, T* dl, T* d, T* du, T* b);
// BLAS trsm on b (m x n); a is m x m (side 'L') or n x n (side 'R').
template <typename T>
void Trsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, T alpha, const T* a,
          T* b);
// geev; the eigenvectors as complex columns (real types' pairs unpacked).
template <typename T>
int Geev(char jobvl, char jobvr, int64_t n, T* a, std::complex<Real<T>>* w,
         std::complex<Real<T>>* vl, std::complex<Real<T>>* vr);

}  // namespace tpusim::ops::la

#endif  // TPUSIM_OPS_KERNELS_LAPACK_GLUE_H_
