// tpusim.copy: XLA's layout-changing copy, inserted by layout assignment
// where a value's layout is not the one its user needs. Values are logical
// arrays and layouts physical, so it evaluates to its operand; its cost is
// the relayout in memory.
#include <numeric>

#include "ops/layout_ops.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

// One operand and one result of its type (a tensor's shape and element
// type; XLA also copies tuples); the layouts may differ.
Status VerifyCopy(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  return ExpectResultType(op, 0, op.operand(0).type());
}

StatusOr<std::vector<Tensor>> EvalCopy(EvalContext&, const ir::Operation&,
                                       std::span<const Tensor> in) {
  return std::vector<Tensor>{in[0]};
}

// Reads the operand and writes the result, each in its own layout (padding
// included); moving the physically minor dimension goes through the XLU.
// A tuple copy reads and writes its elements as they are laid out.
Work CopyOpWork(const ir::Operation& op) {
  if (!op.operand(0).type().is_tensor()) return ReadsAndWrites(op);
  std::vector<int64_t> identity(op.operand(0).type().rank());
  std::iota(identity.begin(), identity.end(), 0);
  return RelayoutWork(op, identity, /*bitcast_is_free=*/false);
}

TPUSIM_REGISTER_OP(
    {.name = "tpusim.copy", .verify = VerifyCopy, .eval = EvalCopy, .work = CopyOpWork});

}  // namespace
}  // namespace tpusim::ops
