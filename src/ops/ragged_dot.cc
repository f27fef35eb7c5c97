// chlo.ragged_dot: a dot_general whose lhs has one ragged dimension split
// into consecutive groups by `group_sizes` (per batch or shared):
//   mode 1, ragged non-contracting dim: [b,m,k] x [g,b,k,n] -> [b,m,n], rows of
//     group i multiply rhs group i;
//   mode 2, ragged contracting dim:     [b,m,k] x [b,k,n]   -> [g,b,m,n], group
//     i contracts over its own slice of k;
//   mode 3, ragged batch dim:           [b,m,k] x [b,k,n]   -> [b,m,n].
// Rows (or batches, or k) past the sum of the group sizes contribute zero.
// Each group is one batched matmul of ops/kernels/matmul.h.
#include <algorithm>
#include <cstring>
#include <optional>

#include "ops/kernels/matmul.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

enum class Mode { kRows, kContracting, kBatch };

struct RaggedDims {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contract, rhs_contract;
  int64_t ragged = 0;
  std::optional<int64_t> group;  // rhs group dimension
};

struct Layout {
  Mode mode;
  int64_t groups;
  std::vector<int64_t> lhs_free, rhs_free;  // increasing; lhs_free holds a mode-1 ragged dim
  ir::Shape result;
};

Status Error(const ir::Operation& op, const std::string& what) {
  return InvalidArgument("'" + op.name_str() + "' " + what);
}

StatusOr<RaggedDims> GetRaggedDims(const ir::Operation& op) {
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute dn, GetAttr(op, "ragged_dot_dimension_numbers",
                                                    ir::Attribute::Kind::kStruct));
  auto ints = [&](std::string_view key) {
    ir::Attribute f = dn.Get(key);
    return f ? f.AsInts() : std::vector<int64_t>{};
  };
  RaggedDims d{ints("lhs_batching_dimensions"), ints("rhs_batching_dimensions"),
               ints("lhs_contracting_dimensions"), ints("rhs_contracting_dimensions")};
  std::vector<int64_t> ragged = ints("lhs_ragged_dimensions");
  std::vector<int64_t> group = ints("rhs_group_dimensions");
  if (ragged.size() != 1 || group.size() > 1) {
    return Error(op, "needs exactly one lhs ragged dimension and at most one rhs group dimension");
  }
  d.ragged = ragged[0];
  if (!group.empty()) d.group = group[0];
  return d;
}

// Distinct dimensions within [0, rank).
bool Distinct(std::vector<int64_t> dims, int64_t rank) {
  for (int64_t x : dims) {
    if (x < 0 || x >= rank) return false;
  }
  std::sort(dims.begin(), dims.end());
  return std::adjacent_find(dims.begin(), dims.end()) == dims.end();
}

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

StatusOr<Layout> GetLayout(const ir::Operation& op, const RaggedDims& d, const ir::Shape& lhs,
                           const ir::Shape& rhs, const ir::Shape& sizes) {
  const auto lr = static_cast<int64_t>(lhs.size()), rr = static_cast<int64_t>(rhs.size());
  if (d.lhs_batch.size() != d.rhs_batch.size() || d.lhs_contract.size() != d.rhs_contract.size()) {
    return Error(op, "needs as many lhs as rhs batching and contracting dimensions");
  }
  std::vector<int64_t> rhs_used = Concat(d.rhs_batch, d.rhs_contract);
  if (d.group) rhs_used.push_back(*d.group);
  if (!Distinct(Concat(d.lhs_batch, d.lhs_contract), lr) || !Distinct(rhs_used, rr) ||
      d.ragged < 0 || d.ragged >= lr) {
    return Error(op, "has repeated or out-of-range dimension numbers");
  }
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    if (lhs[d.lhs_batch[i]] != rhs[d.rhs_batch[i]]) return Error(op, "batch sizes differ");
  }
  for (size_t i = 0; i < d.lhs_contract.size(); ++i) {
    if (lhs[d.lhs_contract[i]] != rhs[d.rhs_contract[i]]) {
      return Error(op, "contracting sizes differ");
    }
  }
  Layout l;
  auto in = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  l.mode = in(d.lhs_batch, d.ragged)      ? Mode::kBatch
           : in(d.lhs_contract, d.ragged) ? Mode::kContracting
                                          : Mode::kRows;
  if ((l.mode == Mode::kRows) != d.group.has_value()) {
    return Error(op, "needs an rhs group dimension exactly when the ragged dimension is a "
                     "non-contracting lhs dimension");
  }
  if (sizes.empty()) return Error(op, "needs group_sizes of rank >= 1");
  l.groups = sizes.back();
  if (d.group && rhs[*d.group] != l.groups) {
    return Error(op, "rhs group dimension must have one entry per group");
  }
  // group_sizes is [g] or, outside mode 3, [batch..., g] (sizes per batch).
  bool per_batch = sizes.size() == d.lhs_batch.size() + 1 && l.mode != Mode::kBatch;
  for (size_t i = 0; per_batch && i < d.lhs_batch.size(); ++i) {
    per_batch = sizes[i] == lhs[d.lhs_batch[i]];
  }
  if (sizes.size() != 1 && !per_batch) {
    return Error(op, "group_sizes must have shape [groups] or [batch..., groups]");
  }
  l.lhs_free = RemainingDims(lr, Concat(d.lhs_batch, d.lhs_contract));
  l.rhs_free = RemainingDims(rr, rhs_used);
  if (l.mode == Mode::kContracting) l.result.push_back(l.groups);
  for (int64_t x : d.lhs_batch) l.result.push_back(lhs[x]);
  for (int64_t x : l.lhs_free) l.result.push_back(lhs[x]);
  for (int64_t x : l.rhs_free) l.result.push_back(rhs[x]);
  return l;
}

