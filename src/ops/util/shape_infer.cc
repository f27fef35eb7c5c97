#include "ops/util/shape_infer.h"

#include <algorithm>

#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "tpusim/ir/dynamic.h"

namespace tpusim::ops {

StatusOr<std::vector<ir::Type>> InferElementwise(const ir::Operation& op, Values) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  if (op.num_operands() == 0) return OpError(op, "needs operands");
  ir::Shape shape = op.operand(0).type().shape();
  for (ir::Value v : op.operands()) {
    if (v.type().rank() > static_cast<int64_t>(shape.size())) shape = v.type().shape();
  }
  return OneResult(op, std::move(shape));
}

StatusOr<std::vector<ir::Type>> InferSameAsOperands(const ir::Operation& op, Values) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, op.num_operands()));
  std::vector<ir::Type> types;
  for (int i = 0; i < op.num_results(); ++i) {
    const ir::Type& in = op.operand(i).type();
    const ir::Type& out = op.result(i).type();
    types.push_back(in.is_tensor() && out.is_tensor() ? ir::Type::Tensor(out.element(), in.shape())
                                                      : in);
  }
  return types;
}

std::vector<ir::Type> OneResult(const ir::Operation& op, ir::Shape shape) {
  return {ir::Type::Tensor(op.result(0).type().element(), std::move(shape))};
}

Status ExpectOneResult(const ir::Operation& op, int operands) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  if (op.num_operands() < operands) {
    return OpError(op, "needs " + std::to_string(operands) + " operands");
  }
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> KnownShapeOperand(const ir::Operation& op, Values values, int i,
                                                 std::string_view what) {
  if (i >= static_cast<int>(values.size()) || values[i] == nullptr) {
    return OpError(op, std::string(what) +
                           " is not known before the program runs (it depends on data, not "
                           "only on the input shapes)");
  }
  const ir::Type& t = values[i]->type();
  if (!t.is_tensor() || t.rank() != 1 || !ir::IsInteger(t.element())) {
    return OpError(op, std::string(what) + " must be a 1-d integer tensor, got " + t.ToString());
  }
  std::vector<int64_t> v = IndexValues(*values[i]);
  return v;
}

std::optional<int64_t> KnownScalar(Values values, int i) {
  if (i >= static_cast<int>(values.size()) || values[i] == nullptr) return std::nullopt;
  const Tensor& t = *values[i];
  if (!t.type().is_tensor() || t.type().rank() != 0 || !ir::IsInteger(t.element())) {
    return std::nullopt;
  }
  return IndexValues(t)[0];
}

StatusOr<ir::Shape> PaddedShape(const ir::Operation& op, const ir::Shape& operand,
                                const std::vector<int64_t>& low, const std::vector<int64_t>& high,
                                const std::vector<int64_t>& interior) {
  const size_t rank = operand.size();
  if (low.size() != rank || high.size() != rank || interior.size() != rank) {
    return OpError(op, "padding needs " + std::to_string(rank) + " entries per list");
  }
  ir::Shape shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (interior[d] < 0) return OpError(op, "interior padding must be non-negative");
    shape[d] = low[d] + operand[d] + high[d] + interior[d] * std::max<int64_t>(operand[d] - 1, 0);
    if (shape[d] < 0) return OpError(op, "padding gives a negative dimension");
  }
  return shape;
}

StatusOr<ir::Shape> SlicedShape(const ir::Operation& op, const ir::Shape& operand,
                                const std::vector<int64_t>& start,
                                const std::vector<int64_t>& limit,
                                const std::vector<int64_t>& strides) {
  const size_t rank = operand.size();
  if (start.size() != rank || limit.size() != rank || strides.size() != rank) {
    return OpError(op, "slice needs " + std::to_string(rank) + " starts, limits and strides");
  }
  ir::Shape shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > operand[d] || strides[d] <= 0) {
      return OpError(op, "slice [" + std::to_string(start[d]) + ", " + std::to_string(limit[d]) +
                             ") step " + std::to_string(strides[d]) + " of dimension " +
                             std::to_string(d) + " does not fit its " + std::to_string(operand[d]) +
                             " elements");
    }
    shape[d] = (limit[d] - start[d] + strides[d] - 1) / strides[d];
  }
  return shape;
}

StatusOr<ir::Shape> ReshapedShape(const ir::Operation& op, const ir::Shape& operand,
                                  const ir::Shape& declared) {
  ir::Shape shape = declared;
  int64_t known = 1;
  int dynamic = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != ir::kDynamicDim) {
      known *= shape[d];
    } else if (dynamic >= 0) {
      return OpError(op, "cannot size a reshape result with several dynamic dimensions");
    } else {
      dynamic = static_cast<int>(d);
    }
  }
  if (dynamic >= 0) {
    const int64_t total = ir::NumElements(operand);
    if (known == 0 || total % known != 0) {
      return OpError(op, "cannot reshape " + FormatInts(operand) + " to " + FormatInts(declared));
    }
    shape[dynamic] = total / known;
  }
  return shape;
}

}  // namespace tpusim::ops
