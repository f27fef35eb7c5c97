// A fused loop kernel (tpusim.fusion of kind kLoop) run chunk by chunk: each
// chunk of its iteration space goes through every op of the body before the
// next one starts, so that the values in between stay in cache, as the TPU
// keeps them on chip; chunks go to the host's cores. Internal to src/ops.
#ifndef TPUSIM_OPS_FUSION_CHUNKS_H_
#define TPUSIM_OPS_FUSION_CHUNKS_H_

#include <optional>
#include <span>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

// The results of kLoop fusion `fusion` on `operands`, computed in chunks,
// when its results are large and every op of its body can run on a chunk:
// ops with a chunk kernel (chunk_kernels.h), constants, reshapes and
// broadcasts, over values of the results' element count, and ops of any kind
// over smaller values (evaluated whole, once, first). nullopt otherwise: run
// the region. Every element gets the bits the ops give it one by one.
// `operands` are the fusion's own (EvalContext::TakeOperands): a result may
// take the storage of one that nothing else holds. Left as they were when
// the result is nullopt.
std::optional<StatusOr<std::vector<Tensor>>> EvalLoopInChunks(EvalContext& ctx,
                                                              const ir::Operation& fusion,
                                                              std::vector<Tensor>& operands);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_FUSION_CHUNKS_H_
