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
// Each is priced by its routine's standard flop count on the vector units
// (lapack_glue.h, FactorizationWork), the formula beside it.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ops/kernels/lapack_glue.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;
using la::Batch;
using la::Real;
using la::Reshape;
using la::TensorOf;

constexpr ElementType kI32 = ElementType::kSI32;

// ------------------------------------------------------------ attributes

// The integer `key` of an attribute dictionary in text, `{uplo = 76 : ui8,
// ...}`, as XLA's HLO text writes a typed FFI call's backend_config; null
// when absent, an error when the text is no such dictionary.
StatusOr<ir::Attribute> FromConfigText(std::string_view text, std::string_view key) {
  auto trim = [](std::string_view v) {
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    return v;
  };
  text = trim(text);
  if (text.empty()) return ir::Attribute();
  if (text.front() != '{' || text.back() != '}') {
    return InvalidArgument("backend_config \"" + std::string(text) +
                           "\" is not an attribute dictionary");
  }
  text = text.substr(1, text.size() - 2);
  while (!trim(text).empty()) {
    const size_t comma = text.find(',');
    const std::string_view entry = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = entry.find('=');
    const std::string_view name = trim(entry.substr(0, eq));
    if (eq == std::string_view::npos || name != key) continue;
    const std::string value(trim(entry.substr(eq + 1, entry.find(':') - eq - 1)));
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0') {
      return InvalidArgument("backend_config entry '" + std::string(trim(entry)) +
                             "' is not an integer");
    }
    return ir::Attribute::Int(v);
  }
  return ir::Attribute();
}

// An attribute of the target: in mhlo.backend_config (or a dictionary
// backend_config) as JAX writes them, or in a backend_config string as HLO
// text has it.
StatusOr<ir::Attribute> ConfigAttr(const ir::Operation& op, std::string_view key) {
  for (const char* dict : {"mhlo.backend_config", "backend_config"}) {
    ir::Attribute d = op.attr(dict);
    if (d.kind() == ir::Attribute::Kind::kDict && d.Get(key)) return d.Get(key);
  }
  ir::Attribute text = op.attr("backend_config");
  if (text.kind() == ir::Attribute::Kind::kString) return FromConfigText(text.str(), key);
  return ir::Attribute();
}

// The ui8 character attribute `key`, which must be one of `allowed`;
// `fallback` when absent.
StatusOr<char> CharAttr(const ir::Operation& op, std::string_view key, std::string_view allowed,
                        char fallback) {
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, ConfigAttr(op, key));
  if (!a) return fallback;
  if (a.kind() == ir::Attribute::Kind::kInt) {
    const int64_t v = a.int_value();
    if (v > 0 && v < 128 && allowed.find(static_cast<char>(v)) != std::string_view::npos) {
      return static_cast<char>(v);
    }
  }
  std::string names;
  for (char c : allowed) names += std::string(names.empty() ? "'" : " or '") + c + "'";
  return InvalidArgument("backend_config attribute '" + std::string(key) + "' must be " + names +
                         " as a ui8, got " + a.ToString());
}

// CharAttr for pricing, where a bad attribute (a verify error) reads as
// `fallback`.
char CharOr(const ir::Operation& op, std::string_view key, std::string_view allowed,
            char fallback) {
  StatusOr<char> c = CharAttr(op, key, allowed, fallback);
  return c.ok() ? *c : fallback;
}

int64_t IntAttr(const ir::Operation& op, std::string_view key, int64_t fallback) {
  StatusOr<ir::Attribute> a = ConfigAttr(op, key);
  return a.ok() && a->kind() == ir::Attribute::Kind::kInt ? a->int_value() : fallback;
}

// ------------------------------------------------------------ framework

// What a target takes and gives for the op's operands and attributes.
struct Signature {
  std::vector<ir::Type> operands, results;
};
using SignatureFn = std::function<StatusOr<Signature>(const ir::Operation&)>;

