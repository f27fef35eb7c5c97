// Flash attention on the host: the values of tpusim.flash_attention and
// tpusim.flash_attention_grad (ops/flash_attention.cc) as blocked matmuls on
// oneDNN with an online softmax, over both cores. Internal to src/ops.
//
// Numerics. The reference numerics compute as a GPU or TPU flash kernel
// does: operands read as f32 (bf16 and f16 exactly), every dot accumulated
// in f32, the softmax in f32; results rounded once to their types. The TPU
// numerics round every dot's operands to bf16 the MXU's way (ops/kernels/
// matmul.h): f32 operands split into 1, 3 or 6 bf16 passes by the precision
// (DEFAULT: one, the inputs rounded to bf16), bf16 ones in one pass, the
// probabilities p and their gradient ds rounded likewise before their dots
// (a Pallas kernel casts p to v's type), f32 accumulation; a bf16 result is
// rounded with the TPU's rounding. exp is oneDNN's (within an ulp or two;
// arguments below about -87 give 0).
//
// Blocks. Query rows go in blocks of kAttentionRows and keys in blocks of
// kAttentionKeys, both padded at the end, so each kind of oneDNN call has
// one shape whatever the sequence (a problem's size can change the
// kernel oneDNN picks, and its order of summation; within one kernel every
// row of a product is summed alike, which attention_test checks): a row's
// arithmetic depends on its own query, its position and the keys only,
// never on which rows share its block. A row split off to
// another device with its position (context parallelism) gets the same o,
// lse and dq bits as in the whole run; dk and dv sum over rows, so split
// rows leave partial sums. Under a causal mask a row sees the keys at or
// before its position (a prefix of each block); blocks it cannot see are
// skipped for it exactly. A row that sees no key gets o = 0, lse = -inf
// and no gradient.
//
// Threads: forward tasks are (batch, head), backward tasks (batch, kv
// head), each on one core (oneDNN's calls in it too); a task's arithmetic
// does not depend on the thread that runs it, so results do not depend on
// the thread count.
#ifndef TPUSIM_OPS_KERNELS_ATTENTION_H_
#define TPUSIM_OPS_KERNELS_ATTENTION_H_

#include <cstdint>
#include <span>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/numerics/tpu.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

inline constexpr int64_t kAttentionRows = 64;  // query rows per block
inline constexpr int64_t kAttentionKeys = 64;  // keys per block

// q, o, do, dq: [batch, q_len, heads, head_dim]; k, v, dk, dv: [batch,
// kv_len, kv_heads, head_dim], kv head g serving query heads
// [g * heads / kv_heads, (g + 1) * heads / kv_heads); lse: f32 [batch,
// heads, q_len].
struct AttentionDims {
  int64_t batch = 0, q_len = 0, kv_len = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = false;
  double scale = 1.0;                // applied to q.k in f32 (rounded to f32 first)
  std::span<const int64_t> row_pos;  // q_len positions for the causal mask; empty: 0, 1, ...
};

struct AttentionNumerics {
  bool tpu = false;  // the TPU's bf16 MXU operands (else f32 dots)
  numerics::MatmulPrecision precision = numerics::MatmulPrecision::kDefault;  // f32 operands
  int max_threads = 0;     // 1: all on the calling thread (tests compare); else the cores
  bool allow_dnnl = true;  // tests turn it off to check the portable loops
};

// True when the kernels take operands of `t` (f32, bf16, f16); the op
// computes others (f64) its own way.
bool AttentionKernelTakes(ir::ElementType t);

// o (of `o_type`, q's shape) and lse (f32 [batch, heads, q_len]).
// REQUIRES: dims match the tensors, all above 0; heads % kv_heads == 0;
// row_pos empty or of q_len entries; operand types satisfy
// AttentionKernelTakes.
StatusOr<std::vector<Tensor>> AttentionForward(const AttentionDims& dims,
                                               const AttentionNumerics& num, const Tensor& q,
                                               const Tensor& k, const Tensor& v,
                                               ir::ElementType o_type);

// dq, dk, dv (of q's, k's and v's types) given the forward's o and lse and
// the output's gradient dout. REQUIRES: as AttentionForward; o and dout of
// q's shape, lse f32 [batch, heads, q_len].
StatusOr<std::vector<Tensor>> AttentionBackward(const AttentionDims& dims,
                                                const AttentionNumerics& num, const Tensor& q,
                                                const Tensor& k, const Tensor& v, const Tensor& o,
                                                const Tensor& lse, const Tensor& dout);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_KERNELS_ATTENTION_H_
