// jaxlib's CPU linear algebra kernels, as JAX's CPU exports call them:
// typed FFI custom calls (api_version = 4) named lapack_<t><routine>_ffi
// (blas_<t>trsm_ffi for the triangular solve), t in s, d, c, z. Operands and
// results are those of jaxlib's FFI handlers (jaxlib/cpu/lapack_kernels.cc):
// batch dimensions lead, the in-place matrix comes back as result 0, pivots
// are 1-based i32, and `info` results carry LAPACK's status (not errors).
// Character attributes (uplo, mode, side, ...) are ui8 entries of
// mhlo.backend_config. operand_layouts/result_layouts only say that jaxlib's
// buffers are column-major; tpusim's values are the logical arrays, which
// LAPACKE is given row-major, so the results are the logical values JAX gets.
//
// getrf, geqrf, orgqr, potrf, syevd and sytrd are linalg_family.h's
// routines, which the GPU targets call too. Each is priced by its routine's
// standard flop count on the vector units (lapack_glue.h: FactorizationWork
// and the counts declared there, or the formula beside the target).
#include <algorithm>
#include <complex>
#include <string>
#include <vector>

#include "ops/custom_calls/linalg/ffi_attributes.h"
#include "ops/custom_calls/linalg/linalg_family.h"
#include "ops/util/work_util.h"

