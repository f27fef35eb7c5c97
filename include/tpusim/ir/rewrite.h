// Helpers for passes that rewrite the IR: walking nested ops, counting and
// replacing uses, and cloning ops with their regions. The IR keeps no use
// lists, so these walk the function; a pass that replaces many values
// collects a ValueMap and calls ReplaceUses once.
#ifndef TPUSIM_IR_REWRITE_H_
#define TPUSIM_IR_REWRITE_H_

#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "tpusim/ir/ir.h"

namespace tpusim::ir {

// Old value -> new value.
using ValueMap = std::unordered_map<const ValueImpl*, Value>;

// Calls `fn` on every op of `region`, nested regions included, parents
// before their regions' ops. `fn` must not add or remove ops.
void Walk(const Region& region, const std::function<void(Operation&)>& fn);

// Replaces every operand found in `map`, in `region` and its nested regions.
void ReplaceUses(const Region& region, const ValueMap& map);

// Uses of each value of `f` (operands of ops at any depth), indexed by
// Value::id(). REQUIRES: f.Renumber() since the last change.
std::vector<int> CountUses(const Function& f);

// A copy of `op` and its regions. Operands found in `map` are replaced by
// their mapping, others kept; each result and region argument of the copy is
// added to `map` as the image of the original, so ops cloned in order see
// the copies of earlier ones. The copy has no parent.
std::unique_ptr<Operation> CloneOp(const Operation& op, ValueMap& map);

// A deep copy of `module`: functions, attributes and bodies, every value
// renumbered.
std::unique_ptr<Module> CloneModule(const Module& module);

}  // namespace tpusim::ir

#endif  // TPUSIM_IR_REWRITE_H_
