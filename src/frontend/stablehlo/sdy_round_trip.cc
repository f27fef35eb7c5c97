// Shardy's round-trip form, as JAX exports written with Shardy from 2025-03
// to 2025-07 carry it (XLA's SdyRoundTripExportPipeline): the sdy dialect
// stringified into mhlo.frontend_attributes so that it survives HLO.
//   module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh =
//   #sdy.mesh<[\22a\22=2]>}"}} %arg0: tensor<8xf32> {mhlo.frontend_attributes = {xla.sdy.sharding =
//   "#sdy.sharding<@mesh, [{\22a\22}]>"}}
//   @Sharding(%x) {mhlo.frontend_attributes = {xla.sdy.sharding =
//   "#sdy.sharding_per_value<[...]>"}}
//   @xla.sdy.FuncResultSharding(%r) {...same...}     just before func.return
//   @xla.sdy.GlobalToLocalShape(%x), call @xla.sdy.manual_computation_body(...),
//   @xla.sdy.LocalToGlobalShape(%y)                  a shard_map, with
//       xla.sdy.in_shardings / out_shardings / manual_axes on the calls
//   @xla.sdy.ShardingGroup(%x) {xla.sdy.sharding_group_id = "0 : i64"}
// This pass reads it back into the native form the rest of tpusim reads, as
// XLA's SdyRoundTripImportPipeline does: meshes, sdy.sharding attributes,
// sdy.sharding_constraint, result shardings and sdy.manual_computation.
#include <set>

#include "frontend/stablehlo/parser.h"
#include "tpusim/ir/rewrite.h"

namespace tpusim::frontend {
namespace {

constexpr std::string_view kFrontend = "mhlo.frontend_attributes";
// The file name the parser gives positions inside an embedded attribute.
constexpr std::string_view kEmbedded = "<embedded>";

// The string entry `key` of `attrs`' frontend attributes; "" when absent.
std::string FrontendString(const ir::AttributeMap& attrs, std::string_view key) {
  ir::Attribute fa = attrs.Get(kFrontend);
  ir::Attribute v = fa.kind() == ir::Attribute::Kind::kDict ? fa.Get(key) : ir::Attribute();
  return v.kind() == ir::Attribute::Kind::kString ? v.str() : "";
}

// Drops `key` from `attrs`' frontend attributes (and them when empty).
void EraseFrontend(ir::AttributeMap& attrs, std::string_view key) {
  ir::Attribute fa = attrs.Get(kFrontend);
  if (fa.kind() != ir::Attribute::Kind::kDict) return;
  std::vector<ir::NamedAttribute> kept;
  for (const auto& entry : fa.fields()) {
    if (entry.first != key) kept.push_back(entry);
  }
  if (kept.empty()) {
    attrs.Erase(kFrontend);
  } else {
    attrs.Set(std::string(kFrontend), ir::Attribute::Dict(std::move(kept)));
  }
}

bool IsCall(const ir::Operation& op, std::string_view target) {
  if (op.name_str() != "stablehlo.custom_call") return false;
  ir::Attribute t = op.attr("call_target_name");
  return (t.kind() == ir::Attribute::Kind::kString ||
          t.kind() == ir::Attribute::Kind::kSymbolRef) &&
         t.str() == target;
}

class Importer {
 public:
  Status Run(ir::Module& module) {
    TPUSIM_RETURN_IF_ERROR(ImportMeshes(module));
    for (const auto& f : module.functions()) {
      TPUSIM_RETURN_IF_ERROR(ImportSignature(*f));
      TPUSIM_RETURN_IF_ERROR(ImportBlock(module, *f, f->entry()));
    }
    for (const std::string& name : bodies_) {
      if (!Called(module, name)) module.RemoveFunction(name);
    }
    return Status::Ok();
  }

