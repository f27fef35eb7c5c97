// Which ops the fusion pass (fusion.cc) may put in a kernel, decided in one
// place. Internal to src/compiler.
#ifndef TPUSIM_COMPILER_FUSION_RULES_H_
#define TPUSIM_COMPILER_FUSION_RULES_H_

#include "tpusim/ir/ir.h"

namespace tpusim::compiler {

// An op computing each result element from the operand elements at the same
// index: one tensor result, operands of the result's shape, no regions, and
// work that is vector work alone (no matmuls, transposes, gathers), as its
// OpDef::work states. Shape-preserving ops that mix elements (fft,
// cholesky) are not.
bool IsElementwise(const ir::Operation& op);

// Cheap enough to recompute in every kernel that uses it, as XLA duplicates
// it: scalar and splat constants, iota, broadcast_in_dim of a scalar.
bool IsDuplicable(const ir::Operation& op);

// An op so cheap that XLA computes it again in each kernel that needs its
// value rather than write it (InstructionFusion's !IsExpensive): loop
// fusible and add, subtract, multiply, maximum, minimum, negate, abs,
// compare, select, clamp, convert, the bitwise ops, broadcast_in_dim or
// reshape. Not divide, transcendental functions, transposes or relayouts.
bool IsCheapToDuplicate(const ir::Operation& op);

// May join a kLoop kernel (and feed a reduction or an epilogue): elementwise
// ops, duplicable ops, the relayouts a kernel does as it streams
// (broadcast_in_dim, reshape, transpose, tpusim.copy), and dynamic_slice,
// which it reads in place.
bool IsLoopFusible(const ir::Operation& op);

// Reads its operand where it lies: a dynamic_slice, or a reshape of the
// same bytes. A matmul's kernel takes these into its operands (a layer's
// weights sliced from the loop's stack), as XLA fuses them.
bool IsOperandView(const ir::Operation& op);

// A reduce or reduce_window whose body uses only its own arguments: the root
// of a kInput kernel.
bool IsFusibleReduction(const ir::Operation& op);

// dot_general, dot, convolution: the MXU op of a kOutput kernel.
bool IsMatmul(const ir::Operation& op);

// May consume a dot's result inside its kOutput kernel: elementwise ops, and
// tpusim.copy, as the kernel can write its output tiles in any layout.
bool IsEpilogue(const ir::Operation& op);

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_FUSION_RULES_H_
