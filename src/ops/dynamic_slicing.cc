// dynamic_slice and dynamic_update_slice: a box at run-time start indices,
// each clamped so that the box lies inside the operand.
#include <algorithm>

#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

// Start indices operands [first, first + rank) are 0-d integer tensors of one type.
Status CheckStartIndices(const ir::Operation& op, int first, int64_t rank) {
  if (op.num_operands() - first != rank) {
    return OpError(op, "needs " + std::to_string(rank) + " start indices, got " +
                           std::to_string(op.num_operands() - first));
  }
  for (int i = first; i < op.num_operands(); ++i) {
    const ir::Type& t = op.operand(i).type();
    if (t.rank() != 0 || !ir::IsInteger(t.element()) || t != op.operand(first).type()) {
      return OpError(op, "start indices must be 0-d integer tensors of one type, got " +
                             t.ToString());
    }
  }
  return Status::Ok();
}

// Flat offset of the box of `box_shape` at the clamped start indices.
int64_t ClampedStart(std::span<const Tensor> starts, const ir::Shape& shape,
                     const ir::Shape& box_shape) {
  const std::vector<int64_t> strides = RowMajorStrides(shape);
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t start = IndexValues(starts[d])[0];
    offset += std::clamp<int64_t>(start, 0, shape[d] - box_shape[d]) * strides[d];
  }
  return offset;
}

// ---- dynamic_slice ----

Status VerifyDynamicSlice(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  if (op.num_operands() < 1) return OpError(op, "needs an operand");
  const ir::Type& operand = op.operand(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckStartIndices(op, 1, operand.rank()));
  TPUSIM_ASSIGN_OR_RETURN(auto sizes, GetInts(op, "slice_sizes"));
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "slice_sizes", sizes, operand.rank()));
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (sizes[d] < 0 || sizes[d] > operand.dim(d)) {
      return OpError(op, "slice_sizes " + FormatInts(sizes) + " must be within " +
                             operand.ToString());
    }
  }
  return ExpectResultType(op, 0, ir::Type::Tensor(operand.element(), sizes));
}

StatusOr<std::vector<Tensor>> EvalDynamicSlice(EvalContext&, const ir::Operation& op,
                                               std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::AllocateUninitialized(op.result(0).type()));
  const Tensor& operand = in[0];
  const int w = ir::StorageBytes(r.element());
  const int64_t start = ClampedStart(in.subspan(1), operand.shape(), r.shape());
  StridedCopier(w, r.shape(), RowMajorStrides(operand.shape()), RowMajorStrides(r.shape()))
      .Run(operand.raw() + start * w, r.mutable_raw());
  return std::vector<Tensor>{std::move(r)};
}

// Reads only the box (and the start indices) and writes it.
Work DynamicSliceWork(const ir::Operation& op) {
  Work w;
  w.reads.push_back(op.result(0).type());
  for (int i = 1; i < op.num_operands(); ++i) w.reads.push_back(op.operand(i).type());
  w.writes.push_back(op.result(0).type());
  w.AddVector(VectorClass::kAlu, op.result(0).type().num_elements());
  return w;
}

// Dimensions `sized` makes smaller than the operand's stay whole: where the
// box starts is known only at run time.
std::vector<int64_t> Sliced(const ir::Type& operand, const ir::Type& sized) {
  std::vector<int64_t> whole;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (sized.dim(d) != operand.dim(d)) whole.push_back(d);
  }
  return whole;
}

std::optional<ShardingRule> DynamicSliceRule(const ir::Operation& op) {
  ShardingRule rule = PositionalShardingRule(op, Sliced(op.operand(0).type(), op.result(0).type()));
  rule.local_sizes = {"slice_sizes"};
  return rule;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.dynamic_slice",
                    .verify = VerifyDynamicSlice,
                    .eval = EvalDynamicSlice,
                    .work = DynamicSliceWork,
                    .sharding_rule = DynamicSliceRule});

// ---- dynamic_update_slice ----

Status VerifyDynamicUpdateSlice(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  if (op.num_operands() < 2) return OpError(op, "needs an operand and an update");
  const ir::Type& operand = op.operand(0).type();
  const ir::Type& update = op.operand(1).type();
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, 0, operand));
  TPUSIM_RETURN_IF_ERROR(CheckSameElement(op, "update", update, operand.element()));
  if (update.rank() != operand.rank()) {
    return OpError(op, "update " + update.ToString() + " must have the rank of " +
                           operand.ToString());
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (update.dim(d) > operand.dim(d)) {
      return OpError(op, "update " + update.ToString() + " does not fit in " +
                             operand.ToString());
    }
  }
  return CheckStartIndices(op, 2, operand.rank());
}

// Writes the update over the operand itself when this was its last use (a
// loop filling a stacked buffer one slice per iteration), else over a copy.
StatusOr<std::vector<Tensor>> EvalDynamicUpdateSlice(EvalContext& ctx, const ir::Operation& op,
                                                     std::span<const Tensor> operands) {
  std::vector<Tensor> in = ctx.TakeOperands(operands);
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, WritableCopy(in[0]));
  const Tensor& update = in[1];
  const int w = ir::StorageBytes(r.element());
  const int64_t start =
      ClampedStart(std::span<const Tensor>(in).subspan(2), r.shape(), update.shape());
  StridedCopier(w, update.shape(), RowMajorStrides(update.shape()), RowMajorStrides(r.shape()))
      .Run(update.raw(), r.mutable_raw() + start * w);
  return std::vector<Tensor>{std::move(r)};
}

// Updates the operand in place (XLA aliases it with the result), so only the
// update's box moves.
Work DynamicUpdateSliceWork(const ir::Operation& op) {
  Work w;
  for (int i = 1; i < op.num_operands(); ++i) w.reads.push_back(op.operand(i).type());
  w.writes.push_back(op.operand(1).type());
  w.AddVector(VectorClass::kAlu, op.operand(1).type().num_elements());
  return w;
}

// The result is the operand updated: its type.
StatusOr<std::vector<ir::Type>> InferDynamicUpdateSlice(const ir::Operation& op, Values) {
  if (op.num_operands() < 1) return OpError(op, "needs an operand");
  return std::vector<ir::Type>{op.operand(0).type()};
}

TPUSIM_REGISTER_OP({.name = "stablehlo.dynamic_update_slice",
                    .verify = VerifyDynamicUpdateSlice,
                    .infer = InferDynamicUpdateSlice,
                    .eval = EvalDynamicUpdateSlice,
                    .work = DynamicUpdateSliceWork,
                    .sharding_rule = [](const ir::Operation& op) {
                      return std::optional<ShardingRule>(PositionalShardingRule(
                          op, Sliced(op.operand(0).type(), op.operand(1).type())));
                    }});

}  // namespace
}  // namespace tpusim::ops
