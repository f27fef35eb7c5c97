// Dense linear algebra: stablehlo.triangular_solve and stablehlo.cholesky,
// over batches of matrices in the last two dimensions. Every floating type is
// computed in f64 (complex types in complex<f64>) and rounded once to the
// result type; these ops are small next to the matmuls that surround them.
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using c128 = std::complex<double>;

double Conj(double x) { return x; }
c128 Conj(c128 x) { return std::conj(x); }

// Loads elements [offset, offset + n) of `t` as S (double or complex<double>).
template <typename S>
std::vector<S> LoadBlock(const Tensor& t, int64_t offset, int64_t n) {
  std::vector<S> out(n);
  const ir::ElementType e = t.element();
  const int w = ir::StorageBytes(e);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = t.raw() + (offset + i) * w;
    if constexpr (std::is_same_v<S, c128>) {
      const ir::ElementType part = ir::ComplexPartType(e);
      out[i] = c128(numerics::LoadAsDouble(part, p), numerics::LoadAsDouble(part, p + w / 2));
    } else {
      out[i] = numerics::LoadAsDouble(e, p);
    }
  }
  return out;
}

template <typename S>
void StoreBlock(const std::vector<S>& v, int64_t offset, Tensor& t) {
  const ir::ElementType e = t.element();
  const int w = ir::StorageBytes(e);
  for (size_t i = 0; i < v.size(); ++i) {
    uint8_t* p = t.mutable_raw() + (offset + static_cast<int64_t>(i)) * w;
    if constexpr (std::is_same_v<S, c128>) {
      const ir::ElementType part = ir::ComplexPartType(e);
      numerics::StoreDouble(part, v[i].real(), p);
      numerics::StoreDouble(part, v[i].imag(), p + w / 2);
    } else {
      numerics::StoreDouble(e, v[i], p);
    }
  }
}

Status Error(const ir::Operation& op, const std::string& what) {
  return InvalidArgument("'" + op.name_str() + "' " + what);
}

bool GetBool(const ir::Operation& op, std::string_view key) {
  ir::Attribute a = op.attr(key);
  return a && a.kind() == ir::Attribute::Kind::kBool && a.bool_value();
}

Status ExpectFloatOrComplex(const ir::Operation& op, const ir::Type& t) {
  if (ir::IsFloat(t.element()) || ir::IsComplex(t.element())) return Status::Ok();
  return Error(op, "needs floating-point or complex tensors, got " + t.ToString());
}

// ------------------------------------------------------------ triangular_solve

struct SolveConfig {
  bool left_side, lower, unit_diagonal;
  std::string transpose;  // NO_TRANSPOSE, TRANSPOSE or ADJOINT
};

StatusOr<SolveConfig> GetSolveConfig(const ir::Operation& op) {
  SolveConfig c{GetBool(op, "left_side"), GetBool(op, "lower"), GetBool(op, "unit_diagonal"),
                GetEnumOr(op, "transpose_a", "NO_TRANSPOSE")};
  if (c.transpose != "NO_TRANSPOSE" && c.transpose != "TRANSPOSE" && c.transpose != "ADJOINT") {
    return Error(op, "transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT, got " +
                         c.transpose);
  }
  return c;
}

Status VerifyTriangularSolve(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_ASSIGN_OR_RETURN(SolveConfig c, GetSolveConfig(op));
  const ir::Type& a = op.operand(0).type();
  const ir::Type& b = op.operand(1).type();
  TPUSIM_RETURN_IF_ERROR(ExpectFloatOrComplex(op, a));
  if (a.element() != b.element()) return Error(op, "needs a and b of one element type");
  const int64_t r = a.rank();
  if (r < 2 || b.rank() != r) return Error(op, "needs a and b of equal rank >= 2");
  for (int64_t d = 0; d < r - 2; ++d) {
    if (a.dim(d) != b.dim(d)) return Error(op, "needs equal batch dimensions in a and b");
  }
  const int64_t n = a.dim(r - 1);
  if (a.dim(r - 2) != n || b.dim(c.left_side ? r - 2 : r - 1) != n) {
    return Error(op, "needs square a matching b's " +
                         std::string(c.left_side ? "rows" : "columns"));
  }
  return ExpectResultType(op, 0, b);
}

