#include "tpusim/compiler/pipeline.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "tpusim/compiler/refine_shapes.h"
#include "tpusim/io/file.h"
#include "tpusim/ir/printer.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::compiler {

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> kPasses = {
      // tpusim run, convert and check refine before partitioning and
      // compiling (runtime/arg_shapes.h), so the pipeline leaves it out.
      {"refine-shapes", "size the ? dimensions of shape-polymorphic programs (run does first)",
       RunRefineShapes, /*by_default=*/false},
      {"inline", "inline private functions into their callers", RunInlining},
      {"canonicalize", "canonical forms and algebraic simplification", RunCanonicalize},
      {"constant-fold", "evaluate ops whose operands are constants", RunConstantFolding},
      {"dce", "remove ops whose results are unused", RunDeadCodeElimination},
      {"layout-assignment", "choose TPU tile-friendly layouts, insert copies", RunLayoutAssignment},
      {"fusion", "fuse elementwise chains, reductions and dot epilogues", RunFusion},
      {"memory-scheduling", "move ops that shrink a value next to it, so it dies early",
       RunMemoryScheduling},
      {"latency-hiding", "start collectives early, compute while they run (--latency-hiding)",
       RunLatencyHidingScheduler, /*by_default=*/false},
      {"buffer-assignment", "plan HBM buffers by liveness; find the peak", RunBufferAssignment},
  };
  return kPasses;
}

namespace {

std::string KnownPasses() {
  std::string s;
  for (const PassInfo& p : AllPasses()) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

std::vector<std::string_view> SplitCommas(std::string_view spec) {
  std::vector<std::string_view> parts;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view part = spec.substr(0, comma);
    if (!part.empty()) parts.push_back(part);
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  return parts;
}

Status Dump(const ir::Module& module, const std::string& dir, int index, std::string_view pass) {
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%02d-", index);
  std::string path = (std::filesystem::path(dir) / (prefix + std::string(pass) + ".mlir")).string();
  return io::WriteFileAtomically(path, ir::PrintModule(module));
}

}  // namespace

StatusOr<std::vector<PassInfo>> SelectPasses(std::string_view spec) {
  std::vector<std::string_view> parts = SplitCommas(spec);
  bool removing = !parts.empty() && parts.front().starts_with('-');
  const bool every = parts.size() == 1 && parts[0] == "all";
  std::vector<bool> chosen(AllPasses().size());
  for (size_t i = 0; i < chosen.size(); ++i) {
    chosen[i] = every || ((parts.empty() || removing) && AllPasses()[i].by_default);
  }
  for (std::string_view part : parts) {
    if (part == "all") continue;
    bool remove = part.starts_with('-');
    if (remove != removing) {
      return InvalidArgument("--passes: '" + std::string(part) +
                             "': either list passes or remove them with '-', not both");
    }
    if (remove) part.remove_prefix(1);
    size_t i = 0;
    while (i < AllPasses().size() && AllPasses()[i].name != part) ++i;
    if (i == AllPasses().size()) {
      return InvalidArgument("--passes: unknown pass '" + std::string(part) +
                             "' (known: " + KnownPasses() + ")");
    }
    chosen[i] = !remove;
  }
  std::vector<PassInfo> out;
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (chosen[i]) out.push_back(AllPasses()[i]);
  }
  return out;
}

Status RunPipeline(ir::Module& module, const PipelineOptions& options, PassContext& ctx) {
  if (!options.dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.dump_dir, ec);
    if (ec) return InvalidArgument("cannot create " + options.dump_dir + ": " + ec.message());
    TPUSIM_RETURN_IF_ERROR(Dump(module, options.dump_dir, 0, "input"));
  }
  int index = 0;
  for (const PassInfo& pass : options.passes) {
    ++index;
    std::string context = "pass " + std::string(pass.name);
    auto start = std::chrono::steady_clock::now();
    TPUSIM_RETURN_IF_ERROR(pass.run(module, ctx).WithContext(context));
    ctx.pass_seconds.emplace_back(
        pass.name, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    TPUSIM_RETURN_IF_ERROR(
        verify::VerifyModule(module).WithContext("the module after " + context + " is invalid"));
    if (!options.dump_dir.empty()) {
      TPUSIM_RETURN_IF_ERROR(Dump(module, options.dump_dir, index, pass.name));
    }
  }
  return Status::Ok();
}

}  // namespace tpusim::compiler
