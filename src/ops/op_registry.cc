#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "tpusim/ops/op_def.h"

namespace tpusim::ops {
namespace {

// Indexed by OpName id. Registration happens during static initialization
// and lookups afterwards, so reads need no lock once main() runs; the mutex
// guards registration order across translation units.
struct Table {
  std::mutex mu;
  std::vector<std::unique_ptr<OpDef>> by_id;
};

Table& GetTable() {
  static Table* t = new Table;  // never destroyed: used during exit
  return *t;
}

}  // namespace

bool OpRegistry::Register(OpDef def) {
  ir::OpName name(def.name);
  Table& t = GetTable();
  std::lock_guard<std::mutex> lock(t.mu);
  if (static_cast<int>(t.by_id.size()) <= name.id()) t.by_id.resize(name.id() + 1);
  if (t.by_id[name.id()]) {
    std::fprintf(stderr, "tpusim: op %s registered twice\n", def.name.c_str());
    std::abort();
  }
  t.by_id[name.id()] = std::make_unique<OpDef>(std::move(def));
  return true;
}

const OpDef* OpRegistry::Lookup(ir::OpName name) {
  Table& t = GetTable();
  if (name.id() >= static_cast<int>(t.by_id.size())) return nullptr;
  return t.by_id[name.id()].get();
}

const OpDef* OpRegistry::Lookup(std::string_view name) {
  return Lookup(ir::OpName(name));
}

std::vector<std::string> OpRegistry::Names() {
  std::vector<std::string> out;
  for (const auto& d : GetTable().by_id) {
    if (d) out.push_back(d->name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tpusim::ops
