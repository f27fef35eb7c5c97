#include "tpusim/ir/rewrite.h"

namespace tpusim::ir {

void Walk(const Region& region, const std::function<void(Operation&)>& fn) {
  for (int b = 0; b < region.num_blocks(); ++b) {
    for (const auto& op : region.block(b).ops()) {
      fn(*op);
      for (int r = 0; r < op->num_regions(); ++r) Walk(op->region(r), fn);
    }
  }
}

void ReplaceUses(const Region& region, const ValueMap& map) {
  if (map.empty()) return;
  Walk(region, [&](Operation& op) {
    for (int i = 0; i < op.num_operands(); ++i) {
      auto it = map.find(op.operand(i).impl());
      if (it != map.end()) op.SetOperand(i, it->second);
    }
  });
}

std::vector<int> CountUses(const Function& f) {
  std::vector<int> uses(f.num_values(), 0);
  Walk(f.body(), [&](Operation& op) {
    for (Value v : op.operands()) {
      if (v.id() >= 0 && v.id() < f.num_values()) ++uses[v.id()];
    }
  });
  return uses;
}

namespace {

void CloneRegion(const Region& from, Region& to, ValueMap& map) {
  for (int b = 0; b < from.num_blocks(); ++b) {
    const Block& src = from.block(b);
    Block& dst = to.AddBlock();
    for (int i = 0; i < src.num_arguments(); ++i) {
      Value a = src.argument(i);
      map[a.impl()] = dst.AddArgument(a.type(), a.name());
    }
    for (const auto& op : src.ops()) dst.Append(CloneOp(*op, map));
  }
}

}  // namespace

std::unique_ptr<Operation> CloneOp(const Operation& op, ValueMap& map) {
  auto copy = std::make_unique<Operation>(op.name(), op.loc());
  std::vector<Value> operands;
  operands.reserve(op.num_operands());
  for (Value v : op.operands()) {
    auto it = map.find(v.impl());
    operands.push_back(it == map.end() ? v : it->second);
  }
  copy->SetOperands(std::move(operands));
  copy->attrs() = op.attrs();
  for (int i = 0; i < op.num_results(); ++i) {
    Value r = op.result(i);
    map[r.impl()] = copy->AddResult(r.type(), r.name());
  }
  for (int r = 0; r < op.num_regions(); ++r) CloneRegion(op.region(r), copy->AddRegion(), map);
  return copy;
}

std::unique_ptr<Module> CloneModule(const Module& module) {
  auto copy = std::make_unique<Module>();
  copy->set_name(module.name());
  copy->attrs() = module.attrs();
  for (const auto& f : module.functions()) {
    auto g = std::make_unique<Function>(f->name(), f->type(), f->loc());
    g->set_public(f->is_public());
    g->arg_attrs() = f->arg_attrs();
    g->result_attrs() = f->result_attrs();
    g->attrs() = f->attrs();
    ValueMap map;
    CloneRegion(f->body(), g->body(), map);
    g->Renumber();
    copy->AddFunction(std::move(g));
  }
  return copy;
}

}  // namespace tpusim::ir
