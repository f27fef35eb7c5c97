// Dead code elimination: removes every op whose results are all unused and
// that has no side effects (ops::HasSideEffects), in every function and
// nested region, until none is left.
//
// What it keeps: terminators, ops with side effects or without results,
// unknown ops, and ops whose regions or called functions have side effects.
// It does not remove unused function parameters, block arguments or
// functions (inline removes private functions without callers).
#include <unordered_set>
#include <vector>

#include "tpusim/compiler/pass.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::compiler {
namespace {

// Removing an op only frees values defined before it (or, for values used in
// its regions, before it in an enclosing block), so one walk from the end of
// each block, lowering use counts as ops go, finds whole dead chains. Ops are
// only marked during the walk and removed after it, so that HasSideEffects
// sees every function whole (a function may call itself).
class DeadCodeEliminator {
 public:
  explicit DeadCodeEliminator(const ir::Module& module) : module_(module) {}

  void Run(ir::Function& f) {
    f.Renumber();
    uses_ = ir::CountUses(f);
    dead_.clear();
    Mark(f.body());
    Sweep(f.body());
    f.Renumber();
  }

 private:
  void Mark(const ir::Region& region) {
    for (int b = region.num_blocks() - 1; b >= 0; --b) {
      const auto& ops = region.block(b).ops();
      for (size_t i = ops.size(); i-- > 0;) {
        const ir::Operation& op = *ops[i];
        if (IsDead(op)) {
          dead_.insert(&op);
          DropUses(op);
        } else {
          for (int r = 0; r < op.num_regions(); ++r) Mark(op.region(r));
        }
      }
    }
  }

  void Sweep(const ir::Region& region) {
    for (int b = 0; b < region.num_blocks(); ++b) {
      ir::Block& block = region.block(b);
      for (std::unique_ptr<ir::Operation>& op : block.TakeOps()) {
        if (dead_.count(op.get())) continue;
        for (int r = 0; r < op->num_regions(); ++r) Sweep(op->region(r));
        block.Append(std::move(op));
      }
    }
  }

  bool IsDead(const ir::Operation& op) const {
    for (ir::Value r : op.results()) {
      if (uses_[r.id()] > 0) return false;
    }
    return !ops::HasSideEffects(op, &module_);
  }

  // Forgets the uses of `op` and of the ops in its regions.
  void DropUses(const ir::Operation& op) {
    for (ir::Value v : op.operands()) --uses_[v.id()];
    for (int r = 0; r < op.num_regions(); ++r) {
      const ir::Region& region = op.region(r);
      for (int b = 0; b < region.num_blocks(); ++b) {
        for (const auto& nested : region.block(b).ops()) DropUses(*nested);
      }
    }
  }

  const ir::Module& module_;
  std::vector<int> uses_;  // by Value::id()
  std::unordered_set<const ir::Operation*> dead_;
};

}  // namespace

Status RunDeadCodeElimination(ir::Module& module, PassContext&) {
  DeadCodeEliminator dce(module);
  for (const auto& f : module.functions()) dce.Run(*f);
  return Status::Ok();
}

}  // namespace tpusim::compiler