// One routine in four element types: lapack_{s,d}<real>_ffi and
// lapack_{c,z}<complex>_ffi.
struct Family {
  std::string prefix = "lapack_";
  std::string real, complex;
  int operands = 1;
  int trailing_optional = 0;  // operands after `operands` a call may leave out
  int matrix = 0;             // the operand holding the matrices
  SignatureFn signature;
  // Fills `out` (allocated, zeroed) from `in` for the element type.
  std::function<Status(ElementType, const ir::Operation&, std::span<const Tensor>,
                       std::vector<Tensor>&)>
      eval;
  WorkFn work;
};

VerifyFn MakeVerify(const Family& f, ElementType e) {
  return [f, e](const ir::Operation& op) -> Status {
    const int most = f.operands + f.trailing_optional;
    if (op.num_operands() > f.operands && op.num_operands() <= most) {
      TPUSIM_RETURN_IF_ERROR(la::ExpectMatrixOperands(op, op.num_operands(), f.matrix));
    } else if (f.trailing_optional > 0 && op.num_operands() != f.operands) {
      return InvalidArgument("takes " + std::to_string(f.operands) + " to " +
                             std::to_string(most) + " operands, got " +
                             std::to_string(op.num_operands()));
    } else {
      TPUSIM_RETURN_IF_ERROR(la::ExpectMatrixOperands(op, f.operands, f.matrix));
    }
    if (op.operand(0).type().element() != e) {
      return InvalidArgument("operates on " + std::string(ir::ElementTypeName(e)) +
                             " arrays, got " + op.operand(0).type().ToString());
    }
    TPUSIM_ASSIGN_OR_RETURN(Signature s, f.signature(op));
    return la::ExpectTypes(op, s.operands, s.results);
  };
}

EvalFn MakeEval(const Family& f) {
  return [f](EvalContext&, const ir::Operation& op,
             std::span<const Tensor> in) -> StatusOr<std::vector<Tensor>> {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, AllocateResults(op));
    TPUSIM_RETURN_IF_ERROR(f.eval(in[0].element(), op, in, out));
    return out;
  };
}

bool RegisterFamily(const Family& f) {
  const std::pair<char, ElementType> types[] = {{'s', ElementType::kF32},
                                                {'d', ElementType::kF64},
                                                {'c', ElementType::kC64},
                                                {'z', ElementType::kC128}};
  for (auto [letter, e] : types) {
    const std::string& base = ir::IsComplex(e) ? f.complex : f.real;
    VerifyFn verify = MakeVerify(f, e);
    // The pricing rules read the shapes the signature checked; a call that
    // fails it is priced by its traffic alone.
    WorkFn work = [verify, price = f.work](const ir::Operation& op) {
      return verify(op).ok() ? price(op) : ReadsAndWrites(op);
    };
    CustomCallRegistry::Register({.target = f.prefix + letter + base + "_ffi",
                                  .verify = verify,
                                  .eval = MakeEval(f),
                                  .work = work});
  }
  return true;
}

// A Family::eval whose body (statements returning Status) runs with T the
// scalar type of the element type, `op`, `in` and `out` in scope.
#define TPUSIM_LAPACK_EVAL(...)                                          \
  [](ElementType e, const ir::Operation& op, std::span<const Tensor> in, \
     std::vector<Tensor>& out) -> Status {                               \
    return la::Dispatch(e, [&](auto tag) -> Status {                     \
      using T = decltype(tag);                                           \
      __VA_ARGS__                                                        \
    });                                                                  \
  }

void CopyInto(const Tensor& from, Tensor& to) {
  if (from.size_bytes() > 0) std::memcpy(to.mutable_raw(), from.raw(), from.size_bytes());
}

ElementType RealOf(ElementType e) { return ir::IsComplex(e) ? ir::ComplexPartType(e) : e; }

const ir::Type& Operand(const ir::Operation& op, int i) { return op.operand(i).type(); }

