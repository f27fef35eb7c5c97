// Data-movement ops that rearrange elements without computing on them:
// broadcast_in_dim, reshape, transpose, reverse, concatenate, slice, pad and
// iota. Every copy moves stored bytes through StridedCopier, so one code path
// serves all element types.
#include "ops/layout_ops.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/parallel.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"
#include "tpusim/ir/dynamic.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

// A tensor operand and result with the same element type.
Status ExpectUnaryLayout(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  return CheckSameElement(op, "result", op.result(0).type(), op.operand(0).type().element());
}

int Width(const Tensor& t) { return ir::StorageBytes(t.element()); }

// ---- broadcast_in_dim: result[i] = operand[i at broadcast_dimensions] ----

Status VerifyBroadcastInDim(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectUnaryLayout(op));
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "broadcast_dimensions"));
  return CheckBroadcastInDim(op, op.operand(0).type(), op.result(0).type(), dims);
}

StatusOr<std::vector<Tensor>> EvalBroadcastInDim(EvalContext&, const ir::Operation& op,
                                                 std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "broadcast_dimensions"));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, BroadcastInDim(in[0], op.result(0).type(), dims));
  return std::vector<Tensor>{std::move(r)};
}

// An operand dimension shares its factor with the result dimension it
// becomes, unless it is broadcast from size 1.
std::optional<ShardingRule> BroadcastInDimRule(const ir::Operation& op) {
  auto dims = GetInts(op, "broadcast_dimensions");
  if (!dims.ok()) return std::nullopt;
  const ir::Type& in = op.operand(0).type();
  const ir::Type& out = op.result(0).type();
  ShardingRule rule;
  std::vector<int>& result = rule.results.emplace_back();
  for (int64_t size : out.shape()) result.push_back(rule.Add(size));
  std::vector<int>& operand = rule.operands.emplace_back(in.rank(), -1);
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (in.dim(i) == out.dim((*dims)[i])) operand[i] = result[(*dims)[i]];
  }
  return rule;
}

// A dynamic result dimension takes the size of the operand dimension
// mapped to it (jax.export spells broadcasts of dynamic sizes with
// dynamic_broadcast_in_dim, so this is rare).
StatusOr<std::vector<ir::Type>> InferBroadcastInDim(const ir::Operation& op, Values) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, 1));
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "broadcast_dimensions"));
  const ir::Type& operand = op.operand(0).type();
  ir::Shape shape = op.result(0).type().shape();
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "broadcast_dimensions", dims, operand.rank()));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0 && dims[i] < static_cast<int64_t>(shape.size()) &&
        shape[dims[i]] == ir::kDynamicDim) {
      shape[dims[i]] = operand.dim(static_cast<int64_t>(i));
    }
  }
  return OneResult(op, std::move(shape));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.broadcast_in_dim",
                    .verify = VerifyBroadcastInDim,
                    .infer = InferBroadcastInDim,
                    .eval = EvalBroadcastInDim,
                    .work = CopyWork,
                    .sharding_rule = BroadcastInDimRule});

// ---- reshape: same elements in the same row-major order ----

Status VerifyReshape(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectUnaryLayout(op));
  if (op.operand(0).type().num_elements() != op.result(0).type().num_elements()) {
    return OpError(op, "cannot reshape " + op.operand(0).type().ToString() + " to " +
                           op.result(0).type().ToString());
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalReshape(EvalContext&, const ir::Operation& op,
                                          std::span<const Tensor> in) {
  // Tensors are immutable once returned, so the result shares storage.
  return std::vector<Tensor>{in[0].Reshaped(op.result(0).type().shape())};
}

// Dimensions kept whole by the reshape share a factor. Where dimensions
// merge or split, the major ones of each side share a factor that any
// divisor of both may split, as their blocks of elements are the same; the
// minor ones stay whole.
std::optional<ShardingRule> ReshapeRule(const ir::Operation& op) {
  const ir::Shape& a = op.operand(0).type().shape();
  const ir::Shape& b = op.result(0).type().shape();
  if (ir::NumElements(a) == 0) return std::nullopt;
  ShardingRule rule;
  std::vector<int>& in = rule.operands.emplace_back(a.size(), -1);
  std::vector<int>& out = rule.results.emplace_back(b.size(), -1);
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == 1 || b[j] == 1) {  // size-1 dimensions come and go
      a[i] == 1 ? ++i : ++j;
      continue;
    }
    const int f = in[i] = out[j] = rule.Add(std::gcd(a[i], b[j]));
    rule.factors[f].splits_unevenly = a[i] == b[j];  // kept whole: rows stay in place
    int64_t pa = a[i++], pb = b[j++];
    while (pa != pb) pa < pb ? pa *= a[i++] : pb *= b[j++];
  }
  return rule;
}

