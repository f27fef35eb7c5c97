// Inlining: every func.call of a private function, at any depth (calls in
// while/if bodies included), is replaced by a copy of the callee's body;
// then private functions that nothing names any more are removed.
//
// What it does not do: inline public functions (they are the module's
// interface and may be called from outside), inline callees with more than
// one block, or inline a call that would recurse: a call to a function
// already being inlined on the current path stays a call, and the cycle is
// noted in ctx.notes. A function stays while any attribute of a kept function
// names it (func.call's callee, composite's decomposition, run_parallel's
// programs), as does ctx.entry, and every public function.
#include <set>
#include <string>
#include <vector>

#include "tpusim/compiler/pass.h"
#include "tpusim/ir/rewrite.h"

namespace tpusim::compiler {
namespace {

class Inliner {
 public:
  Inliner(const ir::Module& module, PassContext& ctx) : module_(module), ctx_(ctx) {}

  // Inlines the calls of `f`'s body.
  Status Run(ir::Function& f) {
    stack_ = {&f};
    replaced_.clear();
    for (int b = 0; b < f.body().num_blocks(); ++b) {
      TPUSIM_RETURN_IF_ERROR(Block(f.body().block(b)));
    }
    f.Renumber();
    inlined_.clear();
    return Status::Ok();
  }

 private:
  // Re-emits the block's ops, with calls expanded in place.
  Status Block(ir::Block& block) {
    for (std::unique_ptr<ir::Operation>& op : block.TakeOps()) {
      TPUSIM_RETURN_IF_ERROR(Emit(block, std::move(op)));
    }
    return Status::Ok();
  }

  // Appends `op` to `block`, or the callee's body if it is an inlinable call.
  // Values of calls already inlined are replaced as ops are emitted: every
  // use follows its definition, so one forward pass sees them all.
  Status Emit(ir::Block& block, std::unique_ptr<ir::Operation> op) {
    for (int i = 0; i < op->num_operands(); ++i) op->SetOperand(i, Resolve(op->operand(i)));
    TPUSIM_ASSIGN_OR_RETURN(const ir::Function* callee, InlinableCallee(*op));
    if (callee == nullptr) {
      for (int r = 0; r < op->num_regions(); ++r) {
        for (int b = 0; b < op->region(r).num_blocks(); ++b) {
          TPUSIM_RETURN_IF_ERROR(Block(op->region(r).block(b)));
        }
      }
      block.Append(std::move(op));
      return Status::Ok();
    }
    TPUSIM_RETURN_IF_ERROR(Expand(block, *op, *callee));
    inlined_.push_back(std::move(op));
    return Status::Ok();
  }

  // Appends copies of the callee's ops (expanded in turn) and maps the
  // call's results to the copies of the returned values.
  Status Expand(ir::Block& block, const ir::Operation& call, const ir::Function& callee) {
    ir::ValueMap map;
    const ir::Block& body = callee.entry();
    for (int i = 0; i < body.num_arguments(); ++i) map[body.argument(i).impl()] = call.operand(i);
    stack_.push_back(&callee);
    const ir::Operation* ret = body.terminator();
    for (const auto& op : body.ops()) {
      if (op.get() == ret) break;
      TPUSIM_RETURN_IF_ERROR(Emit(block, ir::CloneOp(*op, map)));
    }
    stack_.pop_back();
    for (int i = 0; i < call.num_results(); ++i) {
      auto it = map.find(ret->operand(i).impl());
      ir::Value v = it == map.end() ? ret->operand(i) : it->second;
      replaced_[call.result(i).impl()] = Resolve(v);
    }
    return Status::Ok();
  }

  ir::Value Resolve(ir::Value v) const {
    auto it = replaced_.find(v.impl());
    return it == replaced_.end() ? v : it->second;
  }

