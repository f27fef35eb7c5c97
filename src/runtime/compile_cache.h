// The compile cache's keys and its files on disk. A file holds a compiled
// program as the IR printer writes it, with its source locations (which the
// printed form drops) and what the passes noted; a missing, unreadable or
// stale file is a miss, never an error.
#ifndef TPUSIM_RUNTIME_COMPILE_CACHE_H_
#define TPUSIM_RUNTIME_COMPILE_CACHE_H_

#include <memory>
#include <string>
#include <vector>

#include "tpusim/compiler/pipeline.h"
#include "tpusim/runtime/compile.h"

namespace tpusim::runtime {

// Hex SHA-256 of everything a compilation depends on: this tpusim build,
// the module's text (its argument shapes and types included), its value
// names and the files its locations name (which reports show), the entry,
// the chip and the passes.
std::string CacheKey(const ir::Module& module, const std::string& entry,
                     const hw::ChipSpec& chip, const std::vector<compiler::PassInfo>& passes);

// The directory of the disk cache: `dir`, else $XDG_CACHE_HOME/tpusim, else
// $HOME/.cache/tpusim; empty when none can be named.
std::string CacheDirectory(const std::string& dir);

// The program stored under `key`, or null. Buffer assignment's plan is not
// stored: it is planned again on the loaded module for `chip`.
std::shared_ptr<const CompiledProgram> LoadCompiled(const std::string& dir, const std::string& key,
                                                    const hw::ChipSpec& chip);

// Stores `program` under `key`, atomically; failures only lose the entry.
void StoreCompiled(const std::string& dir, const std::string& key,
                   const CompiledProgram& program);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_COMPILE_CACHE_H_
