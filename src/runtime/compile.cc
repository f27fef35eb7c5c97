#include "tpusim/runtime/compile.h"

#include <algorithm>
#include <chrono>

#include "runtime/compile_cache.h"
#include "tpusim/compiler/pipeline.h"
#include "tpusim/ir/printer.h"
#include "tpusim/ir/rewrite.h"

namespace tpusim::runtime {
namespace {

StatusOr<std::vector<compiler::PassInfo>> Passes(const CompileOptions& options) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<compiler::PassInfo> passes,
                          compiler::SelectPasses(options.passes));
  if (!options.fusion) std::erase_if(passes, [](const auto& p) { return p.name == "fusion"; });
  auto has = [&](std::string_view name) {
    return std::any_of(passes.begin(), passes.end(), [&](const auto& p) { return p.name == name; });
  };
  if (options.latency_hiding && !has("latency-hiding")) {
    // In pipeline order: every pass listed before it that was chosen, then it.
    std::vector<compiler::PassInfo> with;
    for (const compiler::PassInfo& p : compiler::AllPasses()) {
      if (p.name == "latency-hiding" || has(p.name)) with.push_back(p);
    }
    passes = std::move(with);
  }
  return passes;
}

std::string ArgName(const ir::Function& f, int i) {
  const std::string& name = f.entry().argument(i).name();
  return "%" + (name.empty() ? "arg" + std::to_string(i) : name);
}

// "%x (tensor<8xf32>, tensor<16xf32>)" for each argument whose type differs
// between the signatures.
std::string ChangedArguments(const ir::Function& f,
                             const std::vector<std::vector<ir::Type>>& signatures) {
  std::string out;
  for (size_t i = 0; i < signatures.front().size(); ++i) {
    std::vector<std::string> seen;
    for (const auto& sig : signatures) {
      std::string t = i < sig.size() ? sig[i].ToString() : "absent";
      if (std::find(seen.begin(), seen.end(), t) == seen.end()) seen.push_back(t);
    }
    if (seen.size() < 2) continue;
    std::string list;
    for (const std::string& t : seen) list += (list.empty() ? "" : ", ") + t;
    out += (out.empty() ? "" : "; ") + ArgName(f, static_cast<int>(i)) + " (" + list + ")";
  }
  return out.empty() ? "the number of arguments" : out;
}

}  // namespace

const char* CacheResultName(CacheResult r) {
  switch (r) {
    case CacheResult::kCompiled: return "miss";
    case CacheResult::kMemoryHit: return "memory hit";
    case CacheResult::kDiskHit: return "disk hit";
  }
  return "?";
}

Compiler::Compiler(CompileOptions options) : options_(std::move(options)) {}

int Compiler::compilations(std::string_view entry) const {
  auto it = compilations_.find(entry);
  return it == compilations_.end() ? 0 : it->second;
}

StatusOr<std::shared_ptr<const CompiledProgram>> Compiler::RunPasses(
    const ir::Module& module, const std::string& entry, const hw::ChipSpec& chip,
    const std::vector<compiler::PassInfo>& passes) {
  auto program = std::make_shared<CompiledProgram>();
  program->module = ir::CloneModule(module);
  program->entry = entry;
  compiler::PassContext ctx{.chip = &chip, .entry = entry};
  compiler::PipelineOptions pipeline{.passes = passes, .dump_dir = options_.dump_dir};
  exhausted_.reset();
  if (Status st = compiler::RunPipeline(*program->module, pipeline, ctx); !st.ok()) {
    if (st.code() == StatusCode::kResourceExhausted) exhausted_ = std::move(ctx.memory);
    return st;
  }
  for (const auto& p : passes) program->passes.emplace_back(p.name);
  program->notes = std::move(ctx.notes);
  program->pass_seconds = std::move(ctx.pass_seconds);
  program->memory = std::move(ctx.memory);
  ++compilations_[entry];
  return std::shared_ptr<const CompiledProgram>(std::move(program));
}

void Compiler::NoteSignature(const ir::Function& f) {
  auto& seen = signatures_[f.name()];
  const std::vector<ir::Type>& sig = f.type().inputs;
  if (std::find(seen.begin(), seen.end(), sig) != seen.end()) return;
  seen.push_back(sig);
  int n = static_cast<int>(seen.size());
  bool power_of_two_multiple = n % kRecompileWarningThreshold == 0 &&
                               ((n / kRecompileWarningThreshold) &
                                (n / kRecompileWarningThreshold - 1)) == 0;
  if (!power_of_two_multiple) return;
  warnings_.push_back("@" + f.name() + " has been compiled for " + std::to_string(n) +
                      " different argument shapes; changed: " + ChangedArguments(f, seen) +
                      ". Each new shape compiles again: pad or bucket shapes to reuse programs");
}

StatusOr<CompileResult> Compiler::Compile(const ir::Module& module, const std::string& entry,
                                          const hw::ChipSpec& chip) {
  auto start = std::chrono::steady_clock::now();
  const ir::Function* f = module.Lookup(entry);
  if (f == nullptr) return NotFound("no function @" + entry + " to compile");
  TPUSIM_ASSIGN_OR_RETURN(std::vector<compiler::PassInfo> passes, Passes(options_));
  CompileResult result;
  if (options_.use_cache) result.key = CacheKey(module, entry, chip, passes);
  bool lookup = options_.use_cache && options_.dump_dir.empty();
  if (auto it = memory_cache_.find(result.key); lookup && it != memory_cache_.end()) {
    result.program = it->second;
    result.cache = CacheResult::kMemoryHit;
  } else if (auto loaded = lookup ? LoadCompiled(options_.cache_dir, result.key, chip) : nullptr) {
    result.program = std::move(loaded);
    result.cache = CacheResult::kDiskHit;
  } else {
    TPUSIM_ASSIGN_OR_RETURN(result.program, RunPasses(module, entry, chip, passes));
  }
  if (options_.use_cache && result.cache != CacheResult::kMemoryHit) {
    memory_cache_[result.key] = result.program;
    if (result.cache == CacheResult::kCompiled) {
      StoreCompiled(options_.cache_dir, result.key, *result.program);
    }
  }
  NoteSignature(*f);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace tpusim::runtime
