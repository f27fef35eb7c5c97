// The batched matrix product under dot_general, convolution and ragged_dot,
// with tpusim's two numerics. Internal to src/ops.
//
// Reference numerics: floats accumulate in f32, or in f64 when an operand or
// the result is f64 (bf16/f16/f8 products are exact in f32, so narrow types
// are rounded once, to the result type); integers wrap modulo 2^64 and are
// then wrapped to the result type, which equals wrapping arithmetic in the
// result type; i1 is OR of ANDs; complex accumulates in its own precision.
// The summation order over k is unspecified (oneDNN blocks and uses FMA).
//
// TPU numerics: an f32 x f32 product runs as 1, 3 or 6 bf16 MXU passes
// (numerics/tpu.h) accumulated in f32; bf16 x bf16 accumulates in f32 and a
// bf16 result is rounded with the TPU's rounding. Other types are as in the
// reference numerics.
#ifndef TPUSIM_OPS_KERNELS_MATMUL_H_
#define TPUSIM_OPS_KERNELS_MATMUL_H_

#include <array>
#include <cstdint>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/numerics/tpu.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/ops/work.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

// A [batch, rows, cols] view of a tensor's storage: element (b, r, c) is at
// offset + b * strides[0] + r * strides[1] + c * strides[2] (in elements).
struct MatrixView {
  const Tensor* tensor = nullptr;
  int64_t offset = 0;
  std::array<int64_t, 3> strides{};
};

// result[b, i, j] = sum_k lhs[b, i, k] * rhs[b, k, j].
struct MatmulProblem {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  MatrixView lhs;  // [batch, m, k]
  MatrixView rhs;  // [batch, k, n]
};

struct MatmulNumerics {
  Numerics numerics = Numerics::kReference;
  numerics::MatmulPrecision precision = numerics::MatmulPrecision::kDefault;  // kTpu only
  // Lets the f32/bf16 problems run on oneDNN; tests turn it off to check the
  // portable loops against it.
  bool allow_dnnl = true;
};

// The product as a dense [batch, m, n] tensor of `result_type`.
// REQUIRES: the views lie inside their tensors and lhs, rhs and result
// element types are all of one class (bool, integer, float or complex), as
// VerifyMatmulTypes checks.
StatusOr<Tensor> BatchedMatmul(const MatmulProblem& problem, ir::ElementType result_type,
                               const MatmulNumerics& numerics);

// The dimensions in [0, rank) not in `excluded`, in increasing order.
std::vector<int64_t> RemainingDims(int64_t rank, const std::vector<int64_t>& excluded);

// Product of the sizes of dimensions `dims` of `shape`.
int64_t DimsProduct(const ir::Shape& shape, const std::vector<int64_t>& dims);

// `t` as a [batch, rows, cols] view whose three axes are the given dimension
// groups (each walked in the order listed): in place when every group is
// contiguous in memory, else over a transposed copy stored in `*packed`,
// which must outlive the view.
StatusOr<MatrixView> GroupedView(const Tensor& t, const std::vector<int64_t>& batch,
                                 const std::vector<int64_t>& rows,
                                 const std::vector<int64_t>& cols, Tensor* packed);

// The numerics `op` (dot_general, convolution, ragged_dot) runs with: the
// options' numerics, and in TPU mode the precision from the options'
// override, else from a dot algorithm attribute, else the larger of the two
// precision_config entries. kUnimplemented for a dot algorithm TPU numerics
// cannot run (tf32, f16, ...).
StatusOr<MatmulNumerics> SelectMatmulNumerics(const EvalContext& ctx, const ir::Operation& op);

// The MXU work of `op` (dot_general, convolution, ragged_dot) as one batched
// product: bf16 passes from its precision_config for f32 operands (1, 3 or
// 6), one pass for every other type.
MatmulWork MxuWork(const ir::Operation& op, int64_t batch, int64_t m, int64_t k, int64_t n);

// Shape-rule pieces: operand and result element types of one class;
// precision_config absent or two DEFAULT/HIGH/HIGHEST enums.
Status VerifyMatmulTypes(const ir::Operation& op, ir::ElementType lhs, ir::ElementType rhs,
                         ir::ElementType result);
Status VerifyPrecisionConfig(const ir::Operation& op);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_KERNELS_MATMUL_H_
