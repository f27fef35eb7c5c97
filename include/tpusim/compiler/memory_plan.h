// The HBM a compiled program needs on one chip, from liveness-based buffer
// assignment (passes.h, RunBufferAssignment): which buffers are live at once
// and how much memory that takes at the worst point.
#ifndef TPUSIM_COMPILER_MEMORY_PLAN_H_
#define TPUSIM_COMPILER_MEMORY_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tpusim/ir/type.h"

namespace tpusim::compiler {

// One buffer live at the peak.
struct LiveBuffer {
  std::string value;  // "%5", "%arg0"
  std::string op;     // what makes it: "stablehlo.dot_general at f.mlir:3:5", "parameter 0"
  ir::Type type;
  int64_t bytes = 0;  // as stored: tiled layout, padding included
};

struct MemoryPlan {
  int64_t capacity_bytes = 0;  // the chip's HBM
  int64_t peak_bytes = 0;      // the most live at once: what the program needs
  // The peak's breakdown; the four sum to peak_bytes.
  int64_t argument_bytes = 0;
  int64_t result_bytes = 0;    // results not aliasing an argument
  int64_t constant_bytes = 0;
  int64_t temp_bytes = 0;      // temporaries live at the peak
  int64_t sum_of_buffers = 0;  // every buffer with no reuse, for comparison
  int num_buffers = 0;
  std::string peak_at;                  // the op at which the peak occurs
  std::vector<LiveBuffer> live_at_peak;  // largest first
};

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_MEMORY_PLAN_H_
