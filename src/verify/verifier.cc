#include "tpusim/verify/verifier.h"

#include "tpusim/ir/dynamic.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::verify {
namespace {

class Verifier {
 public:
  explicit Verifier(const ir::Module& module) : module_(module) {}

  Status Run() {
    for (const auto& f : module_.functions()) {
      TPUSIM_RETURN_IF_ERROR(VerifyFunction(*f));
    }
    return Status::Ok();
  }

 private:
  Status VerifyFunction(const ir::Function& f) {
    const ir::Block& entry = f.entry();
    if (ir::TypesOf(entry.arguments()) != f.type().inputs) {
      return InvalidArgument("@" + f.name() + ": block arguments do not match the signature")
          .WithLocation(f.loc().ToString());
    }
    const ir::Operation* ret = entry.terminator();
    if (ret == nullptr || ret->name_str() != "func.return") {
      return InvalidArgument("@" + f.name() + " does not end in func.return")
          .WithLocation(f.loc().ToString());
    }
    if (ir::TypesOf(ret->operands()) != f.type().results) {
      return InvalidArgument("@" + f.name() + " returns " + ir::TypeListString(ir::TypesOf(ret->operands())) +
                             " but is declared to return " + ir::TypeListString(f.type().results))
          .WithLocation(ret->loc().ToString());
    }
    return VerifyRegion(f.body());
  }

  Status VerifyRegion(const ir::Region& region) {
    for (int b = 0; b < region.num_blocks(); ++b) {
      for (const auto& op : region.block(b).ops()) {
        TPUSIM_RETURN_IF_ERROR(VerifyOp(*op));
      }
    }
    return Status::Ok();
  }

  Status VerifyOp(const ir::Operation& op) {
    const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
    if (def == nullptr) {
      return Unimplemented("unknown op '" + op.name_str() + "'")
          .WithLocation(op.loc().ToString());
    }
    if (op.name_str() == "func.call") TPUSIM_RETURN_IF_ERROR(VerifyCall(op));
    // An op of dynamic types (a shape-polymorphic program not yet refined)
    // has its shape rule checked once refine-shapes has sized them.
    if (def->verify && !ir::HasDynamicTypes(op)) {
      Status st = def->verify(op);
      if (!st.ok()) return st.WithLocation(op.loc().ToString());
    }
    for (int r = 0; r < op.num_regions(); ++r) {
      TPUSIM_RETURN_IF_ERROR(VerifyRegion(op.region(r)));
    }
    return Status::Ok();
  }

  Status VerifyCall(const ir::Operation& op) {
    ir::Attribute callee = op.attr("callee");
    if (callee.kind() != ir::Attribute::Kind::kSymbolRef) return Status::Ok();
    const ir::Function* f = module_.Lookup(callee.str());
    if (f == nullptr) {
      return NotFound("call to unknown function @" + callee.str())
          .WithLocation(op.loc().ToString());
    }
    if (ir::TypesOf(op.operands()) != f->type().inputs ||
        ir::TypesOf(op.results()) != f->type().results) {
      return InvalidArgument("call to @" + callee.str() + " with types " +
                             ir::TypeListString(ir::TypesOf(op.operands())) + " -> " +
                             ir::TypeListString(ir::TypesOf(op.results())) + " does not match " +
                             f->type().ToString())
          .WithLocation(op.loc().ToString());
    }
    return Status::Ok();
  }

  const ir::Module& module_;
};

}  // namespace

Status VerifyModule(const ir::Module& module) { return Verifier(module).Run(); }

}  // namespace tpusim::verify
