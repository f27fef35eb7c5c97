// The functional executor: evaluates a module's functions on host tensors,
// op by op, with the semantics of each op's OpDef and the chosen numerics.
#ifndef TPUSIM_EXEC_INTERPRETER_H_
#define TPUSIM_EXEC_INTERPRETER_H_

#include <span>
#include <unordered_map>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/exec/progress.h"
#include "tpusim/ir/ir.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::exec {

// Where one process sits in a replicas x partitions grid.
struct ProcessPlace {
  int64_t replica_id = 0;
  int64_t partition_id = 0;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  ops::Collectives* collectives = nullptr;  // not owned; null when alone
};

// Told of every op the interpreter evaluates, in execution order, nested
// regions and called functions included (a while body once per iteration).
// `operands` that the op took to reuse (EvalContext::TakeOperands) are empty
// Tensors by then, and a splat result left unexpanded is its one element
// (OpDef::splat_operands): read types from the op, not from the tensors.
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  virtual void OnOp(const ir::Operation& op, std::span<const Tensor> operands,
                    std::span<const Tensor> results) = 0;
};

// Runs functions of one module. REQUIRES: the module outlives the
// Interpreter and was verified. Not thread-safe: run processes of a grid
// with one Interpreter each.
class Interpreter : public ops::EvalContext {
 public:
  Interpreter(const ir::Module& module, ops::EvalOptions options,
              ProcessPlace place = {});

  // Evaluates `function` on `args` (one per parameter, of its types).
  StatusOr<std::vector<Tensor>> Run(std::string_view function,
                                    std::span<const Tensor> args);
  // As Run, handing the arguments over: the function's ops may write their
  // results into an argument's storage that nothing else holds (a train
  // step's state, updated in place). REQUIRES: that storage is writable.
  StatusOr<std::vector<Tensor>> RunConsuming(std::string_view function,
                                             std::vector<Tensor> args) {
    return CallConsuming(function, std::move(args));
  }

  // Not owned; null (the default) observes nothing.
  void set_observer(OpObserver* observer) { observer_ = observer; }
  // Where the run counts its ops and loop iterations and reads whether to
  // stop (then Run returns kCancelled, located at the op it stopped before).
  // Not owned; null (the default): the run neither counts nor stops.
  void set_progress(Progress* progress) { progress_ = progress; }

  // ops::EvalContext
  const ops::EvalOptions& options() const override { return options_; }
  const ir::Module& module() const override { return module_; }
  StatusOr<std::vector<Tensor>> RunRegion(const ir::Region& region,
                                          std::span<const Tensor> args) override;
  StatusOr<std::vector<Tensor>> Call(std::string_view function,
                                     std::span<const Tensor> args) override;
  std::vector<Tensor> TakeOperands(std::span<const Tensor> operands) override;
  StatusOr<std::vector<Tensor>> RunRegionConsuming(const ir::Region& region,
                                                   std::vector<Tensor> args) override;
  StatusOr<std::vector<Tensor>> CallConsuming(std::string_view function,
                                              std::vector<Tensor> args) override;
  int64_t replica_id() const override { return place_.replica_id; }
  int64_t partition_id() const override { return place_.partition_id; }
  int64_t num_replicas() const override { return place_.num_replicas; }
  int64_t num_partitions() const override { return place_.num_partitions; }
  ops::Collectives* collectives() override { return place_.collectives; }
  Status BeginIteration(const ir::Operation& loop, int64_t iteration) override;

 private:
  // What RunBlock does with values after each op of a block.
  struct BlockPlan {
    // For each op, the ids of the values defined in the block (arguments,
    // results) whose last use it is; RunBlock drops them after the op so
    // that memory peaks at what is live, not at all a function made. Values
    // from enclosing blocks are left to those: a region may run again.
    std::vector<std::vector<int>> dead;
    // For each op, the positions of its operands that it hands over by move:
    // values of `dead` it reads once, and not from its regions too, so that
    // the op may take their storage (EvalContext::TakeOperands).
    std::vector<std::vector<int>> moved;
    // For each op, whether it fills a large result with one element (a
    // splat constant, a broadcast of one element) that only ops taking
    // splat operands (OpDef::splat_operands) read: the result is never
    // expanded, its value a 0-d tensor of the element.
    std::vector<bool> lazy;
  };

  StatusOr<std::vector<Tensor>> CallFunction(std::string_view function, std::vector<Tensor> args);
  StatusOr<std::vector<Tensor>> RunRegionBlock(const ir::Region& region, std::vector<Tensor> args);
  StatusOr<std::vector<Tensor>> RunBlock(const ir::Block& block, std::vector<Tensor> args);
  Status RunOp(const ir::Operation& op, const std::vector<int>& moved);
  // Runs a lazy op (BlockPlan::lazy): its result's one element.
  Status RunLazy(const ir::Operation& op);
  const BlockPlan& PlanOf(const ir::Block& block);

  const ir::Module& module_;
  ops::EvalOptions options_;
  ProcessPlace place_;
  OpObserver* observer_ = nullptr;
  Progress* progress_ = nullptr;
  std::vector<Tensor>* frame_ = nullptr;  // values of the running function
  int depth_ = 0;
  std::unordered_map<const ir::Block*, BlockPlan> plans_;
  // The operands handed to the op being evaluated, which TakeOperands may
  // move from; null once taken or outside an evaluation.
  std::vector<Tensor>* handed_ = nullptr;
};

}  // namespace tpusim::exec

#endif  // TPUSIM_EXEC_INTERPRETER_H_
