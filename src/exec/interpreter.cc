#include "tpusim/exec/interpreter.h"

#include <algorithm>
#include <cstring>
#include <utility>

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

// Appends the ids of every value the ops nested in `op`'s regions read.
void CollectNestedUses(const ir::Operation& op, std::vector<int>& ids) {
  for (int r = 0; r < op.num_regions(); ++r) {
    for (int b = 0; b < op.region(r).num_blocks(); ++b) {
      for (const auto& nested : op.region(r).block(b).ops()) {
        for (ir::Value v : nested->operands()) ids.push_back(v.id());
        CollectNestedUses(*nested, ids);
      }
    }
  }
}

bool Contains(const std::vector<int>& ids, int id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Splats from this many elements are left unexpanded where they can be
// (BlockPlan::lazy); smaller ones cost less than the bookkeeping.
constexpr int64_t kLazySplatElements = 1024;

// Whether `op` fills a large result with one element: a splat constant, or a
// broadcast of a one-element operand.
bool IsLargeSplat(const ir::Operation& op) {
  if (op.num_results() != 1 || !op.result(0).type().is_tensor() ||
      op.result(0).type().num_elements() < kLazySplatElements) {
    return false;
  }
  if (op.name_str() == "stablehlo.constant") {
    const ir::Attribute value = op.attr("value");
    return value.kind() == ir::Attribute::Kind::kDenseElements && value.type().is_tensor() &&
           value.is_splat() && value.type() == op.result(0).type();
  }
  return op.name_str() == "stablehlo.broadcast_in_dim" && op.num_operands() == 1 &&
         op.operand(0).type().is_tensor() && op.operand(0).type().num_elements() == 1 &&
         op.operand(0).type().element() == op.result(0).type().element();
}

// Whether every use of op `i`'s one result, among the later ops of its
// block, is an operand of an op that takes splat operands.
bool OnlySplatReaders(const std::vector<std::unique_ptr<ir::Operation>>& ops, size_t i,
                      const std::vector<std::vector<int>>& nested) {
  const int id = ops[i]->result(0).id();
  for (size_t j = i + 1; j < ops.size(); ++j) {
    if (Contains(nested[j], id)) return false;
    bool reads = false;
    for (ir::Value v : ops[j]->operands()) reads = reads || v.id() == id;
    if (!reads) continue;
    const ops::OpDef* def = ops::OpRegistry::Lookup(ops[j]->name());
    if (def == nullptr || !def->splat_operands) return false;
  }
  return true;
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
  return CallFunction(function, {args.begin(), args.end()});
}

StatusOr<std::vector<Tensor>> Interpreter::CallConsuming(std::string_view function,
                                                         std::vector<Tensor> args) {
  return CallFunction(function, std::move(args));
}

StatusOr<std::vector<Tensor>> Interpreter::CallFunction(std::string_view function,
                                                        std::vector<Tensor> args) {
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
  auto results = RunBlock(f->entry(), std::move(args));
  --depth_;
  frame_ = saved;
  return results;
}

StatusOr<std::vector<Tensor>> Interpreter::RunRegion(const ir::Region& region,
                                                     std::span<const Tensor> args) {
  return RunRegionBlock(region, {args.begin(), args.end()});
}

StatusOr<std::vector<Tensor>> Interpreter::RunRegionConsuming(const ir::Region& region,
                                                              std::vector<Tensor> args) {
  return RunRegionBlock(region, std::move(args));
}

StatusOr<std::vector<Tensor>> Interpreter::RunRegionBlock(const ir::Region& region,
                                                          std::vector<Tensor> args) {
  if (region.empty()) return Internal("running an empty region");
  const ir::Operation* owner = region.parent_op();
  const ops::OpDef* def = owner ? ops::OpRegistry::Lookup(owner->name()) : nullptr;
  if (def != nullptr && def->control_flow) return RunBlock(region.front(), std::move(args));
  // A per-element computation: its cost is in the owner's work, so its ops
  // are not observed one by one.
  OpObserver* saved = observer_;
  observer_ = nullptr;
  auto results = RunBlock(region.front(), std::move(args));
  observer_ = saved;
  return results;
}

std::vector<Tensor> Interpreter::TakeOperands(std::span<const Tensor> operands) {
  if (handed_ == nullptr || operands.data() != handed_->data() ||
      operands.size() != handed_->size()) {
    return {operands.begin(), operands.end()};
  }
  std::vector<Tensor> taken;
  taken.reserve(handed_->size());
  // An observer sees empty Tensors where the operands were.
  for (Tensor& t : *handed_) taken.push_back(std::exchange(t, Tensor()));
  handed_ = nullptr;
  return taken;
}

const Interpreter::BlockPlan& Interpreter::PlanOf(const ir::Block& block) {
  auto it = plans_.find(&block);
  if (it != plans_.end()) return it->second;
  const auto& ops = block.ops();
  std::unordered_map<int, int> last;  // value id -> index of its last use
  for (ir::Value a : block.arguments()) last[a.id()] = 0;
  std::vector<std::vector<int>> nested(ops.size());
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    CollectNestedUses(*ops[i], nested[i]);
    for (ir::Value v : ops[i]->operands()) {
      if (auto found = last.find(v.id()); found != last.end()) found->second = i;
    }
    for (int id : nested[i]) {
      if (auto found = last.find(id); found != last.end()) found->second = i;
    }
    for (ir::Value r : ops[i]->results()) last[r.id()] = i;
  }
  BlockPlan plan;
  plan.dead.resize(ops.size());
  plan.moved.resize(ops.size());
  plan.lazy.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    plan.lazy[i] = IsLargeSplat(*ops[i]) && OnlySplatReaders(ops, i, nested);
  }
  for (const auto& [id, i] : last) plan.dead[i].push_back(id);
  for (size_t i = 0; i < ops.size(); ++i) {
    const ir::Operation& op = *ops[i];
    for (int k = 0; k < op.num_operands(); ++k) {
      const int id = op.operand(k).id();
      auto found = last.find(id);
      if (found == last.end() || found->second != static_cast<int>(i) || Contains(nested[i], id)) {
        continue;
      }
      int uses = 0;
      for (ir::Value v : op.operands()) uses += v.id() == id;
      if (uses == 1) plan.moved[i].push_back(k);
    }
  }
  return plans_.emplace(&block, std::move(plan)).first->second;
}