namespace tpusim::ops::linalg {
namespace {

using ir::ElementType;
using la::Batch;
using la::Real;
using la::Reshape;
using la::TensorOf;

constexpr ElementType kI32 = ElementType::kSI32;

// One routine in four element types: lapack_{s,d}<real>_ffi and
// lapack_{c,z}<complex>_ffi (`prefix` in place of lapack_).
bool RegisterLapack(std::string_view real, std::string_view complex, const Family& f,
                    std::string_view prefix = "lapack_") {
  const std::pair<char, ElementType> types[] = {{'s', ElementType::kF32},
                                                {'d', ElementType::kF64},
                                                {'c', ElementType::kC64},
                                                {'z', ElementType::kC128}};
  for (auto [letter, e] : types) {
    const std::string_view base = ir::IsComplex(e) ? complex : real;
    RegisterFamily(std::string(prefix) + letter + std::string(base) + "_ffi", f, e);
  }
  return true;
}

// ------------------------------------------------------------ getrf, geqrf, orgqr, potrf,
// syevd, sytrd: linalg_family.h, with the triangle and the eigenvector mode
// as ui8 characters.

StatusOr<Options> Uplo(const ir::Operation& op) {
  TPUSIM_ASSIGN_OR_RETURN(char uplo, CharAttr(op, "uplo", "LU", 'L'));
  return Options{.uplo = uplo};
}

StatusOr<Options> UploAndMode(const ir::Operation& op) {
  TPUSIM_ASSIGN_OR_RETURN(Options o, Uplo(op));
  TPUSIM_ASSIGN_OR_RETURN(o.jobz, CharAttr(op, "mode", "VN", 'V'));
  return o;
}

[[maybe_unused]] const bool kGetrf = RegisterLapack("getrf", "getrf", GetrfFamily());
[[maybe_unused]] const bool kGeqrf = RegisterLapack("geqrf", "geqrf", GeqrfFamily());
[[maybe_unused]] const bool kOrgqr = RegisterLapack("orgqr", "ungqr", OrgqrFamily());
[[maybe_unused]] const bool kPotrf = RegisterLapack("potrf", "potrf", PotrfFamily(Uplo));
[[maybe_unused]] const bool kSyevd = RegisterLapack("syevd", "heevd", SyevdFamily(UploAndMode));
[[maybe_unused]] const bool kSytrd = RegisterLapack("sytrd", "hetrd", SytrdFamily(Uplo));

// ------------------------------------------------------------ gesdd

// u's columns and vt's rows for `mode`; 'N' computes neither, so either
// of JAX's shapes is accepted.
int64_t SvdWidth(char mode, int64_t full, int64_t k) { return mode == 'A' ? full : k; }

StatusOr<Signature> GesddSignature(const ir::Operation& op) {
  TPUSIM_ASSIGN_OR_RETURN(char mode, CharAttr(op, "mode", "ASN", 'A'));
  const ir::Type& a = Operand(op, 0);
  const Batch b = MatrixBatch(op);
  const int64_t k = std::min(b.rows, b.cols);
  int64_t ucols = SvdWidth(mode, b.rows, k), vtrows = SvdWidth(mode, b.cols, k);
  if (mode == 'N' && op.num_results() == 5) {
    const ir::Type& u = op.result(2).type();
    const ir::Type& vt = op.result(3).type();
    if (u.is_tensor() && u.rank() == a.rank() && u.shape().back() == b.rows) ucols = b.rows;
    if (vt.is_tensor() && vt.rank() == a.rank() && vt.shape()[vt.rank() - 2] == b.cols) {
      vtrows = b.cols;
    }
  }
  return Signature{{a},
                   {a, Vector(op, RealOf(a.element()), k),
                    TensorOf(a.element(), Reshape(a.shape(), 2, {b.rows, ucols})),
                    TensorOf(a.element(), Reshape(a.shape(), 2, {vtrows, b.cols})), Info(op)}};
}

// gesdd (divide and conquer, JAX's default) and gesvd (QR iteration,
// svd(algorithm=QR)) take and give the same; one flop count prices both.
Family SvdFamily(bool gesvd) {
  const std::string what = gesvd ? "LAPACK gesvd" : "LAPACK gesdd";
  return {.signature = GesddSignature,
          .eval = [gesvd](ElementType, const ir::Operation& op, std::span<const Tensor> in,
                          std::vector<Tensor>& out) -> Status {
            TPUSIM_ASSIGN_OR_RETURN(char mode, CharAttr(op, "mode", "ASN", 'A'));
            return EvalSvd(gesvd, mode, mode, in[0], {out[0], out[1], out[2], out[3], out[4]});
          },
          .work = [what](const ir::Operation& op) {
            const Batch b = MatrixBatch(op);
            const char mode = CharOr(op, "mode", "ASN", 'A');
            return PricedAs(la::FactorizationWork(op, b.batch, la::SvdCost(b.rows, b.cols, mode)),
                            what);
          }};
}

[[maybe_unused]] const bool kGesdd = RegisterLapack("gesdd", "gesdd", SvdFamily(false));
[[maybe_unused]] const bool kGesvd = RegisterLapack("gesvd", "gesvd", SvdFamily(true));

// ------------------------------------------------------------ gees

StatusOr<Signature> GeesSignature(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(CharAttr(op, "mode", "VN", 'V').status());
  TPUSIM_ASSIGN_OR_RETURN(char sort, CharAttr(op, "sort", "NS", 'N'));
  if (sort == 'S') {
    return Unimplemented(
        "sorting the Schur form (sort = 'S') needs a select function JAX "
        "does not export; unsupported");
  }
  const ir::Type& a = Operand(op, 0);
  const int64_t n = MatrixBatch(op).cols;
  std::vector<ir::Type> extra{a};
  extra.push_back(Vector(op, a.element(), n));
  if (!ir::IsComplex(a.element())) extra.push_back(Vector(op, a.element(), n));
  extra.push_back(Info(op));  // the number of selected eigenvalues
  extra.push_back(Info(op));
  return SquareSignature(op, extra);
}

// Schur decomposition by the Francis QR algorithm: 25 n^3 flops with the
// Schur vectors, 10 n^3 without (Golub & Van Loan); n^2 divisions.
Work GeesWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  const double n = static_cast<double>(b.cols);
  const bool vectors = CharOr(op, "mode", "VN", 'V') == 'V';
  return PricedAs(la::FactorizationWork(op, b.batch, (vectors ? 25 : 10) * n * n * n, n * n),
                  "LAPACK gees");
}

[[maybe_unused]] const bool kGees = RegisterLapack("gees", "gees", {
    .signature = GeesSignature,
    .eval = TPUSIM_LAPACK_EVAL({
      TPUSIM_ASSIGN_OR_RETURN(char mode, CharAttr(op, "mode", "VN", 'V'));
      const Batch b = la::SplitBatch(in[0].shape());
      const int64_t n = b.cols;
      const size_t info = la::kIsComplex<T> ? 4 : 5;
      std::vector<std::complex<Real<T>>> w(std::max<int64_t>(n, 1));
      CopyInto(in[0], out[0]);
      for (int64_t i = 0; i < b.batch; ++i) {
        la::Data<int32_t>(out[info])[i] =
            la::Gees<T>(mode, n, la::Data<T>(out[0]) + i * n * n, w.data(),
                        la::Data<T>(out[1]) + i * n * n, la::Data<int32_t>(out[info - 1]) + i);
        for (int64_t j = 0; j < n; ++j) {
          if constexpr (la::kIsComplex<T>) {
            la::Data<T>(out[2])[i * n + j] = w[j];
          } else {
            la::Data<T>(out[2])[i * n + j] = w[j].real();
            la::Data<T>(out[3])[i * n + j] = w[j].imag();
          }
        }
      }
      return Status::Ok();
    }),
    .work = GeesWork,
});

// ------------------------------------------------------------ gehrd

StatusOr<Signature> GehrdSignature(const ir::Operation& op) {
  const int64_t n = MatrixBatch(op).cols;
  TPUSIM_RETURN_IF_ERROR(ConfigAttr(op, "low").status());
  TPUSIM_RETURN_IF_ERROR(ConfigAttr(op, "high").status());
  const int64_t low = IntAttr(op, "low", 1), high = IntAttr(op, "high", n);
  if (n < 1 || low < 1 || high > n || low > high) {
    return InvalidArgument("needs 1 <= low <= high <= n, got low " + std::to_string(low) +
                           ", high " + std::to_string(high) + ", n " + std::to_string(n));
  }
  return SquareSignature(op, {Vector(op, Operand(op, 0).element(), n - 1), Info(op)});
}

// Hessenberg reduction: 10/3 n^3 flops; n divisions.
Work GehrdWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  const double n = static_cast<double>(b.cols);
  return PricedAs(la::FactorizationWork(op, b.batch, 10 * n * n * n / 3, n), "LAPACK gehrd");
}

