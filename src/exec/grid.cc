#include "tpusim/exec/grid.h"

#include <optional>
#include <system_error>
#include <thread>

#include "ops/util/parallel.h"

namespace tpusim::exec {

StatusOr<std::vector<std::vector<Tensor>>> RunGrid(const ir::Module& module,
                                                   const ops::EvalOptions& options,
                                                   ops::Collectives& grid,
                                                   const GridProgram& program) {
  const size_t n = program.functions.size();
  if (static_cast<int64_t>(n) > kMaxGridProcesses) {
    return ResourceExhausted("a grid of " + std::to_string(n) + " processes exceeds " +
                             std::to_string(kMaxGridProcesses));
  }
  const int64_t replicas = grid.num_replicas(), partitions = grid.num_partitions();
  std::vector<StatusOr<std::vector<Tensor>>> results(
      n, Status(StatusCode::kInternal, "process did not run"));
  auto run = [&](size_t i) {
    // The processes' threads fill the cores between them: each runs its
    // ops' loops serially (one alone takes them all).
    std::optional<ops::SerialOps> serial;
    if (n > 1) serial.emplace();
    const ops::ProcessId id = program.first + static_cast<ops::ProcessId>(i);
    const int64_t r = id / partitions, p = id % partitions;
    Interpreter process(module, options, ProcessPlace{r, p, replicas, partitions, &grid});
    if (i < program.observers.size()) process.set_observer(program.observers[i]);
    process.set_progress(program.progress);
    results[i] = process.Run(program.functions[i], program.args[i]);
    if (!results[i].ok()) {
      grid.Abort(results[i].status().WithContext("process (" + std::to_string(r) + ", " +
                                                 std::to_string(p) + ")"));
    }
    grid.Finish(id);
  };
  std::vector<std::thread> threads;
  for (size_t id = 0; id < n; ++id) {
    try {
      threads.emplace_back(run, id);
    } catch (const std::system_error& e) {
      grid.Abort(ResourceExhausted(std::string("cannot start a process thread: ") + e.what()));
      for (size_t rest = id; rest < n; ++rest) {
        grid.Finish(program.first + static_cast<ops::ProcessId>(rest));
      }
      break;
    }
  }
  for (std::thread& t : threads) t.join();
  TPUSIM_RETURN_IF_ERROR(grid.FirstError());
  std::vector<std::vector<Tensor>> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

}  // namespace tpusim::exec