Status VerifyRaggedDot(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 3));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& result = op.result(0).type();
  TPUSIM_RETURN_IF_ERROR(VerifyMatmulTypes(op, op.operand(0).type().element(),
                                           op.operand(1).type().element(), result.element()));
  TPUSIM_RETURN_IF_ERROR(VerifyPrecisionConfig(op));
  if (!ir::IsInteger(op.operand(2).type().element())) {
    return Error(op, "needs integer group_sizes");
  }
  TPUSIM_ASSIGN_OR_RETURN(RaggedDims d, GetRaggedDims(op));
  TPUSIM_ASSIGN_OR_RETURN(Layout l, GetLayout(op, d, op.operand(0).type().shape(),
                                              op.operand(1).type().shape(),
                                              op.operand(2).type().shape()));
  return ExpectResultType(op, 0, ir::Type::Tensor(result.element(), l.result));
}

// ------------------------------------------------------------ evaluation

// Group g of batch b covers [starts[b][g], starts[b][g + 1]) of a ragged
// dimension of size `limit`; sizes past the end are clamped to it and
// negative sizes count as zero.
std::vector<std::vector<int64_t>> GroupStarts(const Tensor& sizes, int64_t batches,
                                              int64_t limit) {
  const int64_t g = sizes.shape().back();
  const bool per_batch = sizes.rank() > 1;
  const int w = ir::StorageBytes(sizes.element());
  std::vector<std::vector<int64_t>> starts(batches, std::vector<int64_t>(g + 1, 0));
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < g; ++i) {
      const int64_t at = (per_batch ? b * g : 0) + i;
      const int64_t n = numerics::LoadAsInt64(sizes.element(), sizes.raw() + at * w);
      starts[b][i + 1] = std::min(limit, starts[b][i] + std::max<int64_t>(n, 0));
    }
  }
  return starts;
}

// Copies a [1, rows, n] product into rows [row0, row0 + rows) of batch b of
// a dense [batches, total_rows, n] tensor.
void CopyRows(const Tensor& part, int64_t b, int64_t row0, int64_t total_rows, Tensor& dst) {
  const int w = ir::StorageBytes(dst.element());
  const int64_t n = part.shape()[2];
  std::memcpy(dst.mutable_raw() + ((b * total_rows + row0) * n) * w, part.raw(),
              part.num_elements() * w);
}

