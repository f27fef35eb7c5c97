// What a values run will take of the host's memory, known before it starts,
// so that a run too large for the host is refused at once instead of
// growing until the allocator fails.
#ifndef TPUSIM_RUNTIME_HOST_MEMORY_H_
#define TPUSIM_RUNTIME_HOST_MEMORY_H_

#include <cstdint>
#include <string>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::runtime {

// The most bytes of values live at once while the interpreter runs `f` of
// `module` on one device: values as the host stores them (row-major, no
// padding), each dropped after its last use, the arguments held all run, and
// a nested region's own peak (a fusion's intermediates, a loop body's, a
// callee's) added while the op that runs it does. Ops that update an
// operand in place only lower the true figure; an op's scratch memory (a
// matmul's converted copies) is not counted.
struct HostNeed {
  int64_t peak_bytes = 0;
  int64_t argument_bytes = 0;
};
HostNeed HostPeakBytes(const ir::Module& module, const ir::Function& f);

// Ok when `need` bytes fit the host memory limit (tensor.h), else
// kResourceExhausted saying what is needed, of which `what`, and what the
// host allows.
Status CheckHostMemory(int64_t need, const std::string& what);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_HOST_MEMORY_H_
