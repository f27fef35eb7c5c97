// `tpusim convert`: a program in the other text format, StableHLO (the IR's
// generic MLIR form) or XLA HLO, optionally after compiling it.
#ifndef TPUSIM_RUNTIME_CONVERT_H_
#define TPUSIM_RUNTIME_CONVERT_H_

#include <string>
#include <vector>

#include "tpusim/base/status.h"

namespace tpusim::runtime {

enum class TextFormat { kMlir, kHlo };

// The program at `path` (either format) as `format` text. A program with
// dynamic (`?`) dimensions is first refined for `arg_shapes` ("arg0=8x4",
// runtime/arg_shapes.h) when given; HLO text needs it refined.
// kUnimplemented names the first op that has no HLO form.
StatusOr<std::string> ConvertProgram(const std::string& path, TextFormat format,
                                     const std::vector<std::string>& arg_shapes = {});

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_CONVERT_H_