// Mode 1. Rows are computed with the ragged dimension outermost, then moved
// to the result's dimension order.
StatusOr<Tensor> EvalRows(const RaggedDims& d, const Layout& l, const Tensor& lhs,
                          const Tensor& rhs, const Tensor& sizes, const ir::Type& result_type,
                          const MatmulNumerics& num) {
  std::vector<int64_t> others;
  for (int64_t x : l.lhs_free) {
    if (x != d.ragged) others.push_back(x);
  }
  Tensor lhs_packed, rhs_packed;
  TPUSIM_ASSIGN_OR_RETURN(MatrixView lv, GroupedView(lhs, d.lhs_batch, Concat({d.ragged}, others),
                                                     d.lhs_contract, &lhs_packed));
  TPUSIM_ASSIGN_OR_RETURN(MatrixView rv, GroupedView(rhs, Concat({*d.group}, d.rhs_batch),
                                                     d.rhs_contract, l.rhs_free, &rhs_packed));
  const int64_t batches = DimsProduct(lhs.shape(), d.lhs_batch);
  const int64_t inner = DimsProduct(lhs.shape(), others);
  const int64_t ragged = lhs.shape()[d.ragged];
  const int64_t k = DimsProduct(lhs.shape(), d.lhs_contract);
  const int64_t n = DimsProduct(rhs.shape(), l.rhs_free);
  TPUSIM_ASSIGN_OR_RETURN(Tensor rows, Tensor::Allocate(ir::Type::Tensor(
                                           result_type.element(), {batches, ragged * inner, n})));
  const auto starts = GroupStarts(sizes, batches, ragged);
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t g = 0; g < l.groups; ++g) {
      const int64_t r0 = starts[b][g], r1 = starts[b][g + 1];
      if (r1 <= r0) continue;
      MatmulProblem p{.batch = 1, .m = (r1 - r0) * inner, .k = k, .n = n, .lhs = lv, .rhs = rv};
      p.lhs.offset += b * lv.strides[0] + r0 * inner * lv.strides[1];
      p.rhs.offset += (g * batches + b) * rv.strides[0];
      TPUSIM_ASSIGN_OR_RETURN(Tensor part, BatchedMatmul(p, result_type.element(), num));
      CopyRows(part, b, r0 * inner, ragged * inner, rows);
    }
  }
  // rows is [batch..., ragged, others..., rhs free...]; the result orders the
  // lhs free dimensions increasingly.
  ir::Shape shape;
  std::vector<int64_t> result_axis;
  const size_t nb = d.lhs_batch.size();
  auto free_pos = [&](int64_t dim) {
    return nb + (std::find(l.lhs_free.begin(), l.lhs_free.end(), dim) - l.lhs_free.begin());
  };
  for (size_t i = 0; i < nb; ++i) {
    shape.push_back(lhs.shape()[d.lhs_batch[i]]);
    result_axis.push_back(i);
  }
  for (int64_t dim : Concat({d.ragged}, others)) {
    shape.push_back(lhs.shape()[dim]);
    result_axis.push_back(free_pos(dim));
  }
  for (size_t i = 0; i < l.rhs_free.size(); ++i) {
    shape.push_back(rhs.shape()[l.rhs_free[i]]);
    result_axis.push_back(nb + l.lhs_free.size() + i);
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(result_type));
  const std::vector<int64_t> rs = RowMajorStrides(result_type.shape());
  std::vector<int64_t> dst;
  for (size_t a : result_axis) dst.push_back(rs[a]);
  StridedCopier(ir::StorageBytes(out.element()), shape, RowMajorStrides(shape), dst)
      .Run(rows.raw(), out.mutable_raw());
  return out;
}

// Mode 2: the ragged contracting dimension goes first among the contracting
// dimensions, so each group's slice of k is contiguous in the collapsed k.
StatusOr<Tensor> EvalContracting(const RaggedDims& d, const Layout& l, const Tensor& lhs,
                                 const Tensor& rhs, const Tensor& sizes,
                                 const ir::Type& result_type, const MatmulNumerics& num) {
  std::vector<int64_t> lc = d.lhs_contract, rc = d.rhs_contract;
  const auto at = std::find(lc.begin(), lc.end(), d.ragged) - lc.begin();
  std::rotate(lc.begin(), lc.begin() + at, lc.begin() + at + 1);
  std::rotate(rc.begin(), rc.begin() + at, rc.begin() + at + 1);
  Tensor lhs_packed, rhs_packed;
  TPUSIM_ASSIGN_OR_RETURN(MatrixView lv,
                          GroupedView(lhs, d.lhs_batch, l.lhs_free, lc, &lhs_packed));
  TPUSIM_ASSIGN_OR_RETURN(MatrixView rv,
                          GroupedView(rhs, d.rhs_batch, rc, l.rhs_free, &rhs_packed));
  const int64_t batches = DimsProduct(lhs.shape(), d.lhs_batch);
  const int64_t m = DimsProduct(lhs.shape(), l.lhs_free);
  const int64_t n = DimsProduct(rhs.shape(), l.rhs_free);
  const int64_t ragged = lhs.shape()[d.ragged];
  const int64_t inner = ragged == 0 ? 0 : DimsProduct(lhs.shape(), lc) / ragged;
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(result_type));
  const auto starts = GroupStarts(sizes, batches, ragged);
  for (int64_t g = 0; g < l.groups; ++g) {
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t k0 = starts[b][g] * inner, k1 = starts[b][g + 1] * inner;
      MatmulProblem p{.batch = 1, .m = m, .k = k1 - k0, .n = n, .lhs = lv, .rhs = rv};
      p.lhs.offset += b * lv.strides[0] + k0 * lv.strides[2];
      p.rhs.offset += b * rv.strides[0] + k0 * rv.strides[1];
      TPUSIM_ASSIGN_OR_RETURN(Tensor part, BatchedMatmul(p, result_type.element(), num));
      CopyRows(part, g * batches + b, 0, m, out);
    }
  }
  return out;
}

