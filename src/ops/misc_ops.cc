// Structural and shape-query ops (tuple, get_tuple_element,
// optimization_barrier, get_dimension_size) and the dynamic_* forms of the
// layout ops (real_dynamic_slice included). Shapes are static when a program
// runs (refine-shapes sizes those of shape-polymorphic programs), so a dynamic
// op's shape operands must agree with its static result type at run time; it
// then computes what its static counterpart does.
#include "ops/layout_ops.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

// ---- tuple / get_tuple_element ----

Status VerifyTuple(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  std::vector<ir::Type> types;
  for (ir::Value v : op.operands()) types.push_back(v.type());
  return ExpectResultType(op, 0, ir::Type::Tuple(std::move(types)));
}

StatusOr<std::vector<Tensor>> EvalTuple(EvalContext&, const ir::Operation&,
                                        std::span<const Tensor> in) {
  return std::vector<Tensor>{Tensor::Tuple({in.begin(), in.end()})};
}

StatusOr<std::vector<ir::Type>> InferTuple(const ir::Operation& op, Values) {
  return std::vector<ir::Type>{ir::Type::Tuple(ir::TypesOf(op.operands()))};
}

TPUSIM_REGISTER_OP({.name = "stablehlo.tuple",
                    .verify = VerifyTuple,
                    .infer = InferTuple,
                    .eval = EvalTuple,
                    .work = FreeWork});

Status VerifyGetTupleElement(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute index, GetAttr(op, "index", ir::Attribute::Kind::kInt));
  const ir::Type& tuple = op.operand(0).type();
  if (!tuple.is_tuple()) return OpError(op, "operand must be a tuple, got " + tuple.ToString());
  const int64_t i = index.int_value();
  if (i < 0 || i >= static_cast<int64_t>(tuple.tuple_elements().size())) {
    return OpError(op, "index " + std::to_string(i) + " is out of range for " + tuple.ToString());
  }
  return ExpectResultType(op, 0, tuple.tuple_elements()[i]);
}

StatusOr<std::vector<Tensor>> EvalGetTupleElement(EvalContext&, const ir::Operation& op,
                                                  std::span<const Tensor> in) {
  return std::vector<Tensor>{in[0].tuple_elements()[op.attr("index").int_value()]};
}

StatusOr<std::vector<ir::Type>> InferGetTupleElement(const ir::Operation& op, Values) {
  const ir::Type& tuple = op.operand(0).type();
  const int64_t i = GetIntOr(op, "index", -1);
  if (!tuple.is_tuple() || i < 0 || i >= static_cast<int64_t>(tuple.tuple_elements().size())) {
    return OpError(op, "index " + std::to_string(i) + " is out of range for " + tuple.ToString());
  }
  return std::vector<ir::Type>{tuple.tuple_elements()[i]};
}

TPUSIM_REGISTER_OP({.name = "stablehlo.get_tuple_element",
                    .verify = VerifyGetTupleElement,
                    .infer = InferGetTupleElement,
                    .eval = EvalGetTupleElement,
                    .work = FreeWork});

// ---- optimization_barrier: the identity ----

Status VerifyOptimizationBarrier(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, op.num_operands()));
  for (int i = 0; i < op.num_operands(); ++i) {
    TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, i, op.operand(i).type()));
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalOptimizationBarrier(EvalContext&, const ir::Operation&,
                                                      std::span<const Tensor> in) {
  return std::vector<Tensor>(in.begin(), in.end());
}

TPUSIM_REGISTER_OP({.name = "stablehlo.optimization_barrier",
                    .verify = VerifyOptimizationBarrier,
                    .infer = InferSameAsOperands,
                    .eval = EvalOptimizationBarrier,
                    .work = FreeWork});

// ---- get_dimension_size ----

Status VerifyGetDimensionSize(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute dim, GetAttr(op, "dimension", ir::Attribute::Kind::kInt));
  const int64_t rank = op.operand(0).type().rank();
  if (dim.int_value() < 0 || dim.int_value() >= rank) {
    return OpError(op, "dimension " + std::to_string(dim.int_value()) + " must be in [0, " +
                           std::to_string(rank) + ")");
  }
  return ExpectResultType(op, 0, ir::Type::Tensor(ir::ElementType::kSI32, {}));
}

StatusOr<std::vector<Tensor>> EvalGetDimensionSize(EvalContext&, const ir::Operation& op,
                                                   std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::Allocate(op.result(0).type()));
  *r.mutable_data<int32_t>() =
      static_cast<int32_t>(in[0].shape()[op.attr("dimension").int_value()]);
  return std::vector<Tensor>{std::move(r)};
}

TPUSIM_REGISTER_OP({.name = "stablehlo.get_dimension_size", .verify = VerifyGetDimensionSize,
                    .eval = EvalGetDimensionSize, .work = FreeWork});  // a constant on TPU

// ---- dynamic forms ----

