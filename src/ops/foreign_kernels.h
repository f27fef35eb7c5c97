// Foreign kernels: custom calls whose target names a well-known kernel that
// tpusim cannot run but can price from its shapes, as the kernel's own
// algorithm does the work. Any other custom call is priced by its traffic
// alone (check_ops.cc).
#ifndef TPUSIM_OPS_FOREIGN_KERNELS_H_
#define TPUSIM_OPS_FOREIGN_KERNELS_H_

#include <optional>
#include <string_view>

#include "tpusim/ir/ir.h"
#include "tpusim/ops/work.h"

namespace tpusim::ops {

// The work of custom call `op` to `target` if tpusim knows the kernel, with
// Work::priced_as saying what it was priced as; nullopt otherwise (or when
// the operands are not the shapes the kernel takes).
std::optional<Work> ForeignKernelWork(const ir::Operation& op, std::string_view target);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_FOREIGN_KERNELS_H_