// Mode 3: an ordinary batched product, with batches past the groups zeroed.
StatusOr<Tensor> EvalBatch(const RaggedDims& d, const Layout& l, const Tensor& lhs,
                           const Tensor& rhs, const Tensor& sizes, const ir::Type& result_type,
                           const MatmulNumerics& num) {
  Tensor lhs_packed, rhs_packed;
  TPUSIM_ASSIGN_OR_RETURN(MatrixView lv, GroupedView(lhs, d.lhs_batch, l.lhs_free,
                                                     d.lhs_contract, &lhs_packed));
  TPUSIM_ASSIGN_OR_RETURN(MatrixView rv, GroupedView(rhs, d.rhs_batch, d.rhs_contract,
                                                     l.rhs_free, &rhs_packed));
  MatmulProblem p{.batch = DimsProduct(lhs.shape(), d.lhs_batch),
                  .m = DimsProduct(lhs.shape(), l.lhs_free),
                  .k = DimsProduct(lhs.shape(), d.lhs_contract),
                  .n = DimsProduct(rhs.shape(), l.rhs_free), .lhs = lv, .rhs = rv};
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, BatchedMatmul(p, result_type.element(), num));
  const int64_t ragged = lhs.shape()[d.ragged];
  const int64_t end = GroupStarts(sizes, 1, ragged)[0].back();
  // The flat batch index b has ragged coordinate (b / inner) % ragged.
  const auto pos = std::find(d.lhs_batch.begin(), d.lhs_batch.end(), d.ragged) -
                   d.lhs_batch.begin();
  const int64_t inner = DimsProduct(
      lhs.shape(), std::vector<int64_t>(d.lhs_batch.begin() + pos + 1, d.lhs_batch.end()));
  const int64_t block = p.m * p.n * ir::StorageBytes(out.element());
  for (int64_t b = 0; b < p.batch; ++b) {
    if ((b / inner) % ragged >= end) std::memset(out.mutable_raw() + b * block, 0, block);
  }
  return out.Reshaped(result_type.shape());
}

StatusOr<std::vector<Tensor>> EvalRaggedDot(EvalContext& ctx, const ir::Operation& op,
                                            std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(RaggedDims d, GetRaggedDims(op));
  TPUSIM_ASSIGN_OR_RETURN(Layout l, GetLayout(op, d, operands[0].shape(), operands[1].shape(),
                                              operands[2].shape()));
  TPUSIM_ASSIGN_OR_RETURN(MatmulNumerics num, SelectMatmulNumerics(ctx, op));
  const ir::Type& type = op.result(0).type();
  StatusOr<Tensor> out = Status(StatusCode::kInternal, "unreachable ragged_dot mode");
  switch (l.mode) {
    case Mode::kRows:
      out = EvalRows(d, l, operands[0], operands[1], operands[2], type, num);
      break;
    case Mode::kContracting:
      out = EvalContracting(d, l, operands[0], operands[1], operands[2], type, num);
      break;
    case Mode::kBatch:
      out = EvalBatch(d, l, operands[0], operands[1], operands[2], type, num);
      break;
  }
  TPUSIM_RETURN_IF_ERROR(out.status());
  return std::vector<Tensor>{std::move(out).value()};
}

// Group sizes are run-time values, so the groups are taken as equal: one MXU
// product per group (each loads its own weights), splitting the ragged rows
// (mode 1) or contraction (mode 2) among them. FLOPs are the full product's.
Work RaggedDotWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  auto d = GetRaggedDims(op);
  if (!d.ok() || op.num_operands() != 3) return w;
  const ir::Shape& lhs = op.operand(0).type().shape();
  const ir::Shape& rhs = op.operand(1).type().shape();
  auto l = GetLayout(op, *d, lhs, rhs, op.operand(2).type().shape());
  if (!l.ok() || l->groups <= 0) return w;
  const int64_t g = l->groups, batch = DimsProduct(lhs, d->lhs_batch);
  const int64_t m = DimsProduct(lhs, l->lhs_free), k = DimsProduct(lhs, d->lhs_contract);
  const int64_t n = DimsProduct(rhs, l->rhs_free);
  auto per_group = [g](int64_t x) { return (x + g - 1) / g; };
  switch (l->mode) {
    case Mode::kRows:
      w.matmuls.push_back(MxuWork(op, batch * g, per_group(m), k, n));
      break;
    case Mode::kContracting:
      w.matmuls.push_back(MxuWork(op, batch * g, m, per_group(k), n));
      break;
    case Mode::kBatch:
      w.matmuls.push_back(MxuWork(op, batch, m, k, n));
      break;
  }
  w.flops = 2 * batch * m * k * n;
  return w;
}

TPUSIM_REGISTER_OP({.name = "chlo.ragged_dot", .verify = VerifyRaggedDot,
                    .eval = EvalRaggedDot, .work = RaggedDotWork});

}  // namespace
}  // namespace tpusim::ops
