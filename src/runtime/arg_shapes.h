// The argument shapes a shape-polymorphic program (one with `?` dimensions,
// as jax.export writes it) is refined for before it runs: from `--arg-shape
// NAME=DIMS` flags and the shapes of its .npy inputs.
#ifndef TPUSIM_RUNTIME_ARG_SHAPES_H_
#define TPUSIM_RUNTIME_ARG_SHAPES_H_

#include <span>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::runtime {

// The entry `f`'s argument types: parameter i takes the dimensions of the
// `--arg-shape` naming it ("arg0=8x4", "x=" for a scalar; NAME is the
// parameter's SSA name without '%'), else the shape of its input file
// (files[i], "" for none), else its declared type, which must then be
// static. Element types are always the declared ones. kInvalidArgument names
// the flag or parameter: a malformed flag, an unknown or repeated name, a
// dynamic parameter given no shape.
StatusOr<std::vector<ir::Type>> ArgumentTypes(const ir::Function& f,
                                              const std::vector<std::string>& arg_shapes,
                                              const std::vector<std::string>& files);

// Refines `module` (compiler::RefineShapes) for ArgumentTypes of its entry
// `entry` when it has dynamic shapes; kInvalidArgument if `arg_shapes` are
// given for a program whose shapes are all static.
Status RefineForArguments(ir::Module& module, const std::string& entry,
                          const std::vector<std::string>& arg_shapes,
                          const std::vector<std::string>& files);

// The same for arrays in memory: parameter i takes args[i]'s dimensions.
// Nothing to do for a program whose shapes are all static.
Status RefineForValues(ir::Module& module, const std::string& entry,
                       std::span<const Tensor> args);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_ARG_SHAPES_H_