[[maybe_unused]] const bool kGehrd = RegisterLapack("gehrd", "gehrd", {
    .signature = GehrdSignature,
    .eval = TPUSIM_LAPACK_EVAL({
      const Batch b = la::SplitBatch(in[0].shape());
      const int64_t n = b.cols;
      const int64_t low = IntAttr(op, "low", 1), high = IntAttr(op, "high", n);
      CopyInto(in[0], out[0]);
      for (int64_t i = 0; i < b.batch; ++i) {
        la::Data<int32_t>(out[2])[i] = la::Gehrd<T>(n, low, high, la::Data<T>(out[0]) + i * n * n,
                                                    la::Data<T>(out[1]) + i * (n - 1));
      }
      return Status::Ok();
    }),
    .work = GehrdWork,
});

// ------------------------------------------------------------ gtsv

// dl, d, du [..., m] (dl[0] and du[m-1] unused) and b [..., m, n].
StatusOr<Signature> GtsvSignature(const ir::Operation& op) {
  const ir::Type& b = Operand(op, 3);
  const ir::Type diag = TensorOf(b.element(), Reshape(b.shape(), 1, {}));
  std::vector<ir::Type> operands{diag, diag, diag, b};
  std::vector<ir::Type> results = operands;
  results.push_back(TensorOf(kI32, Reshape(b.shape(), 2, {})));
  return Signature{operands, results};
}

