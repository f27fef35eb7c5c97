// oneDNN glue for the dense ops: batched matmuls on f32 and bf16 host
// buffers. Primitives are created once per problem and cached; every entry
// point is thread-safe. Internal to src/ops.
#ifndef TPUSIM_OPS_KERNELS_DNNL_KERNELS_H_
#define TPUSIM_OPS_KERNELS_DNNL_KERNELS_H_

#include <array>
#include <cstdint>

#include "tpusim/base/status.h"

namespace tpusim::ops {

enum class DnnlType : uint8_t { kF32, kBF16 };

// dst[b, i, j] (+)= sum_k a[b, i, k] * b[b, k, j], products accumulated in
// f32. Operands are strided views ({batch, row, col} strides in elements,
// one of row/col stride typically 1); dst is dense row-major [batch, m, n].
struct DnnlMatmul {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  DnnlType a_type = DnnlType::kF32, b_type = DnnlType::kF32, dst_type = DnnlType::kF32;
  std::array<int64_t, 3> a_strides{}, b_strides{};
  bool accumulate = false;  // add to dst's current contents instead of overwriting
};

// Runs `mm`. kUnimplemented when oneDNN has no kernel for the problem (e.g.
// a layout with no unit stride), so the caller can pack the operands or use
// its own loops; kInternal for other oneDNN failures.
Status RunDnnlMatmul(const DnnlMatmul& mm, const void* a, const void* b, void* dst);

// As RunDnnlMatmul, with less work per call for kernels that run many
// small products of a few shapes from one thread (attention's blocks): the
// primitive's memory objects, stream and argument list are kept per thread
// and problem, the buffers swapped in.
Status RunDnnlMatmulOnThread(const DnnlMatmul& mm, const void* a, const void* b, void* dst);

// dst[i] = exp(src[i]) for n f32 values (src == dst allowed), on oneDNN's
// vectorized exp: within an ulp or two of the rounded result, arguments
// below about -87.3 (ln of the smallest normal f32) give 0, and a NaN
// argument does not give NaN (callers that can meet one restore it).
// kUnimplemented without a oneDNN kernel; kInternal for other failures.
Status RunDnnlExp(int64_t n, const float* src, float* dst);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_KERNELS_DNNL_KERNELS_H_
