// Runs the processes of a replicas x partitions grid at once: each on its own
// thread with its own Interpreter, joined by one ops::Collectives, as the
// devices of a pod slice run one SPMD program (or run_parallel's programs).
#ifndef TPUSIM_EXEC_GRID_H_
#define TPUSIM_EXEC_GRID_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/ops/collectives.h"

namespace tpusim::exec {

// Processes a grid may have: one thread each.
inline constexpr int64_t kMaxGridProcesses = 1024;

// The processes first, first + 1, ... (replica-major ids) of a grid: all of
// them, or those of one host when the grid spans hosts (ops::GridLink).
struct GridProgram {
  ops::ProcessId first = 0;
  std::vector<std::string> functions;     // per process
  std::vector<std::vector<Tensor>> args;  // per process
  std::vector<OpObserver*> observers;     // per process, or empty; entries may be null
  Progress* progress = nullptr;           // shared by every process, or null
};

// Runs each process id = replica * partitions + partition of `program` on
// its own thread, evaluating program.functions[i] on program.args[i]
// (i = id - program.first); returns each one's results. The first process to
// fail stops the others, and its error (naming the process) is returned.
// kResourceExhausted past kMaxGridProcesses. REQUIRES: the processes lie in
// the grid.
StatusOr<std::vector<std::vector<Tensor>>> RunGrid(const ir::Module& module,
                                                   const ops::EvalOptions& options,
                                                   ops::Collectives& grid,
                                                   const GridProgram& program);

}  // namespace tpusim::exec

#endif  // TPUSIM_EXEC_GRID_H_