StatusOr<std::vector<ir::Type>> InferReshape(const ir::Operation& op, Values) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, 1));
  TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape, ReshapedShape(op, op.operand(0).type().shape(),
                                                         op.result(0).type().shape()));
  return OneResult(op, std::move(shape));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.reshape",
                    .verify = VerifyReshape,
                    .infer = InferReshape,
                    .eval = EvalReshape,
                    .work = ReshapeWork,
                    .sharding_rule = ReshapeRule});

// ---- transpose: result_index[d] = operand_index[permutation[d]] ----

Status VerifyTranspose(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectUnaryLayout(op));
  TPUSIM_ASSIGN_OR_RETURN(auto perm, GetInts(op, "permutation"));
  const ir::Type& operand = op.operand(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "permutation", perm, operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckDimsInRange(op, "permutation", perm, operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckUnique(op, "permutation", perm));
  ir::Shape shape;
  for (int64_t p : perm) shape.push_back(operand.dim(p));
  return ExpectResultType(op, 0, ir::Type::Tensor(operand.element(), shape));
}

StatusOr<std::vector<Tensor>> EvalTranspose(EvalContext&, const ir::Operation& op,
                                            std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(auto perm, GetInts(op, "permutation"));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::AllocateUninitialized(op.result(0).type()));
  const std::vector<int64_t> in_strides = RowMajorStrides(in[0].shape());
  std::vector<int64_t> src_strides;
  for (int64_t p : perm) src_strides.push_back(in_strides[p]);
  StridedCopier(Width(r), r.shape(), src_strides, RowMajorStrides(r.shape()))
      .Run(in[0].raw(), r.mutable_raw());
  return std::vector<Tensor>{std::move(r)};
}

// A transpose whose result layout keeps the operand's bytes where they lie
// is a bitcast; otherwise it moves elements (RelayoutWork).
Work TransposeWork(const ir::Operation& op) {
  auto perm = GetInts(op, "permutation");
  if (!perm.ok()) return CopyWork(op);
  return RelayoutWork(op, *perm, /*bitcast_is_free=*/true);
}

std::optional<ShardingRule> TransposeRule(const ir::Operation& op) {
  auto perm = GetInts(op, "permutation");
  if (!perm.ok()) return std::nullopt;
  ShardingRule rule;
  std::vector<int>& in = rule.operands.emplace_back();
  for (int64_t size : op.operand(0).type().shape()) in.push_back(rule.Add(size));
  std::vector<int>& out = rule.results.emplace_back();
  for (int64_t p : *perm) out.push_back(in[p]);
  return rule;
}

StatusOr<std::vector<ir::Type>> InferTranspose(const ir::Operation& op, Values) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, 1));
  TPUSIM_ASSIGN_OR_RETURN(auto perm, GetInts(op, "permutation"));
  const ir::Type& operand = op.operand(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckDimsInRange(op, "permutation", perm, operand.rank()));
  ir::Shape shape;
  for (int64_t p : perm) shape.push_back(operand.dim(p));
  return OneResult(op, std::move(shape));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.transpose",
                    .verify = VerifyTranspose,
                    .infer = InferTranspose,
                    .eval = EvalTranspose,
                    .work = TransposeWork,
                    .sharding_rule = TransposeRule});

// ---- reverse: reversed order along `dimensions` ----