  // The private callee `op` calls, if it can be inlined; null otherwise.
  StatusOr<const ir::Function*> InlinableCallee(const ir::Operation& op) {
    if (op.name_str() != "func.call") return nullptr;
    ir::Attribute sym = op.attr("callee");
    if (sym.kind() != ir::Attribute::Kind::kSymbolRef) return nullptr;
    const ir::Function* callee = module_.Lookup(sym.str());
    if (callee == nullptr || callee->is_public() || callee->body().num_blocks() != 1) {
      return nullptr;
    }
    // Checked first: the function being rewritten has its ops taken out.
    if (OnStack(callee)) {
      NoteCycle(*callee);
      return nullptr;
    }
    const ir::Operation* ret = callee->entry().terminator();
    if (callee->entry().num_arguments() != op.num_operands() || ret == nullptr ||
        ret->num_operands() != op.num_results()) {
      return InvalidArgument("func.call @" + callee->name() + " at " + op.loc().ToString() +
                             " does not match the callee's signature");
    }
    return callee;
  }

  bool OnStack(const ir::Function* f) const {
    for (const ir::Function* g : stack_) {
      if (g == f) return true;
    }
    return false;
  }

  // "recursive calls left in place: @a -> @b -> @a", once per cycle.
  void NoteCycle(const ir::Function& callee) {
    std::string cycle;
    bool in = false;
    for (const ir::Function* g : stack_) {
      in = in || g == &callee;
      if (in) cycle += "@" + g->name() + " -> ";
    }
    std::string note = "inline: recursive calls left in place: " + cycle + "@" + callee.name();
    if (noted_.insert(note).second) ctx_.notes.push_back(note);
  }

  const ir::Module& module_;
  PassContext& ctx_;
  std::vector<const ir::Function*> stack_;  // the function, then callees being expanded
  ir::ValueMap replaced_;                   // call result -> inlined value
  // The calls inlined, kept until the function is done: replaced_ is keyed
  // by their results' addresses, which new ops must not reuse meanwhile.
  std::vector<std::unique_ptr<ir::Operation>> inlined_;
  std::set<std::string> noted_;
};

// Adds the functions named anywhere in `a` to `out`.
void CollectSymbols(const ir::Attribute& a, std::vector<std::string>& out) {
  using K = ir::Attribute::Kind;
  if (a.kind() == K::kSymbolRef) out.push_back(a.str());
  if (a.kind() == K::kArray) {
    for (const ir::Attribute& e : a.array()) CollectSymbols(e, out);
  }
  if (a.kind() == K::kDict || a.kind() == K::kStruct) {
    for (const auto& [key, value] : a.fields()) CollectSymbols(value, out);
  }
}

// The functions reachable by name from the entry and the public functions.
std::set<std::string> Reachable(const ir::Module& module, const std::string& entry) {
  std::vector<std::string> work;
  for (const auto& f : module.functions()) {
    if (f->is_public() || f->name() == entry) work.push_back(f->name());
  }
  std::set<std::string> seen;
  while (!work.empty()) {
    std::string name = std::move(work.back());
    work.pop_back();
    const ir::Function* f = module.Lookup(name);
    if (f == nullptr || !seen.insert(name).second) continue;
    ir::Walk(f->body(), [&](ir::Operation& op) {
      for (const auto& [key, value] : op.attrs().entries()) CollectSymbols(value, work);
    });
  }
  return seen;
}

}  // namespace

Status RunInlining(ir::Module& module, PassContext& ctx) {
  if (!ctx.entry.empty() && module.Lookup(ctx.entry) == nullptr) {
    return InvalidArgument("no entry function @" + ctx.entry);
  }
  Inliner inliner(module, ctx);
  for (const auto& f : module.functions()) TPUSIM_RETURN_IF_ERROR(inliner.Run(*f));
  std::set<std::string> keep = Reachable(module, ctx.entry);
  std::vector<std::string> dead;
  for (const auto& f : module.functions()) {
    if (!keep.count(f->name())) dead.push_back(f->name());
  }
  for (const std::string& name : dead) module.RemoveFunction(name);
  return Status::Ok();
}

}  // namespace tpusim::compiler
