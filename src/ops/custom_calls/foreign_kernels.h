// Foreign kernels: custom calls whose target names a well-known kernel that
// tpusim cannot run but can price from its shapes, as the kernel's own
// algorithm does the work. Any other custom call is priced by its traffic
// alone (check_ops.cc).
#ifndef TPUSIM_OPS_CUSTOM_CALLS_FOREIGN_KERNELS_H_
#define TPUSIM_OPS_CUSTOM_CALLS_FOREIGN_KERNELS_H_

#include <optional>
#include <string>
#include <string_view>

#include "tpusim/ir/ir.h"
#include "tpusim/ops/work.h"

namespace tpusim::ops {

// Attention's sizes, as a kernel sees them.
struct AttentionShape {
  int64_t batch = 0, q_len = 0, kv_len = 0, heads = 0, kv_heads = 0, head_dim = 0;
  ir::ElementType element = ir::ElementType::kBF16;
  double kept = 1.0;  // fraction of the scores the mask keeps
  std::string mask = "no mask";
};

// The work of flash attention of shape `s` (its backward pass if
// `backward`): the scores never reach HBM, so the traffic is `op`'s
// operands and results; the MXU does QK^T and PV (forward) or those again
// and dV, dP, dQ, dK (backward) per head, skipping what the mask drops.
Work AttentionWork(const ir::Operation& op, const AttentionShape& s, bool backward);

// The work of custom call `op` to `target` if tpusim knows the kernel, with
// Work::priced_as saying what it was priced as; nullopt otherwise (or when
// the operands are not the shapes the kernel takes).
std::optional<Work> ForeignKernelWork(const ir::Operation& op, std::string_view target);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_CUSTOM_CALLS_FOREIGN_KERNELS_H_
