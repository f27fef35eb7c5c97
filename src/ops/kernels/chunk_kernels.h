// Elementwise ops as kernels on a run of elements: what a fused loop kernel
// (tpusim.fusion of kind kLoop, fusion_chunks.h) runs over one chunk of its
// iteration space at a time, so that its intermediate values stay in cache.
// Each kernel computes exactly what the op's evaluation computes for those
// elements (the same codecs and element functions). Internal to src/ops.
#ifndef TPUSIM_OPS_KERNELS_CHUNK_KERNELS_H_
#define TPUSIM_OPS_KERNELS_CHUNK_KERNELS_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "tpusim/ir/ir.h"

namespace tpusim::ops {

// One operand of a chunk: `n` stored elements at `data`, or, when `splat`,
// the one element at `data` standing for all of them.
struct ChunkOperand {
  const void* data;
  bool splat;
};

struct ChunkKernel {
  // Whether the kernel computes `op` (its element types and attributes).
  bool (*supports)(const ir::Operation& op);
  // Writes op's result elements [0, n) for the operands' elements [0, n)
  // to `out`, which may be an operand's own elements (in place) but
  // overlaps no operand otherwise. REQUIRES: supports(op).
  void (*run)(const ir::Operation& op, std::span<const ChunkOperand> in, void* out, int64_t n);
};

// Registers the chunk kernel of op `name` (at start-up, beside its OpDef);
// returns true. A second kernel for one name aborts (a bug).
bool RegisterChunkKernel(std::string_view name, ChunkKernel kernel);
// The chunk kernel of `name`, or null.
const ChunkKernel* FindChunkKernel(std::string_view name);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_KERNELS_CHUNK_KERNELS_H_