Status VerifyReverse(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectUnaryLayout(op));
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, 0, op.operand(0).type()));
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "dimensions"));
  TPUSIM_RETURN_IF_ERROR(CheckUnique(op, "dimensions", dims));
  return CheckDimsInRange(op, "dimensions", dims, op.operand(0).type().rank());
}

StatusOr<std::vector<Tensor>> EvalReverse(EvalContext&, const ir::Operation& op,
                                          std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "dimensions"));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::AllocateUninitialized(op.result(0).type()));
  const std::vector<int64_t> strides = RowMajorStrides(r.shape());
  std::vector<int64_t> src_strides = strides;
  int64_t src_start = 0;  // the operand element that lands at result index 0
  for (int64_t d : dims) {
    if (r.shape()[d] == 0) continue;
    src_start += (r.shape()[d] - 1) * strides[d];
    src_strides[d] = -strides[d];
  }
  StridedCopier(Width(r), r.shape(), src_strides, strides)
      .Run(in[0].raw() + src_start * Width(r), r.mutable_raw());
  return std::vector<Tensor>{std::move(r)};
}

// Reversed dimensions stay whole: a device's tile would come from another.
std::optional<ShardingRule> ReverseRule(const ir::Operation& op) {
  auto dims = GetInts(op, "dimensions");
  if (!dims.ok()) return std::nullopt;
  ShardingRule rule;
  std::vector<int> factors;
  const ir::Shape& shape = op.operand(0).type().shape();
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const bool reversed = std::find(dims->begin(), dims->end(), d) != dims->end();
    factors.push_back(rule.Add(shape[d], /*shardable=*/!reversed));
  }
  rule.operands = {factors};
  rule.results = {factors};
  return rule;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.reverse",
                    .verify = VerifyReverse,
                    .infer = InferSameAsOperands,
                    .eval = EvalReverse,
                    .work = CopyWork,
                    .sharding_rule = ReverseRule});

// ---- concatenate: inputs laid end to end along `dimension` ----

Status VerifyConcatenate(const ir::Operation& op) {
  if (op.num_operands() == 0) return OpError(op, "needs at least one input");
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute dim_attr,
                          GetAttr(op, "dimension", ir::Attribute::Kind::kInt));
  const int64_t dim = dim_attr.int_value();
  const ir::Type& first = op.operand(0).type();
  if (dim < 0 || dim >= first.rank()) {
    return OpError(op, "dimension " + std::to_string(dim) + " is out of range for " +
                           first.ToString());
  }
  ir::Shape shape = first.shape();
  shape[dim] = 0;
  for (int i = 0; i < op.num_operands(); ++i) {
    const ir::Type& t = op.operand(i).type();
    ir::Shape s = t.shape();
    if (t.element() != first.element() || t.rank() != first.rank()) {
      return OpError(op, "input " + std::to_string(i) + " has type " + t.ToString() +
                             ", incompatible with " + first.ToString());
    }
    s[dim] = first.dim(dim);
    if (s != first.shape()) {
      return OpError(op, "input " + std::to_string(i) + " has type " + t.ToString() +
                             ", which differs from " + first.ToString() +
                             " outside dimension " + std::to_string(dim));
    }
    shape[dim] += t.dim(dim);
  }
  return ExpectResultType(op, 0, ir::Type::Tensor(first.element(), shape));
}

StatusOr<std::vector<Tensor>> EvalConcatenate(EvalContext&, const ir::Operation& op,
                                              std::span<const Tensor> in) {
  const int64_t dim = op.attr("dimension").int_value();
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::AllocateUninitialized(op.result(0).type()));
  if (r.size_bytes() == 0) return std::vector<Tensor>{std::move(r)};
  // Viewed as [outer, dim * inner] rows, each input fills a column block.
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= r.shape()[d];
  const int64_t row_bytes = r.size_bytes() / outer;
  uint8_t* out = r.mutable_raw();
  // Rows go to threads; within a row, each input's block in turn.
  ParallelFor(outer, std::max<int64_t>(1, (int64_t{1} << 18) / row_bytes),
              [&](int64_t begin, int64_t end) {
                int64_t col = 0;
                for (const Tensor& t : in) {
                  const int64_t chunk = t.size_bytes() / outer;
                  for (int64_t o = begin; o < end && chunk > 0; ++o) {
                    std::memcpy(out + o * row_bytes + col, t.raw() + o * chunk, chunk);
                  }
                  col += chunk;
                }
              });
  return std::vector<Tensor>{std::move(r)};
}

