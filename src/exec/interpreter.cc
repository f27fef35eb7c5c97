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

StatusOr<std::vector<Tensor>> Interpreter::RunBlock(const ir::Block& block,
                                                    std::span<const Tensor> args) {
  TPUSIM_RETURN_IF_ERROR(CheckArgs(block, args));
  std::vector<Tensor>& frame = *frame_;
  for (int i = 0; i < block.num_arguments(); ++i) frame[block.argument(i).id()] = args[i];
  for (const auto& op : block.ops()) {
    const ops::OpDef* def = ops::OpRegistry::Lookup(op->name());
    if (def != nullptr && def->is_terminator) {
      std::vector<Tensor> out;
      out.reserve(op->num_operands());
      for (ir::Value v : op->operands()) out.push_back(frame[v.id()]);
      return out;
    }
    TPUSIM_RETURN_IF_ERROR(RunOp(*op));
  }
  return std::vector<Tensor>{};  // a block without terminator yields nothing
}

Status Interpreter::RunOp(const ir::Operation& op) {
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