 private:
  // `text`, an attribute in MLIR syntax, parsed; errors name `what` at `loc`.
  StatusOr<ir::Attribute> Parse(const std::string& given, const std::string& what,
                                const ir::Location& loc) {
    // Exports of early 2025 escaped the quotes once more: `\"a\"`.
    std::string text = given;
    for (size_t at = text.find("\\\""); at != std::string::npos; at = text.find("\\\"", at)) {
      text.erase(at, 1);
    }
    Parser p(text, 0, text.size(), std::make_shared<const std::string>(kEmbedded));
    StatusOr<ir::Attribute> a = p.ParseAttribute();
    if (a.ok() && !p.tok().is(TokenKind::kEof)) a = p.Error("unexpected text after the attribute");
    if (!a.ok()) {
      // One line: the parser's message after its position in the string.
      std::string why = a.status().message();
      why = why.substr(0, why.find('\n'));
      const size_t pos = why.find(": ");
      if (why.starts_with(kEmbedded) && pos != std::string::npos) why = why.substr(pos + 2);
      return InvalidArgument(what + " \"" + text + "\" is not valid: " + why)
          .WithLocation(loc.ToString());
    }
    return a;
  }

  // The sharding of value `i` of a `#sdy.sharding_per_value<[...]>`.
  StatusOr<ir::Attribute> PerValue(const std::string& text, size_t i, const ir::Location& loc) {
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute all, Parse(text, "xla.sdy.sharding", loc));
    ir::Attribute list = all.Get("shardings");
    if (all.name() != "sdy.sharding_per_value" || list.kind() != ir::Attribute::Kind::kArray ||
        list.array().size() <= i) {
      return InvalidArgument("xla.sdy.sharding \"" + text + "\" has no sharding for value " +
                             std::to_string(i))
          .WithLocation(loc.ToString());
    }
    return list.array()[i];
  }

  Status ImportMeshes(ir::Module& module) {
    const std::string text = FrontendString(module.attrs(), "xla.sdy.meshes");
    if (text.empty()) return Status::Ok();
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute meshes, Parse(text, "xla.sdy.meshes", ir::Location()));
    if (meshes.kind() != ir::Attribute::Kind::kDict) {
      return InvalidArgument("xla.sdy.meshes \"" + text + "\" is not a dictionary of meshes");
    }
    std::vector<ir::NamedAttribute> all;
    if (ir::Attribute old = module.attrs().Get("sdy.meshes")) all = old.fields();
    for (const auto& entry : meshes.fields()) all.push_back(entry);
    module.attrs().Set("sdy.meshes", ir::Attribute::Dict(std::move(all)));
    EraseFrontend(module.attrs(), "xla.sdy.meshes");
    return Status::Ok();
  }

