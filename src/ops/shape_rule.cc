#include "tpusim/ops/shape_rule.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace tpusim::ops {
namespace {

// Indexed by OpName id, as the op table. Registration happens during static
// initialization, lookups afterwards.
struct Table {
  std::mutex mu;
  std::vector<std::unique_ptr<InferFn>> by_id;
};

Table& GetTable() {
  static Table* t = new Table;  // never destroyed: used during exit
  return *t;
}

}  // namespace

bool ShapeRuleRegistry::Register(std::vector<std::string> ops, InferFn infer) {
  Table& t = GetTable();
  std::lock_guard<std::mutex> lock(t.mu);
  for (const std::string& op : ops) {
    ir::OpName name(op);
    if (static_cast<int>(t.by_id.size()) <= name.id()) t.by_id.resize(name.id() + 1);
    if (t.by_id[name.id()]) {
      std::fprintf(stderr, "tpusim: shape rule of %s registered twice\n", op.c_str());
      std::abort();
    }
    t.by_id[name.id()] = std::make_unique<InferFn>(infer);
  }
  return true;
}

const InferFn* ShapeRuleRegistry::Lookup(ir::OpName name) {
  Table& t = GetTable();
  if (name.id() >= static_cast<int>(t.by_id.size())) return nullptr;
  return t.by_id[name.id()].get();
}

}  // namespace tpusim::ops
