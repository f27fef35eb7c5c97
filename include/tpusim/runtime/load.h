// Loading programs: reading StableHLO or XLA HLO text files into verified
// modules.
#ifndef TPUSIM_RUNTIME_LOAD_H_
#define TPUSIM_RUNTIME_LOAD_H_

#include <memory>
#include <string>
#include <string_view>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

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

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_LOAD_H_
