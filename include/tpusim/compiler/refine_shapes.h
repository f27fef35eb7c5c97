// Shape refinement: sizes the dynamic (`?`) dimensions of a shape-polymorphic
// program, as jax.export writes them, for concrete argument shapes, as
// StableHLO's refine-arguments and refine-shapes passes do before a JAX
// runtime compiles such a program (src/compiler/refine_shapes.cc).
#ifndef TPUSIM_COMPILER_REFINE_SHAPES_H_
#define TPUSIM_COMPILER_REFINE_SHAPES_H_

#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/ir/ir.h"

namespace tpusim::compiler {

// Refines `entry` of `module` and the functions it calls: the entry's
// parameters take `arg_types` (empty: their declared types, which must then
// be static); every op then gets static result types from its operands' (its
// OpDef::infer, ops/op_def.h), the values of shape computations
// (get_dimension_size and small integer ops on it) being evaluated as they
// are met; dynamic_* ops and dynamic custom calls (ops::StaticFormOfCall)
// whose shape operands are known become their static forms; private functions are specialized per call (argument types and
// jax.global_constant dimension values) and generic ones left uncalled are
// removed; @shape_assertion custom calls are checked with the known values
// (failing with their error_message filled in, kFailedPrecondition) and
// dropped. kInvalidArgument / kUnimplemented names what cannot be refined,
// with its location. On error the module is left half refined.
Status RefineShapes(ir::Module& module, const std::string& entry,
                    const std::vector<ir::Type>& arg_types);

// Whether any function of `module` has a dynamic dimension in its signature
// or its ops, a @shape_assertion call or a custom call that exists only
// until its sizes are known (ops::NeedsStaticForm): whether it needs
// RefineShapes.
bool HasDynamicShapes(const ir::Module& module);

// The pipeline's refine-shapes pass: RefineShapes of ctx.entry for its
// declared parameter types, when the module has dynamic shapes. tpusim run,
// convert and check call RefineShapes with the input shapes before
// partitioning and compiling, so the pass is off by default.
Status RunRefineShapes(ir::Module& module, PassContext& ctx);

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_REFINE_SHAPES_H_