  // An argument's or result's xla.sdy.sharding as its sdy.sharding.
  Status ImportValueAttrs(ir::AttributeMap& attrs, const ir::Location& loc) {
    const std::string text = FrontendString(attrs, "xla.sdy.sharding");
    if (text.empty()) return Status::Ok();
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute s, Parse(text, "xla.sdy.sharding", loc));
    attrs.Set("sdy.sharding", s);
    attrs.Erase("mhlo.sharding");  // the same sharding, as GSPMD writes it
    EraseFrontend(attrs, "xla.sdy.sharding");
    return Status::Ok();
  }

  Status ImportSignature(ir::Function& f) {
    for (ir::AttributeMap& a : f.arg_attrs()) TPUSIM_RETURN_IF_ERROR(ImportValueAttrs(a, f.loc()));
    for (ir::AttributeMap& a : f.result_attrs()) {
      TPUSIM_RETURN_IF_ERROR(ImportValueAttrs(a, f.loc()));
    }
    return Status::Ok();
  }

  Status ImportBlock(ir::Module& module, ir::Function& f, ir::Block& block) {
    ir::ValueMap replaced;
    std::vector<std::unique_ptr<ir::Operation>> ops = block.TakeOps();
    for (size_t i = 0; i < ops.size(); ++i) {
      std::unique_ptr<ir::Operation>& op = ops[i];
      if (op == nullptr) continue;  // taken into a manual computation
      for (int k = 0; k < op->num_operands(); ++k) {
        auto it = replaced.find(op->operand(k).impl());
        if (it != replaced.end()) op->SetOperand(k, it->second);
      }
      for (int r = 0; r < op->num_regions(); ++r) {
        for (int b = 0; b < op->region(r).num_blocks(); ++b) {
          TPUSIM_RETURN_IF_ERROR(ImportBlock(module, f, op->region(r).block(b)));
        }
      }
      if (IsCall(*op, "xla.sdy.FuncResultSharding")) {
        TPUSIM_RETURN_IF_ERROR(ResultSharding(f, *op, ops));
        replaced[op->result(0).impl()] = op->operand(0);
        removed_.push_back(std::move(op));
        continue;
      }
      if (IsCall(*op, "xla.sdy.ShardingGroup")) {  // shard_alike: no effect on values
        removed_.push_back(std::move(op));
        continue;
      }
      if (IsCall(*op, "xla.sdy.GlobalToLocalShape")) {
        TPUSIM_RETURN_IF_ERROR(ManualComputation(module, ops, i, replaced));
        TPUSIM_RETURN_IF_ERROR(ImportBlock(module, f, op->region(0).front()));
      } else {
        TPUSIM_ASSIGN_OR_RETURN(op, ImportOp(std::move(op), replaced));
      }
      block.Append(std::move(op));
    }
    return Status::Ok();
  }

  // An op's xla.sdy.sharding as its sdy.sharding; a `Sharding` call with one
  // as sdy.sharding_constraint.
  StatusOr<std::unique_ptr<ir::Operation>> ImportOp(std::unique_ptr<ir::Operation> op,
                                                    ir::ValueMap& replaced) {
    const std::string text = FrontendString(op->attrs(), "xla.sdy.sharding");
    if (text.empty()) return op;
    if (IsCall(*op, "Sharding") && op->num_operands() == 1 && op->num_results() == 1) {
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute s, PerValue(text, 0, op->loc()));
      auto c = std::make_unique<ir::Operation>(ir::OpName("sdy.sharding_constraint"), op->loc());
      c->SetOperands({op->operand(0)});
      c->attrs().Set("sharding", s);
      replaced[op->result(0).impl()] = c->AddResult(op->result(0).type(), op->result(0).name());
      removed_.push_back(std::move(op));
      return c;
    }
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute s, Parse(text, "xla.sdy.sharding", op->loc()));
    op->attrs().Set("sdy.sharding", s);
    op->attrs().Erase("mhlo.sharding");
    EraseFrontend(op->attrs(), "xla.sdy.sharding");
    return op;
  }

  // The sharding of FuncResultSharding `op` on the results of `f` it reaches.
  Status ResultSharding(ir::Function& f, const ir::Operation& op,
                        const std::vector<std::unique_ptr<ir::Operation>>& ops) {
    if (op.num_operands() != 1 || op.num_results() != 1) {
      return InvalidArgument("xla.sdy.FuncResultSharding takes one value to one value")
          .WithLocation(op.loc().ToString());
    }
    const ir::Operation* ret = ops.empty() ? nullptr : ops.back().get();
    const std::string text = FrontendString(op.attrs(), "xla.sdy.sharding");
    if (ret == nullptr || ret->name_str() != "func.return" || text.empty()) return Status::Ok();
    for (int i = 0; i < ret->num_operands(); ++i) {
      if (ret->operand(i).impl() != op.result(0).impl()) continue;
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute s, PerValue(text, 0, op.loc()));
      if (f.result_attrs().size() <= static_cast<size_t>(i)) f.result_attrs().resize(i + 1);
      f.result_attrs()[i].Set("sdy.sharding", s);
      f.result_attrs()[i].Erase("mhlo.sharding");
    }
    return Status::Ok();
  }

  // ops[first] is a GlobalToLocalShape; with the manual_computation_body
  // call and the LocalToGlobalShape after it, it becomes one
  // sdy.manual_computation, put in its place; the other two are taken out.
  Status ManualComputation(ir::Module& module, std::vector<std::unique_ptr<ir::Operation>>& ops,
                           size_t first, ir::ValueMap& replaced) {
    const ir::Operation& g2l = *ops[first];
    auto fail = [&](const std::string& why) {
      return Unimplemented("xla.sdy.GlobalToLocalShape " + why).WithLocation(g2l.loc().ToString());
    };
    size_t call_at = first + 1;
    while (call_at < ops.size() &&
           (ops[call_at] == nullptr || ops[call_at]->name_str() != "func.call")) {
      ++call_at;
    }
    if (call_at >= ops.size()) return fail("without its manual_computation_body call");
    const ir::Operation& call = *ops[call_at];
    const ir::Attribute callee = call.attr("callee");
    const std::string body_name =
        callee.kind() == ir::Attribute::Kind::kSymbolRef ? callee.str() : "";
    const ir::Function* body = module.Lookup(body_name);
    if (body == nullptr || body_name.find("xla.sdy.") != 0 || body->body().num_blocks() != 1) {
      return fail("followed by a call of @" + body_name + ", not a manual_computation_body");
    }
    size_t l2g_at = call_at + 1;
    while (l2g_at < ops.size() &&
           (ops[l2g_at] == nullptr || !IsCall(*ops[l2g_at], "xla.sdy.LocalToGlobalShape"))) {
      ++l2g_at;
    }
    if (l2g_at >= ops.size()) return fail("without its xla.sdy.LocalToGlobalShape");
    const ir::Operation& l2g = *ops[l2g_at];
    if (g2l.num_results() != call.num_operands() || call.num_results() != l2g.num_operands()) {
      return fail("does not line up with its call and xla.sdy.LocalToGlobalShape");
    }
    // The shardings sit on the shape calls (2025-04 on) or on the call.
    auto attr = [&](std::string_view key) {
      for (const ir::Operation* o : {&g2l, &call, &l2g}) {
        std::string v = FrontendString(o->attrs(), key);
        if (!v.empty()) return v;
      }
      return std::string();
    };
    auto mc = std::make_unique<ir::Operation>(ir::OpName("sdy.manual_computation"), g2l.loc());
    mc->SetOperands(std::vector<ir::Value>(g2l.operands().begin(), g2l.operands().end()));
    for (const char* key : {"in_shardings", "out_shardings", "manual_axes"}) {
      const std::string name = std::string("xla.sdy.") + key;
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, Parse(attr(name), name, g2l.loc()));
      mc->attrs().Set(key, a);
    }
    ir::Block& region = mc->AddRegion().AddBlock();
    ir::ValueMap map;
    for (ir::Value a : body->entry().arguments()) {
      map[a.impl()] = region.AddArgument(a.type(), a.name());
    }
    for (const auto& op : body->entry().ops()) {
      std::unique_ptr<ir::Operation> copy = ir::CloneOp(*op, map);
      if (copy->name_str() == "func.return") {
        auto ret = std::make_unique<ir::Operation>(ir::OpName("sdy.return"), copy->loc());
        ret->SetOperands(std::vector<ir::Value>(copy->operands().begin(), copy->operands().end()));
        copy = std::move(ret);
      }
      region.Append(std::move(copy));
    }
    for (int r = 0; r < l2g.num_results(); ++r) {
      replaced[l2g.result(r).impl()] = mc->AddResult(l2g.result(r).type(), l2g.result(r).name());
    }
    bodies_.insert(body_name);
    for (size_t k : {first, call_at, l2g_at}) removed_.push_back(std::move(ops[k]));
    ops[first] = std::move(mc);
    return Status::Ok();
  }

  static bool Called(const ir::Module& module, const std::string& name) {
    bool called = false;
    for (const auto& f : module.functions()) {
      ir::Walk(f->body(), [&](ir::Operation& op) {
        ir::Attribute callee = op.attr("callee");
        called =
            called || (callee.kind() == ir::Attribute::Kind::kSymbolRef && callee.str() == name);
      });
    }
    return called;
  }

  std::set<std::string> bodies_;
  // Ops taken out, kept until the module is rebuilt: values may still name them.
  std::vector<std::unique_ptr<ir::Operation>> removed_;
};

}  // namespace

bool UsesSdyRoundTrip(const ir::Module& module) {
  return !FrontendString(module.attrs(), "xla.sdy.meshes").empty();
}

Status ImportSdyRoundTrip(ir::Module& module) { return Importer().Run(module); }

}  // namespace tpusim::frontend