Work GtsvWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op, 3);
  return PricedAs(la::FactorizationWork(op, b.batch, la::GtsvCost(b.rows, b.cols)), "LAPACK gtsv");
}

[[maybe_unused]] const bool kGtsv = RegisterLapack("gtsv", "gtsv", {
    .operands = 4,
    .matrix = 3,
    .signature = GtsvSignature,
    .eval = TPUSIM_LAPACK_EVAL({
      const Batch b = la::SplitBatch(in[3].shape());
      for (int i = 0; i < 4; ++i) CopyInto(in[i], out[i]);
      for (int64_t i = 0; i < b.batch; ++i) {
        if (b.rows == 0) break;
        T* diag = la::Data<T>(out[1]) + i * b.rows;
        la::Data<int32_t>(out[4])[i] = la::Gtsv<T>(
            b.rows, b.cols, la::Data<T>(out[0]) + i * b.rows + 1, diag,
            la::Data<T>(out[2]) + i * b.rows, la::Data<T>(out[3]) + i * b.rows * b.cols);
      }
      return Status::Ok();
    }),
    .work = GtsvWork,
});

// ------------------------------------------------------------ trsm

StatusOr<Signature> TrsmSignature(const ir::Operation& op) {
  TPUSIM_ASSIGN_OR_RETURN(char side, CharAttr(op, "side", "LR", 'L'));
  TPUSIM_RETURN_IF_ERROR(CharAttr(op, "uplo", "LU", 'L').status());
  TPUSIM_RETURN_IF_ERROR(CharAttr(op, "trans_x", "NTC", 'N').status());
  TPUSIM_RETURN_IF_ERROR(CharAttr(op, "diag", "NU", 'N').status());
  const ir::Type& b = Operand(op, 1);
  if (b.rank() < 2) return InvalidArgument("operand 1 must be a (batch of) matrices");
  const Batch bb = la::SplitBatch(b.shape());
  const int64_t k = side == 'L' ? bb.rows : bb.cols;
  std::vector<ir::Type> operands{TensorOf(b.element(), Reshape(b.shape(), 2, {k, k})), b};
  if (op.num_operands() == 3) operands.push_back(TensorOf(b.element(), {}));
  return Signature{operands, {b}};
}

// Triangular solve: k^2 flops per right-hand side column (row for side R),
// k the triangle's size; one division per solved element unless unit.
Work TrsmWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op, 1);
  const char side = CharOr(op, "side", "LR", 'L');
  const char diag = CharOr(op, "diag", "NU", 'N');
  const double k = side == 'L' ? b.rows : b.cols;
  const double elements = static_cast<double>(b.rows * b.cols);
  return PricedAs(la::FactorizationWork(op, b.batch, k * elements, diag == 'U' ? 0 : elements),
                  "BLAS trsm");
}

Status EvalTrsm(ElementType e, const ir::Operation& op, std::span<const Tensor> in,
                std::vector<Tensor>& out) {
  TPUSIM_ASSIGN_OR_RETURN(char side, CharAttr(op, "side", "LR", 'L'));
  TPUSIM_ASSIGN_OR_RETURN(char uplo, CharAttr(op, "uplo", "LU", 'L'));
  TPUSIM_ASSIGN_OR_RETURN(char trans, CharAttr(op, "trans_x", "NTC", 'N'));
  TPUSIM_ASSIGN_OR_RETURN(char diag, CharAttr(op, "diag", "NU", 'N'));
  return la::Dispatch(e, [&](auto tag) -> Status {
    using T = decltype(tag);
    const Batch b = la::SplitBatch(in[1].shape());
    const int64_t k = side == 'L' ? b.rows : b.cols;
    CopyInto(in[1], out[0]);
    for (int64_t i = 0; i < b.batch; ++i) {
      la::Trsm<T>(side, uplo, trans, diag, b.rows, b.cols, in.size() == 3 ? in[2].data<T>()[0] : T(1),
                  in[0].data<T>() + i * k * k, la::Data<T>(out[0]) + i * b.rows * b.cols);
    }
    return Status::Ok();
  });
}