Work PricedAs(Work w, std::string what) {
  w.priced_as = std::move(what);
  return w;
}

Batch MatrixBatch(const ir::Operation& op, int i = 0) {
  return la::SplitBatch(Operand(op, i).shape());
}

// ------------------------------------------------------------ getrf

StatusOr<Signature> GetrfSignature(const ir::Operation& op) {
  const ir::Type& a = Operand(op, 0);
  const Batch b = MatrixBatch(op);
  return Signature{{a},
                   {a, TensorOf(kI32, Reshape(a.shape(), 2, {std::min(b.rows, b.cols)})),
                    TensorOf(kI32, Reshape(a.shape(), 2, {}))}};
}

// LU with partial pivoting: 2 m n k - (m + n) k^2 + 2/3 k^3 flops, k =
// min(m, n) (2/3 n^3 when square); k pivot reciprocals.
double LuFlops(double m, double n) {
  const double k = std::min(m, n);
  return 2 * m * n * k - (m + n) * k * k + 2 * k * k * k / 3;
}

Work GetrfWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  return PricedAs(
      la::FactorizationWork(op, b.batch, LuFlops(b.rows, b.cols), std::min(b.rows, b.cols)),
      "LAPACK getrf");
}

[[maybe_unused]] const bool kGetrf = RegisterFamily({
    .real = "getrf",
    .complex = "getrf",
    .signature = GetrfSignature,
    .eval = TPUSIM_LAPACK_EVAL({
      const Batch b = la::SplitBatch(in[0].shape());
      const int64_t k = std::min(b.rows, b.cols);
      CopyInto(in[0], out[0]);
      for (int64_t i = 0; i < b.batch; ++i) {
        la::Data<int32_t>(out[2])[i] =
            la::Getrf<T>(b.rows, b.cols, la::Data<T>(out[0]) + i * b.rows * b.cols,
                         la::Data<int32_t>(out[1]) + i * k);
      }
      return Status::Ok();
    }),
    .work = GetrfWork,
});

// ------------------------------------------------------------ geqrf / orgqr

StatusOr<Signature> GeqrfSignature(const ir::Operation& op) {
  const ir::Type& a = Operand(op, 0);
  const Batch b = MatrixBatch(op);
  return Signature{{a},
                   {a, TensorOf(a.element(), Reshape(a.shape(), 2, {std::min(b.rows, b.cols)}))}};
}

// Householder QR: 2 m n^2 - 2/3 n^3 flops for m >= n (2 n m^2 - 2/3 m^3
// otherwise); a norm and a division per reflector.
double QrFlops(double m, double n) {
  const double k = std::min(m, n), l = std::max(m, n);
  return 2 * l * k * k - 2 * k * k * k / 3;
}

Work GeqrfWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  return PricedAs(
      la::FactorizationWork(op, b.batch, QrFlops(b.rows, b.cols), 2 * std::min(b.rows, b.cols)),
      "LAPACK geqrf");
}

[[maybe_unused]] const bool kGeqrf = RegisterFamily({
    .real = "geqrf",
    .complex = "geqrf",
    .signature = GeqrfSignature,
    .eval = TPUSIM_LAPACK_EVAL({
      const Batch b = la::SplitBatch(in[0].shape());
      const int64_t k = std::min(b.rows, b.cols);
      CopyInto(in[0], out[0]);
      for (int64_t i = 0; i < b.batch; ++i) {
        la::Geqrf<T>(b.rows, b.cols, la::Data<T>(out[0]) + i * b.rows * b.cols,
                     la::Data<T>(out[1]) + i * k);
      }
      return Status::Ok();
    }),
    .work = GeqrfWork,
});

