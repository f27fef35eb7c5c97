// Kernels of the layout ops (layout_ops.cc), shared with their dynamic_*
// forms (misc_ops.cc), which compute the same values once their shape
// operands are read. Internal to src/ops.
#ifndef TPUSIM_OPS_LAYOUT_OPS_H_
#define TPUSIM_OPS_LAYOUT_OPS_H_

#include <cstdint>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/ops/work.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

// broadcast_in_dim's shape rule (C2-C5) for operand type -> result type.
Status CheckBroadcastInDim(const ir::Operation& op, const ir::Type& operand,
                           const ir::Type& result, const std::vector<int64_t>& dims);
// broadcast_in_dim's value. REQUIRES: CheckBroadcastInDim passed.
StatusOr<Tensor> BroadcastInDim(const Tensor& operand, const ir::Type& result_type,
                                const std::vector<int64_t>& dims);

// pad's shape rule (C1-C4) with the given padding amounts.
Status CheckPad(const ir::Operation& op, const ir::Type& operand, const ir::Type& result,
                const std::vector<int64_t>& low, const std::vector<int64_t>& high,
                const std::vector<int64_t>& interior);
// pad's value. REQUIRES: CheckPad passed.
StatusOr<Tensor> Pad(const Tensor& operand, const Tensor& padding_value,
                     const ir::Type& result_type, const std::vector<int64_t>& low,
                     const std::vector<int64_t>& interior);

// slice's value: result element i is operand[start + i * steps].
// REQUIRES: the slice lies inside the operand and has result_type's shape.
StatusOr<Tensor> Slice(const Tensor& operand, const ir::Type& result_type,
                       const std::vector<int64_t>& start, const std::vector<int64_t>& steps);

// iota's shape rule: a non-boolean result with 0 <= dimension < rank.
Status CheckIota(const ir::Operation& op, const ir::Type& result, int64_t dimension);
// iota's value: index along `dimension`, converted to the element type.
// REQUIRES: 0 <= dimension < rank.
StatusOr<Tensor> Iota(const ir::Type& type, int64_t dimension);

// reshape's work (operand 0 -> result 0): free when operand and result are
// row-major and the minor two dimensions stay as they are, else a relayout
// through the transpose unit.
Work ReshapeWork(const ir::Operation& op);

// The work of moving operand 0 into result 0, result dimension d being the
// operand's dimension perm[d], with the layouts of both: a bitcast (free if
// `bitcast_is_free`, else a plain copy) when the result's layout is the
// operand's bytes as they lie; a copy of whole rows when the physically minor
// dimension stays the same; else a transpose on the XLU.
// REQUIRES: perm is a permutation of the operand's dimensions.
Work RelayoutWork(const ir::Operation& op, const std::vector<int64_t>& perm,
                  bool bitcast_is_free);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_LAYOUT_OPS_H_
