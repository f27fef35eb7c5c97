// Evaluates ops at import, on values known then: the ONNX importer computes
// shapes this way (Shape -> Gather -> Concat -> Reshape), so that the
// program it lowers has static shapes. Internal to src/frontend/onnx.
#ifndef TPUSIM_FRONTEND_ONNX_FOLD_H_
#define TPUSIM_FRONTEND_ONNX_FOLD_H_

#include <functional>
#include <optional>
#include <unordered_map>

#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::frontend::onnx_import {

using KnownFn = std::function<const Tensor*(ir::Value)>;

// Evaluates ops [first, end) of `block` in reference numerics, operands
// defined before `first` taken from `known`. Returns every result by value,
// or nullopt when an operand is unknown, an op has no evaluation or side
// effects, or it fails (the program then computes it at run time).
std::optional<std::unordered_map<const ir::ValueImpl*, Tensor>> FoldOps(const ir::Block& block,
                                                                        size_t first,
                                                                        const KnownFn& known);

}  // namespace tpusim::frontend::onnx_import

#endif  // TPUSIM_FRONTEND_ONNX_FOLD_H_
