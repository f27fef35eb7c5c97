// Compiler passes: named single-purpose rewrites of a module, run in one
// pipeline (pipeline.h) between the front end and the executor, as XLA does
// before a program runs on a TPU. Each pass is a function listed once in
// src/compiler/pipeline.cc; the pipeline verifies the module after each.
#ifndef TPUSIM_COMPILER_PASS_H_
#define TPUSIM_COMPILER_PASS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/compiler/memory_plan.h"
#include "tpusim/hw/chip.h"
#include "tpusim/ir/ir.h"

namespace tpusim::compiler {

// What the passes of one compilation share.
struct PassContext {
  const hw::ChipSpec* chip = nullptr;  // the target; never null in a pipeline
  std::string entry;                   // the entry function, kept by every pass
  std::optional<MemoryPlan> memory;    // set by buffer-assignment
  std::vector<std::string> notes;      // for the report: what passes decided
  // Wall time of each pass run, in order (set by RunPipeline).
  std::vector<std::pair<std::string, double>> pass_seconds;
};

// Passes, in pipeline order. Each keeps the entry function and the values it
// computes; errors stop the compilation.

// Inlines every call of a private function and removes private functions
// left without callers.
Status RunInlining(ir::Module& module, PassContext& ctx);

// Canonicalization and algebraic simplification: x+0, x*1, double
// negation and transposes, no-op reshapes/converts/broadcasts, ...
Status RunCanonicalize(ir::Module& module, PassContext& ctx);

// Evaluates ops whose operands are all constants (within a size limit) and
// replaces them by constants.
Status RunConstantFolding(ir::Module& module, PassContext& ctx);

// Removes ops whose results are unused and that have no side effects.
Status RunDeadCodeElimination(ir::Module& module, PassContext& ctx);

// Chooses each value's layout so its minor two dimensions fill the TPU's
// tiles, and inserts tpusim.copy where an op needs another layout.
Status RunLayoutAssignment(ir::Module& module, PassContext& ctx);

// Fuses elementwise chains, producers into reductions and epilogues into
// dots and convolutions, as tpusim.fusion kernels.
Status RunFusion(ir::Module& module, PassContext& ctx);

// Memory scheduling: moves each op that is the only reader of a larger
// value of its block (a reduce-scatter of a weight gradient) up to just
// after what it depends on, so that value dies early. Ops with side
// effects pass only collectives.
Status RunMemoryScheduling(ir::Module& module, PassContext& ctx);

// Latency-hiding scheduling (off by default): reorders each block's ops so
// that collectives start early and independent compute runs while they are
// in flight; ops with side effects keep their order.
Status RunLatencyHidingScheduler(ir::Module& module, PassContext& ctx);

// Liveness-based buffer assignment: sets ctx.memory; kResourceExhausted
// when the peak exceeds the chip's HBM.
Status RunBufferAssignment(ir::Module& module, PassContext& ctx);

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_PASS_H_