// Operand `i` is a 1-d integer tensor of `n` elements.
Status CheckShapeOperand(const ir::Operation& op, int i, std::string_view what, int64_t n) {
  const ir::Type& t = op.operand(i).type();
  if (!t.is_tensor() || t.rank() != 1 || !ir::IsInteger(t.element()) || t.dim(0) != n) {
    return OpError(op, std::string(what) + " must be a 1-d integer tensor of " +
                           std::to_string(n) + " elements, got " + t.ToString());
  }
  return Status::Ok();
}

// The run-time shape operand must equal the static result shape.
Status CheckRuntimeShape(const ir::Operation& op, std::string_view what, const Tensor& t,
                         const ir::Shape& expected) {
  std::vector<int64_t> got = IndexValues(t);
  if (got != expected) {
    return InvalidArgument("'" + op.name_str() + "' " + std::string(what) + " is " +
                           FormatInts(got) + " at run time, but the result type has shape " +
                           FormatInts(expected));
  }
  return Status::Ok();
}

Status VerifyDynamicBroadcastInDim(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& operand = op.operand(0).type();
  const ir::Type& result = op.result(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckSameElement(op, "result", result, operand.element()));
  TPUSIM_RETURN_IF_ERROR(CheckShapeOperand(op, 1, "output_dimensions", result.rank()));
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "broadcast_dimensions"));
  TPUSIM_RETURN_IF_ERROR(CheckBroadcastInDim(op, operand, result, dims));
  std::vector<int64_t> expanding = GetIntsOr(op, "known_expanding_dimensions", {});
  std::vector<int64_t> nonexpanding = GetIntsOr(op, "known_nonexpanding_dimensions", {});
  TPUSIM_RETURN_IF_ERROR(
      CheckDimsInRange(op, "known_expanding_dimensions", expanding, operand.rank()));
  TPUSIM_RETURN_IF_ERROR(
      CheckDimsInRange(op, "known_nonexpanding_dimensions", nonexpanding, operand.rank()));
  expanding.insert(expanding.end(), nonexpanding.begin(), nonexpanding.end());
  return CheckUnique(op, "known expanding and nonexpanding dimensions", expanding);
}

StatusOr<std::vector<Tensor>> EvalDynamicBroadcastInDim(EvalContext&, const ir::Operation& op,
                                                        std::span<const Tensor> in) {
  const ir::Type& type = op.result(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckRuntimeShape(op, "output_dimensions", in[1], type.shape()));
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "broadcast_dimensions"));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, BroadcastInDim(in[0], type, dims));
  return std::vector<Tensor>{std::move(r)};
}

// The dynamic forms' result shapes are the values of their shape operands.
StatusOr<std::vector<ir::Type>> InferFromShapeOperand(const ir::Operation& op, Values values, int i,
                                                      std::string_view what) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, i + 1));
  TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape, KnownShapeOperand(op, values, i, what));
  for (int64_t d : shape) {
    if (d < 0) return OpError(op, std::string(what) + " " + FormatInts(shape) + " is negative");
  }
  if (static_cast<int64_t>(shape.size()) != op.result(0).type().rank()) {
    return OpError(op, std::string(what) + " " + FormatInts(shape) + " does not have the rank of " +
                           op.result(0).type().ToString());
  }
  return OneResult(op, std::move(shape));
}

StatusOr<std::vector<ir::Type>> InferDynamicBroadcastInDim(const ir::Operation& op, Values values) {
  return InferFromShapeOperand(op, values, 1, "output_dimensions");
}

TPUSIM_REGISTER_OP({.name = "stablehlo.dynamic_broadcast_in_dim",
                    .verify = VerifyDynamicBroadcastInDim,
                    .infer = InferDynamicBroadcastInDim,
                    .eval = EvalDynamicBroadcastInDim,
                    .work = CopyWork});

Status VerifyDynamicIota(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const int64_t rank = op.result(0).type().rank();
  TPUSIM_RETURN_IF_ERROR(CheckShapeOperand(op, 0, "output_shape", rank));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute dim,
                          GetAttr(op, "iota_dimension", ir::Attribute::Kind::kInt));
  return CheckIota(op, op.result(0).type(), dim.int_value());
}

StatusOr<std::vector<Tensor>> EvalDynamicIota(EvalContext&, const ir::Operation& op,
                                              std::span<const Tensor> in) {
  const ir::Type& type = op.result(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckRuntimeShape(op, "output_shape", in[0], type.shape()));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Iota(type, op.attr("iota_dimension").int_value()));
  return std::vector<Tensor>{std::move(r)};
}

StatusOr<std::vector<ir::Type>> InferDynamicIota(const ir::Operation& op, Values values) {
  return InferFromShapeOperand(op, values, 0, "output_shape");
}

TPUSIM_REGISTER_OP({.name = "stablehlo.dynamic_iota",
                    .verify = VerifyDynamicIota,
                    .infer = InferDynamicIota,
                    .eval = EvalDynamicIota,
                    .work = CopyWork});