// a [..., m, n] and taus [..., k] with m >= n >= k, as orgqr needs.
StatusOr<Signature> OrgqrSignature(const ir::Operation& op) {
  const ir::Type& a = Operand(op, 0);
  const ir::Type& taus = Operand(op, 1);
  const Batch b = MatrixBatch(op);
  const int64_t k = taus.rank() >= 1 ? taus.shape().back() : 0;
  if (b.rows < b.cols || k > b.cols) {
    return InvalidArgument("needs m >= n >= k for a of " + a.ToString() + " and taus of " +
                           taus.ToString());
  }
  return Signature{{a, TensorOf(a.element(), Reshape(a.shape(), 2, {k}))}, {a}};
}

// Forming Q from k reflectors: 4 m n k - 2 (m + n) k^2 + 4/3 k^3 flops.
double OrgqrFlops(double m, double n, double k) {
  return 4 * m * n * k - 2 * (m + n) * k * k + 4 * k * k * k / 3;
}

Work OrgqrWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  const ir::Type& taus = Operand(op, 1);
  const int64_t k = taus.rank() >= 1 ? taus.shape().back() : 0;
  return PricedAs(la::FactorizationWork(op, b.batch, OrgqrFlops(b.rows, b.cols, k), k),
                  "LAPACK orgqr");
}

template <typename T>
Status HouseholderProduct(const Tensor& a, const Tensor& taus, Tensor& q) {
  const Batch b = la::SplitBatch(a.shape());
  const int64_t k = taus.shape().back();
  CopyInto(a, q);
  for (int64_t i = 0; i < b.batch; ++i) {
    la::Orgqr<T>(b.rows, b.cols, k, la::Data<T>(q) + i * b.rows * b.cols, taus.data<T>() + i * k);
  }
  return Status::Ok();
}

[[maybe_unused]] const bool kOrgqr = RegisterFamily({
    .real = "orgqr",
    .complex = "ungqr",
    .operands = 2,
    .signature = OrgqrSignature,
    .eval = TPUSIM_LAPACK_EVAL({ return HouseholderProduct<T>(in[0], in[1], out[0]); }),
    .work = OrgqrWork,
});

// ------------------------------------------------------------ potrf

StatusOr<Signature> SquareSignature(const ir::Operation& op, std::vector<ir::Type> extra) {
  const ir::Type& a = Operand(op, 0);
  const Batch b = MatrixBatch(op);
  if (b.rows != b.cols) return InvalidArgument("needs square matrices, got " + a.ToString());
  std::vector<ir::Type> results{a};
  results.insert(results.end(), extra.begin(), extra.end());
  return Signature{{a}, results};
}

ir::Type Info(const ir::Operation& op) {
  return TensorOf(kI32, Reshape(Operand(op, 0).shape(), 2, {}));
}
ir::Type Vector(const ir::Operation& op, ElementType e, int64_t n) {
  return TensorOf(e, Reshape(Operand(op, 0).shape(), 2, {n}));
}

StatusOr<Signature> PotrfSignature(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(CharAttr(op, "uplo", "LU", 'L').status());
  return SquareSignature(op, {Info(op)});
}

// Cholesky: n^3 / 3 flops; n(n+1)/2 divisions and square roots.
Work PotrfWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  const double n = static_cast<double>(b.cols);
  return PricedAs(la::FactorizationWork(op, b.batch, n * n * n / 3, n * (n + 1) / 2),
                  "LAPACK potrf");
}

[[maybe_unused]] const bool kPotrf = RegisterFamily({
    .real = "potrf",
    .complex = "potrf",
    .signature = PotrfSignature,
    .eval = TPUSIM_LAPACK_EVAL({
      TPUSIM_ASSIGN_OR_RETURN(char uplo, CharAttr(op, "uplo", "LU", 'L'));
      const Batch b = la::SplitBatch(in[0].shape());
      CopyInto(in[0], out[0]);
      for (int64_t i = 0; i < b.batch; ++i) {
        la::Data<int32_t>(out[1])[i] =
            la::Potrf<T>(uplo, b.cols, la::Data<T>(out[0]) + i * b.cols * b.cols);
      }
      return Status::Ok();
    }),
    .work = PotrfWork,
});

