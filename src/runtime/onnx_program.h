// ONNX models as programs of a run: sized for the run's --arg-shape flags
// and --input files before they are lowered, since the lowering needs
// static shapes (frontend/onnx/importer.h).
#ifndef TPUSIM_RUNTIME_ONNX_PROGRAM_H_
#define TPUSIM_RUNTIME_ONNX_PROGRAM_H_

#include <memory>
#include <string>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/runtime/load.h"
#include "tpusim/runtime/run.h"

namespace tpusim::runtime {

// Imports and verifies the ONNX model at `path` for `options`: a graph
// input takes the shape of its --arg-shape (by its ONNX name or its SSA
// name) or of its --input file; a value a shape depends on is read from its
// --input file unless options.timing_only.
StatusOr<std::unique_ptr<ir::Module>> LoadOnnx(const std::string& path, const RunOptions& options);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_ONNX_PROGRAM_H_
