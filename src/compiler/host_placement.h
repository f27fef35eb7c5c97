// Which values of a function live in host memory: what a program offloads
// (activations saved for the backward pass, jax.device_put to pinned_host)
// and the buffers that hold it. Internal to src/compiler: the buffer
// planner leaves these values out of HBM.
#ifndef TPUSIM_COMPILER_HOST_PLACEMENT_H_
#define TPUSIM_COMPILER_HOST_PLACEMENT_H_

#include <vector>

#include "tpusim/ir/ir.h"

namespace tpusim::compiler {

// By value id (REQUIRES: f.Renumber() since its last change), whether the
// value is stored in host memory, as XLA's host offloader places it:
// - an entry argument with mhlo.memory_kind "pinned_host" or
//   "unpinned_host", and the result of a move to host (host_offload.cc);
// - what views it in place (reshape, bitcast, slices, a kernel of views
//   alone) and what reads it for a move back to the device;
// - a buffer a dynamic_update_slice writes host data into, before and
//   after the update (a stack of offloaded layers and its zeros);
// - a while loop's state, in its operand, body, condition and result
//   alike, wherever one of them is.
std::vector<bool> HostPlacedValues(const ir::Function& f);

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_HOST_PLACEMENT_H_