// ------------------------------------------------------------ syevd / heevd

StatusOr<Signature> SyevdSignature(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(CharAttr(op, "uplo", "LU", 'L').status());
  TPUSIM_RETURN_IF_ERROR(CharAttr(op, "mode", "VN", 'V').status());
  const int64_t n = MatrixBatch(op).cols;
  return SquareSignature(op, {Vector(op, RealOf(Operand(op, 0).element()), n), Info(op)});
}

// Symmetric eigensolver (divide and conquer): ~9 n^3 flops with the
// eigenvectors (4/3 n^3 tridiagonal reduction, the merges and the back
// transformation), 4/3 n^3 for the eigenvalues alone; n^2 divisions.
Work SyevdWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  const double n = static_cast<double>(b.cols);
  const bool vectors = CharOr(op, "mode", "VN", 'V') == 'V';
  return PricedAs(la::FactorizationWork(op, b.batch, (vectors ? 9 : 4.0 / 3) * n * n * n, n * n),
                  "LAPACK syevd");
}

[[maybe_unused]] const bool kSyevd = RegisterFamily({
    .real = "syevd",
    .complex = "heevd",
    .signature = SyevdSignature,
    .eval = TPUSIM_LAPACK_EVAL({
      TPUSIM_ASSIGN_OR_RETURN(char uplo, CharAttr(op, "uplo", "LU", 'L'));
      TPUSIM_ASSIGN_OR_RETURN(char mode, CharAttr(op, "mode", "VN", 'V'));
      const int64_t n = la::SplitBatch(in[0].shape()).cols;
      const int64_t batch = la::SplitBatch(in[0].shape()).batch;
      CopyInto(in[0], out[0]);
      for (int64_t i = 0; i < batch; ++i) {
        la::Data<int32_t>(out[2])[i] = la::Syevd<T>(mode, uplo, n, la::Data<T>(out[0]) + i * n * n,
                                                    la::Data<Real<T>>(out[1]) + i * n);
      }
      return Status::Ok();
    }),
    .work = SyevdWork,
});

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

// SVD with M = max(m, n), k = min(m, n): 4 M^2 k + 8 M k^2 + 9 k^3 flops
// for full U and V^T, 6 M k^2 + 11 k^3 for the thin ones, 4 M k^2 - 4/3 k^3
// for the singular values alone (Golub & Van Loan's counts); k^2 divisions.
Work GesddWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  const double k = std::min(b.rows, b.cols), l = std::max(b.rows, b.cols);
  const char mode = CharOr(op, "mode", "ASN", 'A');
  const double flops = mode == 'A'   ? 4 * l * l * k + 8 * l * k * k + 9 * k * k * k
                       : mode == 'S' ? 6 * l * k * k + 11 * k * k * k
                                     : 4 * l * k * k - 4 * k * k * k / 3;
  return PricedAs(la::FactorizationWork(op, b.batch, flops, k * k), "LAPACK gesdd");
}

[[maybe_unused]] const bool kGesdd = RegisterFamily({
    .real = "gesdd",
    .complex = "gesdd",
    .signature = GesddSignature,
    .eval = TPUSIM_LAPACK_EVAL({
      TPUSIM_ASSIGN_OR_RETURN(char mode, CharAttr(op, "mode", "ASN", 'A'));
      const Batch b = la::SplitBatch(in[0].shape());
      const int64_t k = std::min(b.rows, b.cols);
      const int64_t ucols = out[2].shape().back();
      const int64_t vtrows = out[3].shape()[out[3].rank() - 2];
      CopyInto(in[0], out[0]);
      for (int64_t i = 0; i < b.batch; ++i) {
        la::Data<int32_t>(out[4])[i] = la::Gesdd<T>(
            mode, b.rows, b.cols, la::Data<T>(out[0]) + i * b.rows * b.cols,
            la::Data<Real<T>>(out[1]) + i * k, la::Data<T>(out[2]) + i * b.rows * ucols, ucols,
            la::Data<T>(out[3]) + i * vtrows * b.cols);
      }
      return Status::Ok();
    }),
    .work = GesddWork,
});

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