Status VerifyDynamicPad(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 5));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& operand = op.operand(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckSameElement(op, "result", op.result(0).type(), operand.element()));
  TPUSIM_RETURN_IF_ERROR(CheckShapeOperand(op, 2, "edge_padding_low", operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckShapeOperand(op, 3, "edge_padding_high", operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckShapeOperand(op, 4, "interior_padding", operand.rank()));
  if (op.result(0).type().rank() != operand.rank()) {
    return OpError(op, "result must have the rank of " + operand.ToString());
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalDynamicPad(EvalContext&, const ir::Operation& op,
                                             std::span<const Tensor> in) {
  const std::vector<int64_t> low = IndexValues(in[2]);
  const std::vector<int64_t> high = IndexValues(in[3]);
  const std::vector<int64_t> interior = IndexValues(in[4]);
  const ir::Type& type = op.result(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckPad(op, in[0].type(), type, low, high, interior));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Pad(in[0], in[1], type, low, interior));
  return std::vector<Tensor>{std::move(r)};
}

StatusOr<std::vector<ir::Type>> InferDynamicPad(const ir::Operation& op, Values values) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, 5));
  TPUSIM_ASSIGN_OR_RETURN(auto low, KnownShapeOperand(op, values, 2, "edge_padding_low"));
  TPUSIM_ASSIGN_OR_RETURN(auto high, KnownShapeOperand(op, values, 3, "edge_padding_high"));
  TPUSIM_ASSIGN_OR_RETURN(auto interior, KnownShapeOperand(op, values, 4, "interior_padding"));
  TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape,
                          PaddedShape(op, op.operand(0).type().shape(), low, high, interior));
  return OneResult(op, std::move(shape));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.dynamic_pad",
                    .verify = VerifyDynamicPad,
                    .infer = InferDynamicPad,
                    .eval = EvalDynamicPad,
                    .work = CopyWork});

Status VerifyDynamicReshape(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& operand = op.operand(0).type();
  const ir::Type& result = op.result(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckSameElement(op, "result", result, operand.element()));
  TPUSIM_RETURN_IF_ERROR(CheckShapeOperand(op, 1, "output_shape", result.rank()));
  if (operand.num_elements() != result.num_elements()) {
    return OpError(op, "cannot reshape " + operand.ToString() + " to " + result.ToString());
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalDynamicReshape(EvalContext&, const ir::Operation& op,
                                                 std::span<const Tensor> in) {
  const ir::Shape& shape = op.result(0).type().shape();
  TPUSIM_RETURN_IF_ERROR(CheckRuntimeShape(op, "output_shape", in[1], shape));
  return std::vector<Tensor>{in[0].Reshaped(shape)};
}

StatusOr<std::vector<ir::Type>> InferDynamicReshape(const ir::Operation& op, Values values) {
  return InferFromShapeOperand(op, values, 1, "output_shape");
}

TPUSIM_REGISTER_OP({.name = "stablehlo.dynamic_reshape",
                    .verify = VerifyDynamicReshape,
                    .infer = InferDynamicReshape,
                    .eval = EvalDynamicReshape,
                    .work = ReshapeWork});

// ---- real_dynamic_slice: slice with start, limit and strides as operands ----

Status VerifyRealDynamicSlice(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 4));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& operand = op.operand(0).type();
  const ir::Type& result = op.result(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckSameElement(op, "result", result, operand.element()));
  TPUSIM_RETURN_IF_ERROR(CheckShapeOperand(op, 1, "start_indices", operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckShapeOperand(op, 2, "limit_indices", operand.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckShapeOperand(op, 3, "strides", operand.rank()));
  if (result.rank() != operand.rank()) {
    return OpError(op, "result must have the rank of " + operand.ToString());
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalRealDynamicSlice(EvalContext&, const ir::Operation& op,
                                                   std::span<const Tensor> in) {
  const std::vector<int64_t> start = IndexValues(in[1]);
  const std::vector<int64_t> strides = IndexValues(in[3]);
  TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape,
                          SlicedShape(op, in[0].shape(), start, IndexValues(in[2]), strides));
  if (shape != op.result(0).type().shape()) {
    return InvalidArgument("'" + op.name_str() + "' slices " + FormatInts(shape) +
                           " at run time, but the result type has shape " +
                           FormatInts(op.result(0).type().shape()));
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Slice(in[0], op.result(0).type(), start, strides));
  return std::vector<Tensor>{std::move(r)};
}

StatusOr<std::vector<ir::Type>> InferRealDynamicSlice(const ir::Operation& op, Values values) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, 4));
  TPUSIM_ASSIGN_OR_RETURN(auto start, KnownShapeOperand(op, values, 1, "start_indices"));
  TPUSIM_ASSIGN_OR_RETURN(auto limit, KnownShapeOperand(op, values, 2, "limit_indices"));
  TPUSIM_ASSIGN_OR_RETURN(auto strides, KnownShapeOperand(op, values, 3, "strides"));
  TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape,
                          SlicedShape(op, op.operand(0).type().shape(), start, limit, strides));
  return OneResult(op, std::move(shape));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.real_dynamic_slice",
                    .verify = VerifyRealDynamicSlice,
                    .infer = InferRealDynamicSlice,
                    .eval = EvalRealDynamicSlice,
                    .work = CopyWork});

}  // namespace
}  // namespace tpusim::ops