// jaxlib named the handler blas_<t>trsm_ffi first and lapack_<t>trsm_ffi
// later; exports carry either. Its third operand, alpha, went in jax 0.5.3
// (X = B / op(A) since): exports carry (a, b) or (a, b, alpha).
[[maybe_unused]] const bool kTrsm = [] {
  for (const char* prefix : {"blas_", "lapack_"}) {
    RegisterLapack("trsm", "trsm",
                   {.operands = 2,
                    .trailing_optional = 1,
                    .matrix = 1,
                    .signature = TrsmSignature,
                    .eval = EvalTrsm,
                    .work = TrsmWork},
                   prefix);
  }
  return true;
}();

// ------------------------------------------------------------ geev

StatusOr<Signature> GeevSignature(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(CharAttr(op, "compute_left", "VN", 'V').status());
  TPUSIM_RETURN_IF_ERROR(CharAttr(op, "compute_right", "VN", 'V').status());
  const ir::Type& a = Operand(op, 0);
  const Batch b = MatrixBatch(op);
  if (b.rows != b.cols) return InvalidArgument("needs square matrices, got " + a.ToString());
  const bool complex = ir::IsComplex(a.element());
  const ElementType c = complex                            ? a.element()
                        : a.element() == ElementType::kF32 ? ElementType::kC64
                                                           : ElementType::kC128;
  std::vector<ir::Type> results{Vector(op, a.element(), b.cols)};
  if (!complex) results.push_back(results[0]);
  results.push_back(TensorOf(c, a.shape()));
  results.push_back(TensorOf(c, a.shape()));
  results.push_back(Info(op));
  return Signature{{a}, results};
}

Work GeevWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  const int sides = (CharOr(op, "compute_left", "VN", 'V') == 'V') +
                    (CharOr(op, "compute_right", "VN", 'V') == 'V');
  return PricedAs(la::FactorizationWork(op, b.batch, la::GeevCost(b.cols, sides)), "LAPACK geev");
}

[[maybe_unused]] const bool kGeev = RegisterLapack("geev", "geev", {
    .signature = GeevSignature,
    .eval = TPUSIM_LAPACK_EVAL({
      TPUSIM_ASSIGN_OR_RETURN(char left, CharAttr(op, "compute_left", "VN", 'V'));
      TPUSIM_ASSIGN_OR_RETURN(char right, CharAttr(op, "compute_right", "VN", 'V'));
      using C = std::complex<Real<T>>;
      const Batch b = la::SplitBatch(in[0].shape());
      const int64_t n = b.cols;
      const size_t vl = la::kIsComplex<T> ? 1 : 2;
      TPUSIM_ASSIGN_OR_RETURN(Tensor a, in[0].Clone());
      std::vector<C> w(std::max<int64_t>(n, 1));
      for (int64_t i = 0; i < b.batch; ++i) {
        la::Data<int32_t>(out[vl + 2])[i] =
            la::Geev<T>(left, right, n, la::Data<T>(a) + i * n * n, w.data(),
                        la::Data<C>(out[vl]) + i * n * n, la::Data<C>(out[vl + 1]) + i * n * n);
        for (int64_t j = 0; j < n; ++j) {
          if constexpr (la::kIsComplex<T>) {
            la::Data<T>(out[0])[i * n + j] = w[j];
          } else {
            la::Data<T>(out[0])[i * n + j] = w[j].real();
            la::Data<T>(out[1])[i * n + j] = w[j].imag();
          }
        }
      }
      return Status::Ok();
    }),
    .work = GeevWork,
});

}  // namespace
}  // namespace tpusim::ops::linalg