// Solves op(A) X = B (left) or X op(A) = B (right) for one matrix; A is n x n
// and B (overwritten by X) is rows x cols, both row-major.
template <typename S>
void SolveOne(const SolveConfig& c, int64_t n, const S* a, int64_t rows, int64_t cols, S* b) {
  // M = op(triangle of A), read only from the triangle the op names.
  const bool transposed = c.transpose != "NO_TRANSPOSE";
  const bool adjoint = c.transpose == "ADJOINT";
  auto m = [&](int64_t i, int64_t j) -> S {
    if (i == j && c.unit_diagonal) return S(1);
    const int64_t r = transposed ? j : i, q = transposed ? i : j;
    if (c.lower ? q > r : q < r) return S(0);
    return adjoint ? Conj(a[r * n + q]) : a[r * n + q];
  };
  const bool m_lower = c.lower != transposed;
  if (c.left_side) {
    // Forward (lower M) or backward substitution down each column of B.
    for (int64_t col = 0; col < cols; ++col) {
      for (int64_t t = 0; t < n; ++t) {
        const int64_t i = m_lower ? t : n - 1 - t;
        S sum = b[i * cols + col];
        for (int64_t s = 0; s < t; ++s) {
          const int64_t j = m_lower ? s : n - 1 - s;
          sum -= m(i, j) * b[j * cols + col];
        }
        b[i * cols + col] = sum / m(i, i);
      }
    }
    return;
  }
  // x M = b along each row: column j of an upper M depends on x[< j].
  for (int64_t row = 0; row < rows; ++row) {
    S* x = b + row * cols;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t j = m_lower ? n - 1 - t : t;
      S sum = x[j];
      for (int64_t s = 0; s < t; ++s) {
        const int64_t i = m_lower ? n - 1 - s : s;
        sum -= x[i] * m(i, j);
      }
      x[j] = sum / m(j, j);
    }
  }
}

template <typename S>
Tensor SolveAll(const SolveConfig& c, const Tensor& a, const Tensor& b, Tensor out) {
  const int64_t r = a.rank();
  const int64_t n = a.shape()[r - 1];
  const int64_t rows = b.shape()[r - 2], cols = b.shape()[r - 1];
  const int64_t batches = n == 0 ? 0 : a.num_elements() / (n * n);
  for (int64_t i = 0; i < batches; ++i) {
    std::vector<S> am = LoadBlock<S>(a, i * n * n, n * n);
    std::vector<S> bm = LoadBlock<S>(b, i * rows * cols, rows * cols);
    SolveOne<S>(c, n, am.data(), rows, cols, bm.data());
    StoreBlock(bm, i * rows * cols, out);
  }
  return out;
}

StatusOr<std::vector<Tensor>> EvalTriangularSolve(EvalContext&, const ir::Operation& op,
                                                  std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(SolveConfig c, GetSolveConfig(op));
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0).type()));
  if (ir::IsComplex(out.element())) {
    return std::vector<Tensor>{SolveAll<c128>(c, operands[0], operands[1], out)};
  }
  return std::vector<Tensor>{SolveAll<double>(c, operands[0], operands[1], out)};
}

// Substitution on the VPU: for each of b's n x m right-hand sides in a
// batch, n^2 / 2 multiply-adds per column (2 FLOPs each), and one divide by
// the diagonal per element of b.
Work TriangularSolveWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  if (op.num_operands() != 2 || op.operand(0).type().rank() < 2) return w;
  const int64_t n = op.operand(0).type().shape().back();
  const int64_t b = op.operand(1).type().num_elements();
  w.AddVector(VectorClass::kMultiply, n * b / 2);
  w.AddVector(VectorClass::kAlu, n * b / 2);
  if (!GetBool(op, "unit_diagonal")) w.AddVector(VectorClass::kDivide, b);
  w.flops = n * b;
  return w;
}

// Batch dimensions shared by every operand and the result, the last two
// of `a` whole: each matrix is solved on one device.
ShardingRule BatchedMatrixRule(const ir::Operation& op) {
  ShardingRule rule;
  const int64_t rank = op.result(0).type().rank();
  std::vector<int> dims(rank, -1);
  for (int64_t d = 0; d + 2 < rank; ++d) dims[d] = rule.Add(op.result(0).type().dim(d));
  for (int i = 0; i < op.num_operands(); ++i) rule.operands.push_back(dims);
  rule.results = {dims};
  return rule;
}

