// Dynamic dimensions: a shape-polymorphic program (jax.export with symbolic
// shapes) spells a dimension known only from its inputs `?`, which the IR
// holds as kDynamicDim. Only the front end, the verifier (which skips the
// shape rules of ops with such types) and the refine-shapes pass
// (compiler/pass.h), which sizes every one before anything runs, see them.
#ifndef TPUSIM_IR_DYNAMIC_H_
#define TPUSIM_IR_DYNAMIC_H_

#include <cstdint>

#include "tpusim/ir/type.h"

namespace tpusim::ir {

// A dimension whose size is known only when the program runs (`?`).
inline constexpr int64_t kDynamicDim = -1;

// Whether no dimension is kDynamicDim.
bool IsStaticShape(const Shape& shape);

// Tensors: IsStaticShape; tuples: every element is static; tokens: true.
bool IsStatic(const Type& type);

class Operation;

// Whether an operand or result of `op` is not IsStatic.
bool HasDynamicTypes(const Operation& op);

}  // namespace tpusim::ir

#endif  // TPUSIM_IR_DYNAMIC_H_
