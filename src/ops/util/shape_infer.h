// Building blocks for inferring result types (OpDef::infer, tpusim/ops/op_def.h:
// result types from operand types, for the refine-shapes pass), shared by
// the op files.
// Internal to src/ops.
#ifndef TPUSIM_OPS_UTIL_SHAPE_INFER_H_
#define TPUSIM_OPS_UTIL_SHAPE_INFER_H_

#include <optional>
#include <span>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::ops {

using Values = std::span<const Tensor* const>;

// An elementwise op: one result of the shape of its highest-rank operand
// (scalars aside, as select's predicate and clamp's bounds may be) and of its
// declared element type.
StatusOr<std::vector<ir::Type>> InferElementwise(const ir::Operation& op, Values values);

// Result i has operand i's shape and its declared element type (sort,
// optimization_barrier, while's results).
StatusOr<std::vector<ir::Type>> InferSameAsOperands(const ir::Operation& op, Values values);

// Result 0 with `shape` and its declared element type.
std::vector<ir::Type> OneResult(const ir::Operation& op, ir::Shape shape);

// `op` has one tensor result and at least `operands` tensor operands: what a
// rule must check before reading them, as it may run on ops whose shape
// rule has not (their types were dynamic).
Status ExpectOneResult(const ir::Operation& op, int operands);

// The values of shape operand `i` (a 1-d integer tensor known before the
// program runs), or an error naming `what` when it is not known: its value
// depends on the program's data rather than on its input shapes.
StatusOr<std::vector<int64_t>> KnownShapeOperand(const ir::Operation& op, Values values, int i,
                                                 std::string_view what);

// A 0-d operand's value, or nullopt when not known.
std::optional<int64_t> KnownScalar(Values values, int i);

// Shape arithmetic shared by static ops and their dynamic_* forms. Errors
// name `op`.
//
// pad: low + size + high + interior * (size - 1) per dimension.
StatusOr<ir::Shape> PaddedShape(const ir::Operation& op, const ir::Shape& operand,
                                const std::vector<int64_t>& low, const std::vector<int64_t>& high,
                                const std::vector<int64_t>& interior);
// slice: ceil((limit - start) / stride) per dimension.
StatusOr<ir::Shape> SlicedShape(const ir::Operation& op, const ir::Shape& operand,
                                const std::vector<int64_t>& start,
                                const std::vector<int64_t>& limit,
                                const std::vector<int64_t>& strides);
// reshape: `declared` with at most one kDynamicDim, which takes what the
// element count leaves.
StatusOr<ir::Shape> ReshapedShape(const ir::Operation& op, const ir::Shape& operand,
                                  const ir::Shape& declared);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_UTIL_SHAPE_INFER_H_
