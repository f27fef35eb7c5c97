// The TPU backend's linear algebra custom calls, as JAX's TPU lowerings
// emit them (jax/_src/lax/linalg.py): `Qr` (geqrf: the packed factor and
// the Householder taus), `ProductOfElementaryHouseholderReflectors` (orgqr:
// a, taus -> Q), `LuDecomposition` (LU, 0-based pivots, the permutation)
// and `Eigh` (eigenvectors, eigenvalues; backend_config "lower,sort,
// max_iter,tol"). Older exports return the results as one tuple; both forms
// run. All are batched over leading dimensions and computed with LAPACK in
// the operand's type (the TPU's own algorithms, e.g. Jacobi for Eigh, agree
// up to rounding, eigenvector signs and the order of equal eigenvalues).
// Priced on the vector units (lapack_glue.h, FactorizationWork).
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "ops/custom_calls/linalg/linalg_family.h"
#include "ops/kernels/lapack_glue.h"
#include "ops/util/work_util.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops::linalg {
namespace {

using ir::ElementType;
using la::Batch;
using la::Real;
using la::Reshape;
using la::TensorOf;

constexpr ElementType kI32 = ElementType::kSI32;

// Checks that the results are `expected`, flat or as one tuple.
Status ExpectResults(const ir::Operation& op, const std::vector<ir::Type>& expected) {
  std::vector<ir::Type> got = FlatResultTypes(op);
  if (got == expected) return Status::Ok();
  std::string want, have;
  for (const ir::Type& t : expected) want += (want.empty() ? "" : ", ") + t.ToString();
  for (const ir::Type& t : got) have += (have.empty() ? "" : ", ") + t.ToString();
  return InvalidArgument("gives results (" + want +
                         ") (or one tuple of them) for these operands, got (" + have + ")");
}

Batch OperandBatch(const ir::Operation& op) { return la::SplitBatch(op.operand(0).type().shape()); }

// Whether pricing, which may see a call its shape rule rejects, can read
// the matrix shape.
bool HasMatrixOperand(const ir::Operation& op) {
  return op.num_operands() >= 1 && op.operand(0).type().is_tensor() &&
         op.operand(0).type().rank() >= 2;
}

// ------------------------------------------------------------ Qr, Householder product

// LAPACK geqrf and orgqr as the CPU and GPU targets run them
// (linalg_family.h), the results flat or as one tuple.
Family TpuFamily(Family f, std::string priced_as) {
  f.tuple_results = true;
  f.work = [work = f.work, priced_as](const ir::Operation& op) {
    return PricedAs(work(op), priced_as);
  };
  return f;
}

[[maybe_unused]] const bool kQr =
    RegisterFamily("Qr", TpuFamily(GeqrfFamily(), "Householder QR (geqrf)"));
[[maybe_unused]] const bool kHouseholderProduct =
    RegisterFamily("ProductOfElementaryHouseholderReflectors",
                   TpuFamily(OrgqrFamily(), "Householder product (orgqr)"));

// ------------------------------------------------------------ LuDecomposition

Status VerifyLu(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(la::ExpectMatrixOperands(op, 1));
  const ir::Type& a = op.operand(0).type();
  const Batch b = OperandBatch(op);
  return ExpectResults(op, {a, TensorOf(kI32, Reshape(a.shape(), 2, {std::min(b.rows, b.cols)})),
                            TensorOf(kI32, Reshape(a.shape(), 2, {b.rows}))});
}

StatusOr<std::vector<Tensor>> EvalLu(EvalContext&, const ir::Operation& op,
                                     std::span<const Tensor> in) {
  TPUSIM_RETURN_IF_ERROR(la::LoadLapack());
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, AllocateFlat(op));
  la::Dispatch(in[0].element(), [&](auto tag) {
    using T = decltype(tag);
    const Batch b = la::SplitBatch(in[0].shape());
    const int64_t k = std::min(b.rows, b.cols);
    CopyInto(in[0], out[0]);
    for (int64_t i = 0; i < b.batch; ++i) {
      int32_t* pivots = la::Data<int32_t>(out[1]) + i * k;
      la::Getrf<T>(b.rows, b.cols, la::Data<T>(out[0]) + i * b.rows * b.cols, pivots);
      for (int64_t j = 0; j < k; ++j) --pivots[j];  // LAPACK's are 1-based
      la::PivotsToPermutation(pivots, k, b.rows, la::Data<int32_t>(out[2]) + i * b.rows);
    }
  });
  return InOpForm(op, std::move(out));
}

// As LAPACK getrf: 2 m n k - (m + n) k^2 + 2/3 k^3 flops; plus m ALU ops
// for the permutation.
Work LuWork(const ir::Operation& op) {
  if (!HasMatrixOperand(op)) return ReadsAndWrites(op);
  const Batch b = OperandBatch(op);
  Work w = la::FactorizationWork(op, b.batch, la::GetrfCost(b.rows, b.cols));
  w.AddVector(VectorClass::kAlu, b.batch * b.rows);
  return PricedAs(std::move(w), "LU with partial pivoting (getrf)");
}