std::optional<ShardingRule> ConcatenateRule(const ir::Operation& op) {
  return PositionalShardingRule(op, {op.attr("dimension").int_value()});
}

StatusOr<std::vector<ir::Type>> InferConcatenate(const ir::Operation& op, Values) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, 1));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute dim_attr,
                          GetAttr(op, "dimension", ir::Attribute::Kind::kInt));
  const int64_t dim = dim_attr.int_value();
  ir::Shape shape = op.operand(0).type().shape();
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size())) {
    return OpError(op, "dimension " + std::to_string(dim) + " is out of range");
  }
  for (int i = 1; i < op.num_operands(); ++i) {
    if (op.operand(i).type().rank() != static_cast<int64_t>(shape.size())) {
      return OpError(op, "inputs must have one rank");
    }
    shape[dim] += op.operand(i).type().dim(dim);
  }
  return OneResult(op, std::move(shape));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.concatenate",
                    .verify = VerifyConcatenate,
                    .infer = InferConcatenate,
                    .eval = EvalConcatenate,
                    .work = CopyWork,
                    .sharding_rule = ConcatenateRule});

// ---- slice: operand[start + i * stride] ----

Status VerifySlice(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectUnaryLayout(op));
  TPUSIM_ASSIGN_OR_RETURN(auto start, GetInts(op, "start_indices"));
  TPUSIM_ASSIGN_OR_RETURN(auto limit, GetInts(op, "limit_indices"));
  TPUSIM_ASSIGN_OR_RETURN(auto strides, GetInts(op, "strides"));
  const ir::Type& operand = op.operand(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "start_indices", start, operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "limit_indices", limit, operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "strides", strides, operand.rank()));
  ir::Shape shape;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > operand.dim(d)) {
      return OpError(op, "needs 0 <= start_indices <= limit_indices <= shape, got start " +
                             FormatInts(start) + ", limit " + FormatInts(limit) + " for " +
                             operand.ToString());
    }
    if (strides[d] <= 0) return OpError(op, "strides " + FormatInts(strides) + " must be > 0");
    shape.push_back((limit[d] - start[d] + strides[d] - 1) / strides[d]);
  }
  return ExpectResultType(op, 0, ir::Type::Tensor(operand.element(), shape));
}

StatusOr<std::vector<Tensor>> EvalSlice(EvalContext&, const ir::Operation& op,
                                        std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(auto start, GetInts(op, "start_indices"));
  TPUSIM_ASSIGN_OR_RETURN(auto steps, GetInts(op, "strides"));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Slice(in[0], op.result(0).type(), start, steps));
  return std::vector<Tensor>{std::move(r)};
}

// Dimensions the slice keeps whole may be split; the others stay whole.
std::optional<ShardingRule> SliceRule(const ir::Operation& op) {
  auto start = GetInts(op, "start_indices");
  auto limit = GetInts(op, "limit_indices");
  std::vector<int64_t> strides = GetIntsOr(op, "strides", {});
  if (!start.ok() || !limit.ok()) return std::nullopt;
  std::vector<int64_t> whole;
  for (int64_t d = 0; d < static_cast<int64_t>(start->size()); ++d) {
    const bool stride = d < static_cast<int64_t>(strides.size()) && strides[d] != 1;
    if ((*start)[d] != 0 || (*limit)[d] != op.operand(0).type().dim(d) || stride)
      whole.push_back(d);
  }
  ShardingRule rule = PositionalShardingRule(op, whole);
  rule.local_sizes = {"limit_indices"};  // the split dimensions start at 0
  return rule;
}

