// Compiling programs for a chip, with a cache, as a TPU runtime does: a
// program is compiled once per (content, argument types, chip, options) and
// the result reused, from memory within a process and from disk across runs.
//
// Compiler also watches the classic recompilation trap: one entry function
// compiled again and again because its argument shapes change (a new batch
// size each step). It counts compilations per entry and warns, naming the
// arguments whose shapes changed.
#ifndef TPUSIM_RUNTIME_COMPILE_H_
#define TPUSIM_RUNTIME_COMPILE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/compiler/memory_plan.h"
#include "tpusim/compiler/pipeline.h"
#include "tpusim/hw/chip.h"
#include "tpusim/ir/ir.h"

namespace tpusim::runtime {

struct CompileOptions {
  std::string passes;     // compiler::SelectPasses spec; "" runs every pass
  bool fusion = true;     // false drops the fusion pass
  bool latency_hiding = false;  // true adds the latency-hiding pass
  bool use_cache = true;  // false: neither read nor write any cache
  // Where compiled programs are kept; empty: $XDG_CACHE_HOME/tpusim, else
  // $HOME/.cache/tpusim. Unwritable directories only cost the disk cache.
  std::string cache_dir;
  // Writes the module after every pass here. A dump needs the passes to run,
  // so it bypasses cache lookups (the result is still stored).
  std::string dump_dir;
};

// A compiled program: the module after the pipeline and what it found.
struct CompiledProgram {
  std::unique_ptr<ir::Module> module;
  std::string entry;                            // function to run
  std::vector<std::string> passes;              // names, in the order run
  // Each pass's wall time when it ran; empty for a program from the disk cache.
  std::vector<std::pair<std::string, double>> pass_seconds;
  std::vector<std::string> notes;               // what the passes decided
  std::optional<compiler::MemoryPlan> memory;   // from buffer-assignment
};

enum class CacheResult { kCompiled, kMemoryHit, kDiskHit };
const char* CacheResultName(CacheResult r);  // "miss", "memory hit", "disk hit"

struct CompileResult {
  std::shared_ptr<const CompiledProgram> program;
  CacheResult cache = CacheResult::kCompiled;
  double seconds = 0;  // wall time of Compile, cache lookup included
  std::string key;     // hex SHA-256 of everything the result depends on; empty
                       // when the cache is off
};

class Compiler {
 public:
  explicit Compiler(CompileOptions options);

  // Compiles `entry` of `module` (left unchanged) for `chip`. Errors are the
  // failing pass's (e.g. kResourceExhausted when the program does not fit).
  StatusOr<CompileResult> Compile(const ir::Module& module, const std::string& entry,
                                  const hw::ChipSpec& chip);

  // Compilations of `entry` that ran the pipeline (cache hits do not count).
  int compilations(std::string_view entry) const;
  // Recompilation warnings so far, oldest first.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // After a Compile that failed for lack of HBM, that program's memory plan
  // (what it needs, of what); nullopt after any other.
  const std::optional<compiler::MemoryPlan>& exhausted() const { return exhausted_; }

  // An entry compiled for this many different argument signatures draws a
  // warning (and again at every doubling).
  static constexpr int kRecompileWarningThreshold = 3;

 private:
  StatusOr<std::shared_ptr<const CompiledProgram>> RunPasses(
      const ir::Module& module, const std::string& entry, const hw::ChipSpec& chip,
      const std::vector<compiler::PassInfo>& passes);
  void NoteSignature(const ir::Function& f);

  CompileOptions options_;
  std::map<std::string, std::shared_ptr<const CompiledProgram>> memory_cache_;
  std::map<std::string, int, std::less<>> compilations_;
  // Per entry, the distinct argument type lists compiled so far.
  std::map<std::string, std::vector<std::vector<ir::Type>>> signatures_;
  std::vector<std::string> warnings_;
  std::optional<compiler::MemoryPlan> exhausted_;
};

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_COMPILE_H_