TPUSIM_REGISTER_CUSTOM_CALL(
    {.target = "LuDecomposition", .verify = VerifyLu, .eval = EvalLu, .work = LuWork});

// ------------------------------------------------------------ Eigh

struct EighConfig {
  bool lower = true, sort = true;
  int64_t max_iter = 100;
};

// backend_config = "lower,sort_eigenvalues,max_iter,tolerance"; absent
// fields keep JAX's defaults.
StatusOr<EighConfig> GetEighConfig(const ir::Operation& op) {
  EighConfig c;
  ir::Attribute a = op.attr("backend_config");
  if (!a) return c;
  if (a.kind() != ir::Attribute::Kind::kString) {
    return InvalidArgument("backend_config must be the string \"lower,sort,max_iter,tol\"");
  }
  std::vector<std::string> fields;
  std::stringstream ss(a.str());
  for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
  auto flag = [&](size_t i, bool* v) -> Status {
    if (i >= fields.size()) return Status::Ok();
    if (fields[i] != "0" && fields[i] != "1") {
      return InvalidArgument("backend_config \"" + a.str() + "\": field " + std::to_string(i + 1) +
                             " must be 0 or 1");
    }
    *v = fields[i] == "1";
    return Status::Ok();
  };
  TPUSIM_RETURN_IF_ERROR(flag(0, &c.lower));
  TPUSIM_RETURN_IF_ERROR(flag(1, &c.sort));
  if (fields.size() > 2) {
    char* end = nullptr;
    c.max_iter = std::strtoll(fields[2].c_str(), &end, 10);
    if (end == fields[2].c_str() || *end != '\0' || c.max_iter < 1) {
      return InvalidArgument("backend_config \"" + a.str() +
                             "\": max_iter must be a positive integer");
    }
  }
  return c;
}

Status VerifyEigh(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(la::ExpectMatrixOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(GetEighConfig(op).status());
  const ir::Type& a = op.operand(0).type();
  const Batch b = OperandBatch(op);
  if (b.rows != b.cols) return InvalidArgument("needs square matrices, got " + a.ToString());
  const ElementType real =
      ir::IsComplex(a.element()) ? ir::ComplexPartType(a.element()) : a.element();
  return ExpectResults(op, {a, TensorOf(real, Reshape(a.shape(), 2, {b.cols}))});
}

// Eigenvalues ascending (LAPACK's order, which sort = 1 asks for and any
// order satisfies otherwise); eigenvectors are columns.
StatusOr<std::vector<Tensor>> EvalEigh(EvalContext&, const ir::Operation& op,
                                       std::span<const Tensor> in) {
  TPUSIM_RETURN_IF_ERROR(la::LoadLapack());
  TPUSIM_ASSIGN_OR_RETURN(EighConfig c, GetEighConfig(op));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, AllocateFlat(op));
  la::Dispatch(in[0].element(), [&](auto tag) {
    using T = decltype(tag);
    const Batch b = la::SplitBatch(in[0].shape());
    const int64_t n = b.cols;
    CopyInto(in[0], out[0]);
    for (int64_t i = 0; i < b.batch; ++i) {
      T* v = la::Data<T>(out[0]) + i * n * n;
      Real<T>* w = la::Data<Real<T>>(out[1]) + i * n;
      // No info result: where LAPACK fails (NaN input) the values are NaN,
      // as the TPU's Jacobi iteration gives.
      if (la::Syevd<T>('V', c.lower ? 'L' : 'U', n, v, w) != 0) {
        std::fill(v, v + n * n, T(std::numeric_limits<Real<T>>::quiet_NaN()));
        std::fill(w, w + n, std::numeric_limits<Real<T>>::quiet_NaN());
      }
    }
  });
  return InOpForm(op, std::move(out));
}

// The TPU runs cyclic Jacobi: a sweep makes n(n-1)/2 rotations, each
// updating two rows and two columns of A and two columns of V at 6 flops an
// element pair, ~9 n^3 flops and n^2 / 2 square roots and divisions. It
// converges quadratically after a linear start: priced as 1 + ceil(log2 n)
// sweeps, at most max_iter.
Work EighWork(const ir::Operation& op) {
  if (!HasMatrixOperand(op)) return ReadsAndWrites(op);
  const Batch b = OperandBatch(op);
  const double n = static_cast<double>(b.cols);
  StatusOr<EighConfig> c = GetEighConfig(op);
  const int64_t max_iter = c.ok() ? c->max_iter : 100;
  const double sweeps =
      std::min<double>(static_cast<double>(max_iter), 1 + std::ceil(std::log2(std::max(n, 1.0))));
  return PricedAs(la::FactorizationWork(op, b.batch, sweeps * 9 * n * n * n, sweeps * n * n / 2),
                  "Jacobi eigensolver (" + std::to_string(static_cast<int>(sweeps)) + " sweeps)");
}

TPUSIM_REGISTER_CUSTOM_CALL(
    {.target = "Eigh", .verify = VerifyEigh, .eval = EvalEigh, .work = EighWork});

}  // namespace
}  // namespace tpusim::ops::linalg
