#include "compiler/host_placement.h"

#include <numeric>
#include <string>

#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::compiler {
namespace {

bool IsHostMemory(const std::string& space) {
  return space == "pinned_host" || space == "unpinned_host";
}

// Reads its operand 0 where it lies: the result is stored wherever that is.
bool IsView(const ir::Operation& op) {
  const std::string& n = op.name_str();
  if (n == "stablehlo.reshape" || n == "stablehlo.bitcast_convert" || n == "stablehlo.slice" ||
      n == "stablehlo.dynamic_slice") {
    return true;
  }
  if (n != "tpusim.fusion" || op.num_regions() != 1 || op.num_operands() == 0) return false;
  bool views = true;
  for (const auto& inner : op.region(0).front().ops()) {
    views &= inner->num_results() == 0 || IsView(*inner);  // the terminator has none
  }
  return views;
}

// Values that share one storage, as a union-find over value ids, with a
// flag per class.
class Classes {
 public:
  explicit Classes(int n) : parent_(n), host_(n, false) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int Find(int v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }
  // Both return whether anything changed.
  bool Join(ir::Value a, ir::Value b) {
    const int ra = Find(a.id()), rb = Find(b.id());
    if (ra == rb) return false;
    parent_[rb] = ra;
    host_[ra] = host_[ra] || host_[rb];
    return true;
  }
  bool MarkHost(ir::Value v) {
    const int r = Find(v.id());
    if (host_[r]) return false;
    return host_[r] = true;
  }
  bool host(ir::Value v) { return host_[Find(v.id())]; }
  bool host(int id) { return host_[Find(id)]; }

 private:
  std::vector<int> parent_;
  std::vector<bool> host_;
};

bool Valid(ir::Value v, int n) { return v && v.id() >= 0 && v.id() < n; }

// One pass of the rules over `op`; returns whether anything changed.
bool Apply(const ir::Operation& op, Classes& c, int n) {
  bool changed = false;
  const std::string& name = op.name_str();
  if (name == "stablehlo.custom_call" && op.num_operands() == 1 && op.num_results() == 1) {
    const std::string space = ops::MemoryPlacement(op);
    if (IsHostMemory(space)) changed |= c.MarkHost(op.result(0));
    if (space == "device" && Valid(op.operand(0), n)) changed |= c.MarkHost(op.operand(0));
    return changed;
  }
  if (name == "stablehlo.dynamic_update_slice" && op.num_operands() >= 2) {
    changed |= c.Join(op.result(0), op.operand(0));
    if (c.host(op.operand(1))) changed |= c.MarkHost(op.result(0));
    return changed;
  }
  if (IsView(op) && c.host(op.operand(0))) return c.MarkHost(op.result(0));
  if (name == "stablehlo.while" && op.num_regions() == 2 && op.region(0).num_blocks() == 1 &&
      op.region(1).num_blocks() == 1) {
    for (int r = 0; r < 2; ++r) {
      const ir::Block& block = op.region(r).front();
      for (int i = 0; i < block.num_arguments() && i < op.num_operands(); ++i) {
        changed |= c.Join(op.operand(i), block.argument(i));
      }
    }
    const ir::Operation* ret = op.region(1).front().terminator();
    for (int i = 0; i < op.num_results() && i < op.num_operands(); ++i) {
      changed |= c.Join(op.operand(i), op.result(i));
      if (ret != nullptr && i < ret->num_operands()) {
        changed |= c.Join(op.result(i), ret->operand(i));
      }
    }
  }
  return changed;
}

}  // namespace

std::vector<bool> HostPlacedValues(const ir::Function& f) {
  const int n = f.num_values();
  Classes c(n);
  const ir::Block& entry = f.entry();
  for (int i = 0; i < entry.num_arguments() && i < static_cast<int>(f.arg_attrs().size()); ++i) {
    const ir::Attribute kind = f.arg_attrs()[i].Get("mhlo.memory_kind");
    if (kind.kind() == ir::Attribute::Kind::kString && IsHostMemory(kind.str())) {
      c.MarkHost(entry.argument(i));
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    ir::Walk(f.body(), [&](const ir::Operation& op) { changed |= Apply(op, c, n); });
  }
  std::vector<bool> host(n);
  for (int v = 0; v < n; ++v) host[v] = c.host(v);
  return host;
}

}  // namespace tpusim::compiler