StatusOr<std::vector<ir::Type>> InferSlice(const ir::Operation& op, Values) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, 1));
  TPUSIM_ASSIGN_OR_RETURN(auto start, GetInts(op, "start_indices"));
  TPUSIM_ASSIGN_OR_RETURN(auto limit, GetInts(op, "limit_indices"));
  std::vector<int64_t> strides = GetIntsOr(op, "strides", std::vector<int64_t>(start.size(), 1));
  TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape,
                          SlicedShape(op, op.operand(0).type().shape(), start, limit, strides));
  return OneResult(op, std::move(shape));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.slice",
                    .verify = VerifySlice,
                    .infer = InferSlice,
                    .eval = EvalSlice,
                    .work = CopyWork,
                    .sharding_rule = SliceRule});

// ---- pad: edge (possibly negative) and interior padding ----

Status VerifyPad(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectUnaryLayout(op));
  TPUSIM_ASSIGN_OR_RETURN(auto low, GetInts(op, "edge_padding_low"));
  TPUSIM_ASSIGN_OR_RETURN(auto high, GetInts(op, "edge_padding_high"));
  TPUSIM_ASSIGN_OR_RETURN(auto interior, GetInts(op, "interior_padding"));
  return CheckPad(op, op.operand(0).type(), op.result(0).type(), low, high, interior);
}

StatusOr<std::vector<Tensor>> EvalPad(EvalContext&, const ir::Operation& op,
                                      std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(auto low, GetInts(op, "edge_padding_low"));
  TPUSIM_ASSIGN_OR_RETURN(auto interior, GetInts(op, "interior_padding"));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Pad(in[0], in[1], op.result(0).type(), low, interior));
  return std::vector<Tensor>{std::move(r)};
}

std::optional<ShardingRule> PadRule(const ir::Operation& op) {
  std::vector<int64_t> whole;
  for (const char* key : {"edge_padding_low", "edge_padding_high", "interior_padding"}) {
    std::vector<int64_t> pads = GetIntsOr(op, key, {});
    for (int64_t d = 0; d < static_cast<int64_t>(pads.size()); ++d) {
      if (pads[d] != 0) whole.push_back(d);
    }
  }
  return PositionalShardingRule(op, whole);
}

StatusOr<std::vector<ir::Type>> InferPad(const ir::Operation& op, Values) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, 2));
  TPUSIM_ASSIGN_OR_RETURN(auto low, GetInts(op, "edge_padding_low"));
  TPUSIM_ASSIGN_OR_RETURN(auto high, GetInts(op, "edge_padding_high"));
  TPUSIM_ASSIGN_OR_RETURN(auto interior, GetInts(op, "interior_padding"));
  TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape,
                          PaddedShape(op, op.operand(0).type().shape(), low, high, interior));
  return OneResult(op, std::move(shape));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.pad",
                    .verify = VerifyPad,
                    .infer = InferPad,
                    .eval = EvalPad,
                    .work = CopyWork,
                    .sharding_rule = PadRule});

// ---- iota: the index along iota_dimension ----

Status VerifyIota(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 0));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute dim,
                          GetAttr(op, "iota_dimension", ir::Attribute::Kind::kInt));
  return CheckIota(op, op.result(0).type(), dim.int_value());
}

StatusOr<std::vector<Tensor>> EvalIota(EvalContext&, const ir::Operation& op,
                                       std::span<const Tensor>) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor r,
                          Iota(op.result(0).type(), op.attr("iota_dimension").int_value()));
  return std::vector<Tensor>{std::move(r)};
}

// The values count along the iota dimension; the others may be split.
std::optional<ShardingRule> IotaRule(const ir::Operation& op) {
  return PositionalShardingRule(op, {op.attr("iota_dimension").int_value()});
}

TPUSIM_REGISTER_OP({.name = "stablehlo.iota",
                    .verify = VerifyIota,
                    .eval = EvalIota,
                    .work = CopyWork,  // writes only
                    .sharding_rule = IotaRule});

}  // namespace

