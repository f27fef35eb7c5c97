// The HBM a compiled program needs on one chip, from liveness-based buffer
// assignment (buffer_assignment.h): which buffers are live at once, where
// each one sits, and how much memory that takes at the worst point.
#ifndef TPUSIM_COMPILER_MEMORY_PLAN_H_
#define TPUSIM_COMPILER_MEMORY_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tpusim::compiler {

// What a buffer holds, as the peak's breakdown counts it.
enum class BufferKind {
  kArgument,   // an entry parameter: live for the whole program
  kResult,     // returned by the entry, not an argument: live from its op to the end
  kConstant,   // program data, kept all program long (XLA's constant region)
  kTemporary,  // everything else, and the temporaries of loop and branch bodies
};

inline const char* BufferKindName(BufferKind k) {
  switch (k) {
    case BufferKind::kArgument: return "argument";
    case BufferKind::kResult: return "result";
    case BufferKind::kConstant: return "constant";
    case BufferKind::kTemporary: return "temporary";
  }
  return "temporary";
}

// One buffer live at the peak.
struct LiveBuffer {
  std::string value;  // "%5", "%7#1" (result 1), "%3{1}" (tuple element 1), "%arg0"
  std::string type;   // "tensor<8x128xf32>"
  // What makes it: "stablehlo.dot_general at f.mlir:3:5", "parameter 0".
  std::string op;
  BufferKind kind = BufferKind::kTemporary;
  int64_t bytes = 0;  // as stored: tiled layout, padding included
};

struct MemoryPlan {
  std::string function;        // the planned entry, without '@'
  int64_t capacity_bytes = 0;  // one device's HBM
  // Devices per chip: where it is more than one (v2, v3, 7x), each has
  // its share of the chip's HBM, and reports say "per device".
  int devices_per_chip = 1;
  // What the program needs: the size of the heap once every buffer has an
  // offset (best fit, reusing the space of dead buffers), holes included.
  int64_t peak_bytes = 0;
  // The peak's breakdown: bytes live there by kind, and the holes between
  // them; the five sum to peak_bytes.
  int64_t argument_bytes = 0;
  int64_t result_bytes = 0;
  int64_t constant_bytes = 0;
  int64_t temp_bytes = 0;
  int64_t fragmentation_bytes = 0;
  // The most bytes live at once: what a perfect placement would need.
  int64_t max_live_bytes = 0;
  int64_t sum_of_buffers = 0;  // every buffer with no reuse, for comparison
  // Host memory the program's offloaded values take (saved activations,
  // arguments in pinned_host), none of it in HBM and none of it reused.
  int64_t host_bytes = 0;
  int num_buffers = 0;
  std::string peak_at;  // where the peak occurs: "stablehlo.add %4 at f.mlir:6:10"
  // The largest buffers live at the peak (at most kMaxLiveListed), largest
  // first; a loop or branch live there contributes its body's buffers.
  std::vector<LiveBuffer> live_at_peak;
  // Bytes live over the entry's program order, holes not counted (a loop or
  // call counts its body's heap while it runs): [0] before the first op, [i]
  // while op i-1 runs. The peak is at [peak_index]; the report draws these.
  std::vector<int64_t> live_bytes;
  int peak_index = 0;
  static constexpr int kMaxLiveListed = 10;
};

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_MEMORY_PLAN_H_
