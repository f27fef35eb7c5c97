// The hardware-independent work an op does, stated by the op next to its
// shape rule and evaluation (OpDef::work). A chip model prices it; nothing
// here knows about any chip.
#ifndef TPUSIM_OPS_WORK_H_
#define TPUSIM_OPS_WORK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tpusim/ir/type.h"

namespace tpusim::ops {

// One matrix multiplication for the MXU: `batch` independent [m,k] x [k,n]
// products. `passes` is the number of bf16 MXU passes per product (1, 3 or 6
// for f32 by precision; 1 for bf16; 1 for int8/fp8, priced at their rates).
struct MatmulWork {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  ir::ElementType lhs = ir::ElementType::kBF16;
  ir::ElementType rhs = ir::ElementType::kBF16;
  int passes = 1;
  int64_t flops() const { return 2 * batch * m * k * n; }
};

// Classes of vector-unit element operations, priced differently.
enum class VectorClass {
  kAlu,            // add, compare, select, min/max, bitwise, convert
  kMultiply,       // multiply (and fused multiply-add)
  kDivide,         // divide, remainder, sqrt, rsqrt: iterative on the VPU
  kTranscendental, // exp, log, tanh, sin, erf, ...: several VPU passes each
};
inline constexpr int kNumVectorClasses = 4;
const char* VectorClassName(VectorClass c);

// Data a collective moves between devices. The pod model (src/pod) prices
// it on a slice's torus; which devices talk comes from the op's attributes
// through ops::CollectiveGroups (collectives.h).
enum class CollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kPermute,
  kBroadcast,
  kReduce,
};
const char* CollectiveKindName(CollectiveKind k);  // "all_reduce", ...

struct CollectiveWork {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  // Per device: the whole array an all_gather makes or a reduce_scatter
  // splits; otherwise the operands.
  int64_t bytes = 0;
};

struct Work {
  std::vector<MatmulWork> matmuls;
  // Element operations on the vector unit, by class.
  int64_t vector_ops[kNumVectorClasses] = {0, 0, 0, 0};
  // Elements moved by transposes and permutes (the transpose unit, XLU).
  int64_t transpose_elements = 0;
  // Tensors read from and written to HBM; the chip model applies its tiled
  // layout to them to count padded bytes.
  std::vector<ir::Type> reads;
  std::vector<ir::Type> writes;
  // Data-dependent single-element (or single-row) memory accesses: gathers,
  // scatters, dynamic slices. Each costs a DMA of `random_access_bytes`.
  int64_t random_accesses = 0;
  int64_t random_access_bytes = 0;
  // Ops that only name values (reshape of a contiguous array, tuple,
  // get_tuple_element, constants folded into the program) cost nothing and
  // say so; the report shows them as free, not as unpriced.
  bool free = false;
  // Useful floating-point operations, for MFU and achieved FLOP/s.
  int64_t flops = 0;
  // A fused kernel (tpusim.fusion) keeps its intermediates on chip: the
  // bytes it holds at once while working on one tile of its iteration space,
  // and the tiles per execution. The chip model spills what exceeds VMEM.
  int64_t onchip_bytes = 0;
  int64_t onchip_tiles = 0;
  std::optional<CollectiveWork> collective;
  // Bytes moved over the chip's link to its host (host offloading, host
  // callbacks), in `host_transfers` transfers; priced on the chip's host link.
  int64_t host_bytes = 0;
  int64_t host_transfers = 0;
  // For a foreign kernel (a custom call): the algorithm it was priced as.
  std::string priced_as;
  // The model cannot price this use of the op (a transfer to or from the
  // host, a recv without source_target_pairs); the report lists it as
  // unpriced.
  bool unpriced = false;
  // Set when the op cannot be priced at all and a guess would mislead (a
  // Pallas kernel without a cost estimate): timing-only runs fail with this
  // message at the op. Such work is also `unpriced`.
  std::string error;

  void AddVector(VectorClass c, int64_t n) { vector_ops[static_cast<int>(c)] += n; }
  int64_t bytes_read() const;     // logical (unpadded) bytes
  int64_t bytes_written() const;
};

// Logical bytes of a tensor type (tuples: the sum of their elements).
int64_t LogicalBytes(const ir::Type& t);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_WORK_H_
