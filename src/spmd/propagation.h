// Sharding propagation against the flow of data: what each value's users
// would like it to be. The partitioner walks forward, giving each op the
// shardings its operands already have; where they leave a dimension open,
// the users' wish decides, as XLA's propagation runs both ways. So
// `w - lr * grad`, with w split, splits lr * grad too, and the gradient's
// partial sums leave in a reduce-scatter instead of an all-reduce.
// Internal to src/spmd.
#ifndef TPUSIM_SPMD_PROPAGATION_H_
#define TPUSIM_SPMD_PROPAGATION_H_

#include <unordered_map>

#include "spmd/annotations.h"

namespace tpusim::spmd {

using Preferences = std::unordered_map<const ir::ValueImpl*, Sharding>;

// The wishes for the values of `f`'s entry block, from the function's
// result shardings, constraints and ops' own shardings, carried back
// through each op's sharding rule. The last use in program order speaks
// first; values nobody wishes split are absent.
// Manual regions (their {manual} shardings and markers) are skipped.
StatusOr<Preferences> PropagateBackward(const ir::Module& module, const ir::Function& f,
                                        const Annotations& annotations, const Mesh& mesh);

}  // namespace tpusim::spmd

#endif  // TPUSIM_SPMD_PROPAGATION_H_