// Besides the batch, b's right-hand sides are independent: its columns
// (solving a x = b) or rows (x a = b).
std::optional<ShardingRule> TriangularSolveRule(const ir::Operation& op) {
  auto c = GetSolveConfig(op);
  const int64_t rank = op.result(0).type().rank();
  if (!c.ok() || op.num_operands() != 2 || rank < 2) return std::nullopt;
  ShardingRule rule = BatchedMatrixRule(op);
  const int64_t rhs = c->left_side ? rank - 1 : rank - 2;
  rule.operands[1][rhs] = rule.results[0][rhs] = rule.Add(op.result(0).type().dim(rhs));
  return rule;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.triangular_solve",
                    .verify = VerifyTriangularSolve,
                    .eval = EvalTriangularSolve,
                    .work = TriangularSolveWork,
                    .sharding_rule = TriangularSolveRule});

// ------------------------------------------------------------ cholesky

Status VerifyCholesky(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& a = op.operand(0).type();
  TPUSIM_RETURN_IF_ERROR(ExpectFloatOrComplex(op, a));
  if (a.rank() < 2 || a.dim(a.rank() - 1) != a.dim(a.rank() - 2)) {
    return Error(op, "needs square matrices in the last two dimensions, got " + a.ToString());
  }
  return ExpectResultType(op, 0, a);
}

// In place on one n x n row-major matrix: the lower factor L (A = L L^H) or
// the upper factor U = L^H (A = U^H U), reading only that triangle of A; the
// other triangle becomes zero. A matrix that is not positive definite gives
// NaNs from the square root of a negative pivot.
template <typename S>
void CholeskyOne(int64_t n, bool lower, S* a) {
  // Work on the lower triangle: for an upper input, L[i][j] = conj(A[j][i]).
  auto in = [&](int64_t i, int64_t j) { return lower ? a[i * n + j] : Conj(a[j * n + i]); };
  std::vector<S> l(n * n, S(0));
  for (int64_t j = 0; j < n; ++j) {
    double d = std::real(in(j, j));
    for (int64_t k = 0; k < j; ++k) d -= std::norm(l[j * n + k]);
    const double pivot = std::sqrt(d);
    l[j * n + j] = S(pivot);
    for (int64_t i = j + 1; i < n; ++i) {
      S s = in(i, j);
      for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * Conj(l[j * n + k]);
      l[i * n + j] = s / pivot;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) a[i * n + j] = lower ? l[i * n + j] : Conj(l[j * n + i]);
  }
}

template <typename S>
Tensor CholeskyAll(const Tensor& a, bool lower, Tensor out) {
  const int64_t n = a.shape().back();
  const int64_t batches = n == 0 ? 0 : a.num_elements() / (n * n);
  for (int64_t i = 0; i < batches; ++i) {
    std::vector<S> m = LoadBlock<S>(a, i * n * n, n * n);
    CholeskyOne<S>(n, lower, m.data());
    StoreBlock(m, i * n * n, out);
  }
  return out;
}

StatusOr<std::vector<Tensor>> EvalCholesky(EvalContext&, const ir::Operation& op,
                                           std::span<const Tensor> operands) {
  const bool lower = GetBool(op, "lower");
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0).type()));
  if (ir::IsComplex(out.element())) {
    return std::vector<Tensor>{CholeskyAll<c128>(operands[0], lower, out)};
  }
  return std::vector<Tensor>{CholeskyAll<double>(operands[0], lower, out)};
}

// n^3 / 6 multiply-adds per n x n matrix (n^3 / 3 FLOPs) on the VPU, plus a
// square root per pivot and a divide per element below it.
Work CholeskyWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  const ir::Type& a = op.operand(0).type();
  if (a.rank() < 2 || a.shape().back() == 0) return w;
  const int64_t n = a.shape().back();
  const int64_t batches = a.num_elements() / (n * n);
  w.AddVector(VectorClass::kMultiply, batches * n * n * n / 6);
  w.AddVector(VectorClass::kAlu, batches * n * n * n / 6);
  w.AddVector(VectorClass::kDivide, batches * n * (n + 1) / 2);
  w.flops = batches * n * n * n / 3;
  return w;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.cholesky",
                    .verify = VerifyCholesky,
                    .eval = EvalCholesky,
                    .work = CholeskyWork,
                    .sharding_rule = [](const ir::Operation& op) {
                      return op.result(0).type().rank() < 2
                                 ? std::nullopt
                                 : std::optional<ShardingRule>(BatchedMatrixRule(op));
                    }});

}  // namespace
}  // namespace tpusim::ops
