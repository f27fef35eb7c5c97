#include "tpusim/exec/interpreter.h"

namespace tpusim::exec {
namespace {

// Deep recursion through func.call would otherwise overflow the stack.
constexpr int kMaxCallDepth = 256;

Status CheckArgs(const ir::Block& block, std::span<const Tensor> args) {
  if (static_cast<int>(args.size()) != block.num_arguments()) {
    return InvalidArgument("expected " + std::to_string(block.num_arguments()) +
                           " arguments, got " + std::to_string(args.size()));
  }
  for (int i = 0; i < block.num_arguments(); ++i) {
    if (args[i].type() != block.argument(i).type()) {
      return InvalidArgument("argument " + std::to_string(i) + " has type " +
                             args[i].type().ToString() + ", expected " +
                             block.argument(i).type().ToString());
    }
  }
  return Status::Ok();
}

// Appends the ids of every value `op` and the ops nested in it read.
void CollectUses(const ir::Operation& op, std::vector<int>& ids) {
  for (ir::Value v : op.operands()) ids.push_back(v.id());
  for (int r = 0; r < op.num_regions(); ++r) {
    for (int b = 0; b < op.region(r).num_blocks(); ++b) {
      for (const auto& nested : op.region(r).block(b).ops()) CollectUses(*nested, ids);
    }
  }
}

}  // namespace

Interpreter::Interpreter(const ir::Module& module, ops::EvalOptions options,
                         ProcessPlace place)
    : module_(module), options_(options), place_(place) {}

StatusOr<std::vector<Tensor>> Interpreter::Run(std::string_view function,
                                               std::span<const Tensor> args) {
  return Call(function, args);
}

StatusOr<std::vector<Tensor>> Interpreter::Call(std::string_view function,
                                                std::span<const Tensor> args) {
  const ir::Function* f = module_.Lookup(function);
  if (f == nullptr) return NotFound("no function @" + std::string(function));
  if (depth_ >= kMaxCallDepth) {
    return ResourceExhausted("call depth exceeds " + std::to_string(kMaxCallDepth) +
                             " at @" + std::string(function));
  }
  std::vector<Tensor> frame(f->num_values());
  std::vector<Tensor>* saved = frame_;
  frame_ = &frame;
  ++depth_;
  auto results = RunBlock(f->entry(), args);
  --depth_;
  frame_ = saved;
  return results;
}

StatusOr<std::vector<Tensor>> Interpreter::RunRegion(const ir::Region& region,
                                                     std::span<const Tensor> args) {
  if (region.empty()) return Internal("running an empty region");
  const ir::Operation* owner = region.parent_op();
  const ops::OpDef* def = owner ? ops::OpRegistry::Lookup(owner->name()) : nullptr;
  if (def != nullptr && def->control_flow) return RunBlock(region.front(), args);
  // A per-element computation: its cost is in the owner's work, so its ops
  // are not observed one by one.
  OpObserver* saved = observer_;
  observer_ = nullptr;
  auto results = RunBlock(region.front(), args);
  observer_ = saved;
  return results;
}

const std::vector<std::vector<int>>& Interpreter::DeadAfter(const ir::Block& block) {
  auto it = dead_after_.find(&block);
  if (it != dead_after_.end()) return it->second;
  const auto& ops = block.ops();
  std::unordered_map<int, int> last;  // value id -> index of its last use
  for (ir::Value a : block.arguments()) last[a.id()] = 0;
  std::vector<int> uses;
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    uses.clear();
    CollectUses(*ops[i], uses);
    for (int id : uses) {
      auto found = last.find(id);
      if (found != last.end()) found->second = i;
    }
    for (ir::Value r : ops[i]->results()) last[r.id()] = i;
  }
  std::vector<std::vector<int>> dead(ops.size());
  for (const auto& [id, i] : last) dead[i].push_back(id);
  return dead_after_.emplace(&block, std::move(dead)).first->second;
}

StatusOr<std::vector<Tensor>> Interpreter::RunBlock(const ir::Block& block,
                                                    std::span<const Tensor> args) {
  TPUSIM_RETURN_IF_ERROR(CheckArgs(block, args));
  std::vector<Tensor>& frame = *frame_;
  for (int i = 0; i < block.num_arguments(); ++i) frame[block.argument(i).id()] = args[i];
  const std::vector<std::vector<int>>& dead = DeadAfter(block);
  for (size_t i = 0; i < block.ops().size(); ++i) {
    const ir::Operation& op = *block.ops()[i];
    const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
    if (def != nullptr && def->is_terminator) {
      std::vector<Tensor> out;
      out.reserve(op.num_operands());
      for (ir::Value v : op.operands()) out.push_back(frame[v.id()]);
      return out;
    }
    TPUSIM_RETURN_IF_ERROR(RunOp(op));
    for (int id : dead[i]) frame[id] = Tensor();
  }
  return std::vector<Tensor>{};  // a block without terminator yields nothing
}

Status Interpreter::BeginIteration(const ir::Operation& loop, int64_t iteration) {
  if (progress_ == nullptr) return Status::Ok();
  if (progress_->stopped()) {
    return Cancelled("stopped in iteration " + std::to_string(iteration) + " of this loop")
        .WithLocation(loop.loc().ToString());
  }
  progress_->loop.store(&loop, std::memory_order_relaxed);
  progress_->iteration.store(iteration, std::memory_order_relaxed);
  return Status::Ok();
}

Status Interpreter::RunOp(const ir::Operation& op) {
  if (progress_ != nullptr) {
    if (progress_->stopped()) {
      return Cancelled("stopped before '" + op.name_str() + "'").WithLocation(op.loc().ToString());
    }
    progress_->ops.fetch_add(1, std::memory_order_relaxed);
  }
  const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
  if (def == nullptr || !def->eval) {
    return Unimplemented("op '" + op.name_str() + "' cannot be evaluated")
        .WithLocation(op.loc().ToString());
  }
  std::vector<Tensor>& frame = *frame_;
  std::vector<Tensor> operands;
  operands.reserve(op.num_operands());
  for (ir::Value v : op.operands()) operands.push_back(frame[v.id()]);
  auto results = def->eval(*this, op, operands);
  if (!results.ok()) {
    Status st = results.status();
    if (st.has_location()) return st;  // raised inside a nested region
    return st.WithContext(op.name_str()).WithLocation(op.loc().ToString());
  }
  if (static_cast<int>(results->size()) != op.num_results()) {
    return Internal(op.name_str() + " produced " + std::to_string(results->size()) +
                    " results, expected " + std::to_string(op.num_results()))
        .WithLocation(op.loc().ToString());
  }
  if (observer_ != nullptr) observer_->OnOp(op, operands, *results);
  // frame_ may have been swapped by a nested call; it is restored by now.
  for (int i = 0; i < op.num_results(); ++i) {
    (*frame_)[op.result(i).id()] = std::move((*results)[i]);
  }
  return Status::Ok();
}

}  // namespace tpusim::exec
