// ONNX models as programs of a run: sized for the run's --arg-shape flags
// and --input files before they are lowered, since the lowering needs
// static shapes (frontend/onnx/importer.h).
#ifndef TPUSIM_RUNTIME_ONNX_PROGRAM_H_
#define TPUSIM_RUNTIME_ONNX_PROGRAM_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/runtime/load.h"
#include "tpusim/runtime/run.h"

namespace tpusim::runtime {

// Sequences and optionals, which one .npy file cannot hold, as `tpusim run`
// takes and writes them:
// - a sequence input takes its elements as a comma-separated list of .npy
//   files (--input seq=a.npy,b.npy, or a.npy,b.npy in its place) or as a
//   folder whose .npy files are its elements in name order (an empty folder
//   is an empty sequence). Its length is fixed at import: @main takes
//   element k as its parameter %seq_k (--arg-shape seq_0=DIMS sizes one).
// - an optional input is absent when its --input is the word `none`
//   (--input opt=none; a file of that name is ./none); else it is given as
//   its tensor or sequence is.
// - sequence output i is written as result<i>_<k>.npy, one file per
//   element (none for an empty sequence); an absent optional output writes
//   no file; a present one, its tensor or sequence.
inline constexpr std::string_view kAbsentInput = "none";

// How a run's files map to an ONNX model's @main.
struct OnnxFiles {
  // options.inputs as NAME=FILE for @main's parameters (a sequence input's
  // elements among them), in place of the graph inputs they name.
  std::vector<std::string> inputs;
  // The file name, without ".npy", of each of @main's results.
  std::vector<std::string> result_names;
};

// Imports and verifies the ONNX model at `path` for `options`: a graph
// input takes the shape of its --arg-shape (by its ONNX name or its SSA
// name) or of its --input file; a value a shape depends on is read from its
// --input file unless options.timing_only. `files`, when not null, receives
// how the run's files map to @main.
StatusOr<std::unique_ptr<ir::Module>> LoadOnnx(const std::string& path, const RunOptions& options,
                                               OnnxFiles* files = nullptr);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_ONNX_PROGRAM_H_