StatusOr<Tensor> Slice(const Tensor& operand, const ir::Type& result_type,
                       const std::vector<int64_t>& start, const std::vector<int64_t>& steps) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::AllocateUninitialized(result_type));
  const std::vector<int64_t> in_strides = RowMajorStrides(operand.shape());
  std::vector<int64_t> src_strides;
  for (size_t d = 0; d < steps.size(); ++d) src_strides.push_back(in_strides[d] * steps[d]);
  const int64_t offset = FlatOffset(start, in_strides);
  StridedCopier(Width(r), r.shape(), src_strides, RowMajorStrides(r.shape()))
      .Run(operand.raw() + offset * Width(r), r.mutable_raw());
  return r;
}

Status CheckBroadcastInDim(const ir::Operation& op, const ir::Type& operand,
                           const ir::Type& result, const std::vector<int64_t>& dims) {
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "broadcast_dimensions", dims, operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckDimsInRange(op, "broadcast_dimensions", dims, result.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckUnique(op, "broadcast_dimensions", dims));
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (operand.dim(d) != 1 && operand.dim(d) != result.dim(dims[d])) {
      return OpError(op, "cannot broadcast " + operand.ToString() + " to " + result.ToString() +
                             " along broadcast_dimensions " + FormatInts(dims));
    }
  }
  return Status::Ok();
}

StatusOr<Tensor> BroadcastInDim(const Tensor& operand, const ir::Type& result_type,
                                const std::vector<int64_t>& dims) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::AllocateUninitialized(result_type));
  const std::vector<int64_t> in_strides = RowMajorStrides(operand.shape());
  std::vector<int64_t> src_strides(r.rank(), 0);  // new dimensions repeat
  for (size_t d = 0; d < dims.size(); ++d) {
    if (operand.shape()[d] != 1) src_strides[dims[d]] = in_strides[d];
  }
  StridedCopier(Width(r), r.shape(), src_strides, RowMajorStrides(r.shape()))
      .Run(operand.raw(), r.mutable_raw());
  return r;
}

Status CheckPad(const ir::Operation& op, const ir::Type& operand, const ir::Type& result,
                const std::vector<int64_t>& low, const std::vector<int64_t>& high,
                const std::vector<int64_t>& interior) {
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "edge_padding_low", low, operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "edge_padding_high", high, operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "interior_padding", interior, operand.rank()));
  if (op.num_operands() > 1) {
    const ir::Type& value = op.operand(1).type();
    if (!value.is_tensor() || value.rank() != 0 || value.element() != operand.element()) {
      return OpError(op, "padding value must be a 0-d tensor of " +
                             std::string(ir::ElementTypeName(operand.element())) + ", got " +
                             value.ToString());
    }
  }
  ir::Shape shape;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (interior[d] < 0) {
      return OpError(op, "interior_padding " + FormatInts(interior) + " must be >= 0");
    }
    const int64_t n = operand.dim(d);
    const int64_t size = low[d] + n + std::max<int64_t>(n - 1, 0) * interior[d] + high[d];
    if (size < 0) {
      return OpError(op, "padding gives a negative size in dimension " + std::to_string(d));
    }
    shape.push_back(size);
  }
  if (result.shape() != shape) {
    return OpError(op, "result has type " + result.ToString() + ", but padding gives shape " +
                           FormatInts(shape));
  }
  return Status::Ok();
}

StatusOr<Tensor> Pad(const Tensor& operand, const Tensor& padding_value,
                     const ir::Type& result_type, const std::vector<int64_t>& low,
                     const std::vector<int64_t>& interior) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::AllocateUninitialized(result_type));
  FillWithScalar(r, padding_value);
  // Operand index i lands at low + i * (interior + 1); negative low padding
  // drops the operand elements that land before 0, negative high padding
  // those past the end.
  const std::vector<int64_t> in_strides = RowMajorStrides(operand.shape());
  const std::vector<int64_t> out_strides = RowMajorStrides(r.shape());
  ir::Shape kept;
  std::vector<int64_t> dst_strides;
  int64_t src_off = 0, dst_off = 0;
  for (int64_t d = 0; d < r.rank(); ++d) {
    const int64_t step = interior[d] + 1;
    const int64_t first = low[d] >= 0 ? 0 : (-low[d] + step - 1) / step;
    const int64_t last_pos = r.shape()[d] - 1 - low[d];  // operand i needs i*step <= this
    const int64_t end = last_pos < 0 ? 0 : std::min(operand.shape()[d], last_pos / step + 1);
    kept.push_back(std::max<int64_t>(end - first, 0));
    dst_strides.push_back(out_strides[d] * step);
    src_off += first * in_strides[d];
    dst_off += (low[d] + first * step) * out_strides[d];
  }
  if (ir::NumElements(kept) == 0) return r;
  const int w = Width(r);
  StridedCopier(w, kept, in_strides, dst_strides)
      .Run(operand.raw() + src_off * w, r.mutable_raw() + dst_off * w);
  return r;
}

