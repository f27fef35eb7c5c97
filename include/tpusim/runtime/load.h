// Loading programs: reading StableHLO or XLA HLO text files into verified
// modules.
#ifndef TPUSIM_RUNTIME_LOAD_H_
#define TPUSIM_RUNTIME_LOAD_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::runtime {

// The whole file at `path`; kNotFound if it cannot be opened.
StatusOr<std::string> ReadTextFile(const std::string& path);

// Parses and verifies the single-module file at `path`: XLA HLO text when it
// starts with `HloModule` (frontend::LooksLikeHlo), StableHLO otherwise.
StatusOr<std::unique_ptr<ir::Module>> LoadModule(const std::string& path);

// The same for program text held in memory; `name` stands for the file in
// error locations.
StatusOr<std::unique_ptr<ir::Module>> LoadModuleText(std::string_view text,
                                                     const std::string& name);

// Whether the file at `path` holds an ONNX model rather than program text:
// a .onnx name, or bytes that start as ONNX's ModelProto does.
bool IsOnnxFile(const std::string& path);

// Imports and verifies the ONNX model at `path` (frontend/onnx/importer.h)
// for inputs in memory: graph input i takes args[i]'s shape, and its value
// where a shape depends on it; inputs past args.size() (a timing-only run)
// take their shapes from `arg_shapes` ("NAME=DIMS", by ONNX or SSA name) or
// must be static.
StatusOr<std::unique_ptr<ir::Module>> LoadOnnxFor(const std::string& path,
                                                  std::span<const Tensor> args,
                                                  const std::vector<std::string>& arg_shapes);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_LOAD_H_
