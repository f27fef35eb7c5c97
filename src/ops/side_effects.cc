// HasSideEffects (op_def.h): which ops a compiler pass must keep although
// their results are unused. The per-op facts are OpDef::side_effects; this
// adds what follows from structure: ops without results, and ops whose
// regions or referenced functions contain effectful ops.
#include <vector>

#include "tpusim/ops/op_def.h"

namespace tpusim::ops {
namespace {

class EffectFinder {
 public:
  explicit EffectFinder(const ir::Module* module) : module_(module) {}

  bool Op(const ir::Operation& op) {
    const OpDef* def = OpRegistry::Lookup(op.name());
    if (def == nullptr || def->side_effects || op.num_results() == 0) return true;
    for (int r = 0; r < op.num_regions(); ++r) {
      if (Region(op.region(r))) return true;
    }
    return AnySymbol(op.attrs().entries());
  }

 private:
  // Terminators only hand values to the region's owner.
  bool Region(const ir::Region& region) {
    for (int b = 0; b < region.num_blocks(); ++b) {
      for (const auto& op : region.block(b).ops()) {
        const OpDef* def = OpRegistry::Lookup(op->name());
        if (def != nullptr && def->is_terminator) continue;
        if (Op(*op)) return true;
      }
    }
    return false;
  }

  bool AnySymbol(const std::vector<ir::NamedAttribute>& attrs) {
    for (const auto& [key, value] : attrs) {
      if (Symbol(value)) return true;
    }
    return false;
  }

  // Symbols sit anywhere in an attribute: callee = @f, programs = [[@f]].
  bool Symbol(const ir::Attribute& a) {
    using K = ir::Attribute::Kind;
    switch (a.kind()) {
      case K::kSymbolRef:
        return Function(a.str());
      case K::kArray:
        for (const ir::Attribute& e : a.array()) {
          if (Symbol(e)) return true;
        }
        return false;
      case K::kDict:
      case K::kStruct:
        return AnySymbol(a.fields());
      default:
        return false;
    }
  }

  // A symbol that names no function (a custom_call target) has no body to
  // run. A function already being searched adds nothing new.
  bool Function(const std::string& name) {
    if (module_ == nullptr) return true;
    const ir::Function* f = module_->Lookup(name);
    if (f == nullptr) return false;
    for (const ir::Function* seen : visited_) {
      if (seen == f) return false;
    }
    visited_.push_back(f);
    return Region(f->body());
  }

  const ir::Module* module_;
  std::vector<const ir::Function*> visited_;
};

}  // namespace

bool HasSideEffects(const ir::Operation& op, const ir::Module* module) {
  return EffectFinder(module).Op(op);
}

}  // namespace tpusim::ops