Status CheckIota(const ir::Operation& op, const ir::Type& result, int64_t dimension) {
  if (ir::IsBool(result.element())) {
    return OpError(op, "result must have an integer, floating-point or complex type");
  }
  if (dimension < 0 || dimension >= result.rank()) {
    return OpError(op, "iota_dimension " + std::to_string(dimension) + " must be in [0, " +
                           std::to_string(result.rank()) + ")");
  }
  return Status::Ok();
}

// The minor two dimensions of `t`, with leading 1s below rank 2.
static std::pair<int64_t, int64_t> MinorTwo(const ir::Type& t) {
  const int64_t r = t.rank();
  return {r >= 2 ? t.dim(r - 2) : 1, r >= 1 ? t.dim(r - 1) : 1};
}

// The TPU tiles the minor two dimensions, so a row-major reshape that keeps
// them only renames the major ones; any other reshape moves elements between
// tiles. Reshapes are defined on row-major order, so one whose operand or
// result has another layout is a relayout too (layout assignment gives
// reshapes row-major operands and results).
Work ReshapeWork(const ir::Operation& op) {
  const ir::Type& in = op.operand(0).type();
  const ir::Type& out = op.result(0).type();
  if (in.layout().empty() && out.layout().empty() && MinorTwo(in) == MinorTwo(out)) {
    return FreeWork(op);
  }
  Work w = ReadsAndWrites(op);
  w.transpose_elements = op.result(0).type().num_elements();
  return w;
}

Work RelayoutWork(const ir::Operation& op, const std::vector<int64_t>& perm, bool bitcast_is_free) {
  const ir::Type& in = op.operand(0).type();
  const ir::Type& out = op.result(0).type();
  if (in.rank() == 0 || ir::TransposedLayout(in, perm) == out.MinorToMajor()) {
    return bitcast_is_free ? FreeWork(op) : CopyWork(op);
  }
  // Whole 128-lane rows move as they are when the physically minor dimension
  // stays the same one; otherwise lanes trade places through the XLU.
  if (perm[out.MinorToMajor()[0]] == in.MinorToMajor()[0]) return CopyWork(op);
  Work w = ReadsAndWrites(op);
  w.transpose_elements = out.num_elements();
  return w;
}

StatusOr<Tensor> Iota(const ir::Type& type, int64_t dimension) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::AllocateUninitialized(type));
  const ir::ElementType e = type.element();
  const int64_t n = type.dim(dimension);
  // The n distinct values, converted once, then broadcast over the other
  // dimensions. Zeroed: a complex value gets its real part alone.
  TPUSIM_ASSIGN_OR_RETURN(Tensor values, Tensor::Allocate(ir::Type::Tensor(e, {n})));
  const int w = ir::StorageBytes(e);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* p = values.mutable_raw() + i * w;
    if (ir::IsComplex(e)) {
      numerics::StoreDouble(ir::ComplexPartType(e), static_cast<double>(i), p);
    } else if (ir::IsFloat(e)) {
      numerics::StoreDouble(e, static_cast<double>(i), p);
    } else {
      numerics::StoreInt64(e, i, p);
    }
  }
  std::vector<int64_t> src_strides(type.rank(), 0);
  src_strides[dimension] = 1;
  StridedCopier(w, r.shape(), src_strides, RowMajorStrides(r.shape()))
      .Run(values.raw(), r.mutable_raw());
  return r;
}

}  // namespace tpusim::ops
