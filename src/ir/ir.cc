#include "tpusim/ir/ir.h"

#include <deque>
#include <mutex>
#include <unordered_map>

namespace tpusim::ir {

std::string Location::ToString() const {
  if (!known()) return "<unknown>";
  return (file ? *file : std::string("<input>")) + ":" + std::to_string(line) +
         ":" + std::to_string(col);
}

namespace {

struct NameTable {
  std::mutex mu;
  std::deque<std::string> names{""};  // deque: stable references
  std::unordered_map<std::string, int> ids{{"", 0}};
};

NameTable& Names() {
  static NameTable* table = new NameTable;  // never destroyed: used at exit
  return *table;
}

}  // namespace

OpName::OpName(std::string_view name) {
  NameTable& t = Names();
  std::lock_guard<std::mutex> lock(t.mu);
  auto [it, inserted] = t.ids.emplace(std::string(name), static_cast<int>(t.names.size()));
  if (inserted) t.names.emplace_back(name);
  id_ = it->second;
}

const std::string& OpName::str() const {
  NameTable& t = Names();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.names[id_];
}

int OpName::NumInterned() {
  NameTable& t = Names();
  std::lock_guard<std::mutex> lock(t.mu);
  return static_cast<int>(t.names.size());
}

std::vector<Type> TypesOf(const std::vector<Value>& values) {
  std::vector<Type> out;
  out.reserve(values.size());
  for (Value v : values) out.push_back(v.type());
  return out;
}

std::vector<Value> Operation::results() const {
  std::vector<Value> out;
  out.reserve(results_.size());
  for (const auto& r : results_) out.emplace_back(r.get());
  return out;
}

Value Operation::AddResult(Type type, std::string name) {
  auto impl = std::make_unique<ValueImpl>();
  impl->type = std::move(type);
  impl->owner = this;
  impl->index = static_cast<int>(results_.size());
  impl->name = std::move(name);
  results_.push_back(std::move(impl));
  return Value(results_.back().get());
}

Region& Operation::AddRegion() {
  regions_.push_back(std::make_unique<Region>(this));
  return *regions_.back();
}

std::vector<Value> Block::arguments() const {
  std::vector<Value> out;
  out.reserve(args_.size());
  for (const auto& a : args_) out.emplace_back(a.get());
  return out;
}

Value Block::AddArgument(Type type, std::string name) {
  auto impl = std::make_unique<ValueImpl>();
  impl->type = std::move(type);
  impl->block = this;
  impl->index = static_cast<int>(args_.size());
  impl->name = std::move(name);
  args_.push_back(std::move(impl));
  return Value(args_.back().get());
}

Operation* Block::Append(std::unique_ptr<Operation> op) {
  op->parent_ = this;
  ops_.push_back(std::move(op));
  return ops_.back().get();
}

Operation* Block::InsertBefore(Operation* pos, std::unique_ptr<Operation> op) {
  op->parent_ = this;
  auto it = ops_.begin();
  while (it != ops_.end() && it->get() != pos) ++it;
  return ops_.insert(it, std::move(op))->get();
}

std::vector<std::unique_ptr<Operation>> Block::TakeOps() {
  std::vector<std::unique_ptr<Operation>> out = std::move(ops_);
  ops_.clear();
  for (auto& op : out) op->parent_ = nullptr;
  return out;
}

Block& Region::AddBlock() {
  blocks_.push_back(std::make_unique<Block>(this));
  return *blocks_.back();
}

Function::Function(std::string name, FunctionType type, Location loc)
    : name_(std::move(name)),
      type_(std::move(type)),
      loc_(std::move(loc)),
      body_(std::make_unique<Region>(nullptr)),
      arg_attrs_(type_.inputs.size()),
      result_attrs_(type_.results.size()) {}

namespace {

void NumberRegion(Region& region, int& next) {
  for (int b = 0; b < region.num_blocks(); ++b) {
    Block& block = region.block(b);
    for (int i = 0; i < block.num_arguments(); ++i) block.argument(i).impl()->id = next++;
    for (const auto& op : block.ops()) {
      for (int i = 0; i < op->num_results(); ++i) op->result(i).impl()->id = next++;
      for (int r = 0; r < op->num_regions(); ++r) NumberRegion(op->region(r), next);
    }
  }
}

}  // namespace

void Function::Renumber() {
  int next = 0;
  NumberRegion(*body_, next);
  num_values_ = next;
}

Function* Module::AddFunction(std::unique_ptr<Function> f) {
  Function* raw = f.get();
  by_name_.emplace(raw->name(), raw);
  functions_.push_back(std::move(f));
  return raw;
}

std::unique_ptr<Function> Module::RemoveFunction(std::string_view name) {
  for (auto it = functions_.begin(); it != functions_.end(); ++it) {
    if ((*it)->name() != name) continue;
    by_name_.erase(by_name_.find(name));
    std::unique_ptr<Function> out = std::move(*it);
    functions_.erase(it);
    return out;
  }
  return nullptr;
}

Function* Module::Lookup(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace tpusim::ir