StatusOr<std::vector<Tensor>> Interpreter::RunBlock(const ir::Block& block,
                                                    std::vector<Tensor> args) {
  TPUSIM_RETURN_IF_ERROR(CheckArgs(block, args));
  std::vector<Tensor>& frame = *frame_;
  for (int i = 0; i < block.num_arguments(); ++i) {
    frame[block.argument(i).id()] = std::move(args[i]);
  }
  args.clear();
  const BlockPlan& plan = PlanOf(block);
  for (size_t i = 0; i < block.ops().size(); ++i) {
    const ir::Operation& op = *block.ops()[i];
    const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
    if (def != nullptr && def->is_terminator) {
      // The block's values die here: the results are moved out, so that a
      // loop's next iteration holds its state alone.
      std::vector<Tensor> out;
      out.reserve(op.num_operands());
      for (ir::Value v : op.operands()) out.push_back(frame[v.id()]);
      for (int k : plan.moved[i]) out[k] = std::move(frame[op.operand(k).id()]);
      for (int id : plan.dead[i]) frame[id] = Tensor();
      return out;
    }
    TPUSIM_RETURN_IF_ERROR(plan.lazy[i] ? RunLazy(op) : RunOp(op, plan.moved[i]));
    for (int id : plan.dead[i]) frame[id] = Tensor();
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

Status Interpreter::RunLazy(const ir::Operation& op) {
  if (progress_ != nullptr) {
    if (progress_->stopped()) {
      return Cancelled("stopped before '" + op.name_str() + "'").WithLocation(op.loc().ToString());
    }
    progress_->ops.fetch_add(1, std::memory_order_relaxed);
  }
  // The one element, as a 0-d tensor: a constant's from its attribute, a
  // broadcast's its operand's storage.
  std::vector<Tensor>& frame = *frame_;
  std::vector<Tensor> results(1), operands;
  const ir::Type scalar = ir::Type::Tensor(op.result(0).type().element(), {});
  if (op.num_operands() == 0) {
    TPUSIM_ASSIGN_OR_RETURN(results[0], Tensor::AllocateUninitialized(scalar));
    std::memcpy(results[0].mutable_raw(), op.attr("value").bytes().data(),
                static_cast<size_t>(results[0].size_bytes()));
  } else {
    operands.push_back(frame[op.operand(0).id()]);
    if (!operands[0].valid() || operands[0].num_elements() != 1) {
      return Internal("a broadcast of one element has no value for it")
          .WithLocation(op.loc().ToString());
    }
    results[0] = operands[0].Reshaped({});
  }
  if (observer_ != nullptr) observer_->OnOp(op, operands, results);
  frame[op.result(0).id()] = std::move(results[0]);
  return Status::Ok();
}

Status Interpreter::RunOp(const ir::Operation& op, const std::vector<int>& moved) {
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
  // A value the op reads last is handed over: the op may reuse its storage.
  for (int k : moved) operands[k] = std::move(frame[op.operand(k).id()]);
  std::vector<Tensor>* saved = handed_;
  handed_ = &operands;
  auto results = def->eval(*this, op, operands);
  handed_ = saved;
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
