// `tpusim convert`: a program in the other text format, StableHLO (the IR's
// generic MLIR form) or XLA HLO, optionally after compiling it.
#ifndef TPUSIM_RUNTIME_CONVERT_H_
#define TPUSIM_RUNTIME_CONVERT_H_

#include <string>

#include "tpusim/base/status.h"

namespace tpusim::runtime {

enum class TextFormat { kMlir, kHlo };

// The program at `path` (either format) as `format` text. kUnimplemented
// names the first op that has no HLO form.
StatusOr<std::string> ConvertProgram(const std::string& path, TextFormat format);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_CONVERT_H_
