// The compiler: how long compiling takes, and what it buys. Prints
//  - compile time of a 10,001-op program (every pass, no cache) against its
//    parse time and the one-second target, and a memory-cache hit;
//  - the bundled MLP step and a larger transformer-like program timed with
//    and without fusion;
//  - the HBM peak buffer assignment plans against the sum of all buffers.
// Run: build/bench/compile_bench
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "clock.h"
#include "programs.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/report/report.h"
#include "tpusim/runtime/compile.h"
#include "tpusim/runtime/load.h"
#include "tpusim/timing/timing.h"
#include "tpusim/verify/verifier.h"

namespace {

using tpusim::bench::Clock;
using tpusim::bench::Seconds;
using tpusim::runtime::CompileOptions;
using tpusim::runtime::Compiler;

std::unique_ptr<tpusim::ir::Module> MustParse(const std::string& text, const char* name) {
  auto module = tpusim::frontend::ParseStableHlo(text, name);
  if (!module.ok() || !tpusim::verify::VerifyModule(**module).ok()) {
    std::printf("cannot build %s: %s\n", name, module.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*module);
}

CompileOptions NoCache(bool fusion = true) {
  CompileOptions o;
  o.use_cache = false;
  o.fusion = fusion;
  return o;
}

void CompileSpeed(const tpusim::hw::ChipSpec& chip) {
  std::string text = tpusim::bench::LayeredProgram(1000);
  auto t0 = Clock::now();
  auto module = MustParse(text, "layers.mlir");
  const double parse_s = Seconds(t0);
  int ops = 0;
  for (const auto& op : module->Lookup("main")->entry().ops()) ops += op ? 1 : 0;
  std::filesystem::path cache = std::filesystem::temp_directory_path() /
                                ("tpusim_compile_bench_" + std::to_string(getpid()));
  Compiler compiler(CompileOptions{.cache_dir = cache.string()});
  auto compiled = compiler.Compile(*module, "main", chip);
  if (!compiled.ok() || compiled->cache != tpusim::runtime::CacheResult::kCompiled) {
    std::printf("compile failed: %s\n", compiled.status().ToString().c_str());
    std::exit(1);
  }
  auto memory_hit = compiler.Compile(*module, "main", chip);
  auto disk_hit = Compiler(CompileOptions{.cache_dir = cache.string()}).Compile(*module, "main", chip);
  std::filesystem::remove_all(cache);
  std::printf("compile a %d-op program, every pass: %.3f s = %.2f x its parse+verify time "
              "(%.3f s); %.2f of the 1 s target\n",
              ops, compiled->seconds, compiled->seconds / parse_s, parse_s,
              compiled->seconds / 1.0);
  for (const auto& [p, t] : compiled->program->pass_seconds) std::printf("  %-18s %.3f s\n", p.c_str(), t);
  std::printf("  then a memory-cache hit %.3f s, a disk-cache hit %.3f s\n",
              memory_hit.ok() ? memory_hit->seconds : -1.0,
              disk_hit.ok() ? disk_hit->seconds : -1.0);
}

struct Timed {
  double seconds = 0;
  int64_t hbm_bytes = 0;
  size_t kernels = 0;
  const tpusim::compiler::MemoryPlan* memory = nullptr;
  std::shared_ptr<const tpusim::runtime::CompiledProgram> program;
};

Timed CompileAndTime(const tpusim::ir::Module& module, const tpusim::hw::ChipSpec& chip,
                     bool fusion) {
  Compiler compiler(NoCache(fusion));
  auto compiled = compiler.Compile(module, "main", chip);
  if (!compiled.ok()) {
    std::printf("compile failed: %s\n", compiled.status().ToString().c_str());
    std::exit(1);
  }
  auto timeline = tpusim::timing::TimeStatically(*compiled->program->module, "main", chip, {});
  if (!timeline.ok()) {
    std::printf("timing failed: %s\n", timeline.status().ToString().c_str());
    std::exit(1);
  }
  tpusim::report::Summary s = tpusim::report::Summarize(*timeline);
  Timed t{.seconds = s.total_seconds, .hbm_bytes = s.hbm_bytes,
          .kernels = timeline->events().size(), .program = compiled->program};
  t.memory = t.program->memory ? &*t.program->memory : nullptr;
  return t;
}

void FusionAndMemory(const char* name, const tpusim::ir::Module& module,
                     const tpusim::hw::ChipSpec& chip) {
  Timed fused = CompileAndTime(module, chip, true);
  Timed unfused = CompileAndTime(module, chip, false);
  using tpusim::report::FormatBytes;
  using tpusim::report::FormatSeconds;
  std::printf("%s on %s: fused %s in %zu launches (ops or kernels), unfused %s in %zu: "
              "%.2f x faster; "
              "HBM traffic %s vs %s (%.2f x less)\n",
              name, chip.name.c_str(), FormatSeconds(fused.seconds).c_str(), fused.kernels,
              FormatSeconds(unfused.seconds).c_str(), unfused.kernels,
              unfused.seconds / fused.seconds, FormatBytes(fused.hbm_bytes).c_str(),
              FormatBytes(unfused.hbm_bytes).c_str(),
              static_cast<double>(unfused.hbm_bytes) / fused.hbm_bytes);
  for (const Timed* t : {&fused, &unfused}) {
    if (t->memory == nullptr) continue;
    std::printf("  %s: HBM peak %s vs %s for all %d buffers without reuse (%.2f of it)\n",
                t == &fused ? "fused" : "unfused",
                FormatBytes(t->memory->peak_bytes).c_str(),
                FormatBytes(t->memory->sum_of_buffers).c_str(), t->memory->num_buffers,
                static_cast<double>(t->memory->peak_bytes) / t->memory->sum_of_buffers);
  }
}

}  // namespace

int main() {
  auto v5e = tpusim::hw::FindPreset("v5e");
  CompileSpeed(*v5e);
  auto mlp = tpusim::runtime::LoadModule(TPUSIM_SOURCE_DIR "/examples/mlp_step.mlir");
  if (!mlp.ok()) {
    std::printf("cannot load the MLP step: %s\n", mlp.status().ToString().c_str());
    return 1;
  }
  FusionAndMemory("examples/mlp_step.mlir", **mlp, *v5e);
  FusionAndMemory("4-layer transformer-like block (bench/programs.h)",
                  *MustParse(tpusim::bench::LayeredProgram(4), "layers4.mlir"), *v5e);
  return 0;
}