[[maybe_unused]] const bool kGees = RegisterFamily({
    .real = "gees",
    .complex = "gees",
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

[[maybe_unused]] const bool kGehrd = RegisterFamily({
    .real = "gehrd",
    .complex = "gehrd",
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

// ------------------------------------------------------------ sytrd / hetrd

StatusOr<Signature> SytrdSignature(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(CharAttr(op, "uplo", "LU", 'L').status());
  const ir::Type& a = Operand(op, 0);
  const int64_t n = MatrixBatch(op).cols;
  if (n < 1) return InvalidArgument("needs non-empty matrices, got " + a.ToString());
  const ElementType r = RealOf(a.element());
  return SquareSignature(
      op, {Vector(op, r, n), Vector(op, r, n - 1), Vector(op, a.element(), n - 1), Info(op)});
}

// Tridiagonal reduction: 4/3 n^3 flops; n divisions.
Work SytrdWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  const double n = static_cast<double>(b.cols);
  return PricedAs(la::FactorizationWork(op, b.batch, 4 * n * n * n / 3, n), "LAPACK sytrd");
}

[[maybe_unused]] const bool kSytrd = RegisterFamily({
    .real = "sytrd",
    .complex = "hetrd",
    .signature = SytrdSignature,
    .eval = TPUSIM_LAPACK_EVAL({
      TPUSIM_ASSIGN_OR_RETURN(char uplo, CharAttr(op, "uplo", "LU", 'L'));
      const Batch b = la::SplitBatch(in[0].shape());
      const int64_t n = b.cols;
      CopyInto(in[0], out[0]);
      for (int64_t i = 0; i < b.batch; ++i) {
        la::Data<int32_t>(out[4])[i] = la::Sytrd<T>(
            uplo, n, la::Data<T>(out[0]) + i * n * n, la::Data<Real<T>>(out[1]) + i * n,
            la::Data<Real<T>>(out[2]) + i * (n - 1), la::Data<T>(out[3]) + i * (n - 1));
      }
      return Status::Ok();
    }),
    .work = SytrdWork,
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

// Tridiagonal LU with partial pivoting: ~8 m flops to factor and 5 m per
// right-hand side to solve; a division per row and per solved element.
Work GtsvWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op, 3);
  const double m = static_cast<double>(b.rows), n = static_cast<double>(b.cols);
  return PricedAs(la::FactorizationWork(op, b.batch, 8 * m + 5 * m * n, m + m * n), "LAPACK gtsv");
}

[[maybe_unused]] const bool kGtsv = RegisterFamily({
    .real = "gtsv",
    .complex = "gtsv",
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
    RegisterFamily({.prefix = prefix,
                    .real = "trsm",
                    .complex = "trsm",
                    .operands = 2,
                    .trailing_optional = 1,
                    .matrix = 1,
                    .signature = TrsmSignature,
                    .eval = EvalTrsm,
                    .work = TrsmWork});
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

// Nonsymmetric eigenproblem: 10 n^3 flops for the eigenvalues (Hessenberg
// QR); with eigenvectors, 25 n^3 for the Schur vectors plus n^3 per side
// for the back-substitution (Golub & Van Loan); n^2 divisions.
Work GeevWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  const double n = static_cast<double>(b.cols);
  const int sides = (CharOr(op, "compute_left", "VN", 'V') == 'V') +
                    (CharOr(op, "compute_right", "VN", 'V') == 'V');
  const double flops = (sides == 0 ? 10 : 25 + sides) * n * n * n;
  return PricedAs(la::FactorizationWork(op, b.batch, flops, n * n), "LAPACK geev");
}

[[maybe_unused]] const bool kGeev = RegisterFamily({
    .real = "geev",
    .complex = "geev",
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
}  // namespace tpusim::ops
