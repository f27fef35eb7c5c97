// The tpusim IR: modules of functions whose bodies are regions of blocks of
// operations in SSA form. Every front end builds it and every later stage
// (verifier, passes, executor, timing) reads it.
//
// Ownership is strictly hierarchical: a Module owns its Functions, a Function
// its body Region, a Region its Blocks, a Block its arguments and Operations,
// an Operation its results and nested Regions. Values are non-owning handles.
// Operations are generic (a name, operands, results, attributes, regions), so
// the IR knows nothing of particular ops: their rules live in src/ops/.
//
// Thread safety: a fully built Module may be read from many threads at once;
// building and mutating are single-threaded.
#ifndef TPUSIM_IR_IR_H_
#define TPUSIM_IR_IR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/ir/attribute.h"
#include "tpusim/ir/type.h"

namespace tpusim::ir {

class Block;
class Function;
class Operation;
class Region;

// A source position; file is shared by every location of one parsed buffer.
struct Location {
  std::shared_ptr<const std::string> file;
  int line = 0;  // 1-based; 0 = unknown
  int col = 0;   // 1-based
  bool known() const { return line > 0; }
  std::string ToString() const;  // "file:line:col" or "<unknown>"
};

// An interned op name ("stablehlo.add"). Cheap to copy and compare; the id
// indexes per-op tables such as the op registry.
class OpName {
 public:
  OpName() = default;
  explicit OpName(std::string_view name);  // interns; thread-safe
  int id() const { return id_; }
  const std::string& str() const;
  friend bool operator==(OpName a, OpName b) { return a.id_ == b.id_; }
  friend bool operator!=(OpName a, OpName b) { return a.id_ != b.id_; }
  static int NumInterned();

 private:
  int id_ = 0;  // 0 is the empty name
};

// The data behind an SSA value; owned by its defining Operation or Block.
struct ValueImpl {
  Type type;
  Operation* owner = nullptr;  // defining op; null for a block argument
  Block* block = nullptr;      // owning block, for block arguments
  int index = 0;               // result or argument number
  int id = -1;                 // dense number within the enclosing Function
  std::string name;            // source name without '%', may be empty
};

// A non-owning handle to an SSA value.
class Value {
 public:
  Value() = default;
  explicit Value(ValueImpl* impl) : impl_(impl) {}
  explicit operator bool() const { return impl_ != nullptr; }
  const Type& type() const { return impl_->type; }
  Operation* defining_op() const { return impl_->owner; }
  bool is_block_argument() const { return impl_->owner == nullptr; }
  int index() const { return impl_->index; }
  int id() const { return impl_->id; }
  const std::string& name() const { return impl_->name; }
  ValueImpl* impl() const { return impl_; }
  // Changes the value's type in place (layout assignment). Every user sees it.
  void set_type(Type t) const { impl_->type = std::move(t); }
  friend bool operator==(Value a, Value b) { return a.impl_ == b.impl_; }
  friend bool operator!=(Value a, Value b) { return a.impl_ != b.impl_; }

 private:
  ValueImpl* impl_ = nullptr;
};

// The types of `values`, in order.
std::vector<Type> TypesOf(const std::vector<Value>& values);

class Operation {
 public:
  Operation(OpName name, Location loc) : name_(name), loc_(std::move(loc)) {}
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  OpName name() const { return name_; }
  const std::string& name_str() const { return name_.str(); }
  const Location& loc() const { return loc_; }
  void set_loc(Location loc) { loc_ = std::move(loc); }
  Block* parent() const { return parent_; }

  const std::vector<Value>& operands() const { return operands_; }
  Value operand(int i) const { return operands_[i]; }
  int num_operands() const { return static_cast<int>(operands_.size()); }
  void SetOperands(std::vector<Value> operands) { operands_ = std::move(operands); }
  void SetOperand(int i, Value v) { operands_[i] = v; }

  int num_results() const { return static_cast<int>(results_.size()); }
  Value result(int i) const { return Value(results_[i].get()); }
  std::vector<Value> results() const;
  // Appends a result of `type`; its id is assigned by Function::Renumber.
  Value AddResult(Type type, std::string name = "");

  AttributeMap& attrs() { return attrs_; }
  const AttributeMap& attrs() const { return attrs_; }
  Attribute attr(std::string_view key) const { return attrs_.Get(key); }

  int num_regions() const { return static_cast<int>(regions_.size()); }
  Region& region(int i) const { return *regions_[i]; }
  Region& AddRegion();

 private:
  friend class Block;
  OpName name_;
  Location loc_;
  Block* parent_ = nullptr;
  std::vector<Value> operands_;
  std::vector<std::unique_ptr<ValueImpl>> results_;
  AttributeMap attrs_;
  std::vector<std::unique_ptr<Region>> regions_;
};

class Block {
 public:
  explicit Block(Region* parent) : parent_(parent) {}
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Region* parent() const { return parent_; }
  int num_arguments() const { return static_cast<int>(args_.size()); }
  Value argument(int i) const { return Value(args_[i].get()); }
  std::vector<Value> arguments() const;
  Value AddArgument(Type type, std::string name = "");

  const std::vector<std::unique_ptr<Operation>>& ops() const { return ops_; }
  // Takes ownership; returns the appended op.
  Operation* Append(std::unique_ptr<Operation> op);
  // The last op (the terminator in a well-formed block); null if empty.
  Operation* terminator() const { return ops_.empty() ? nullptr : ops_.back().get(); }

  // Mutation, for compiler passes. Positions are ops of this block. Each is
  // linear in the block's length, so a pass that rewrites many ops takes
  // them all with TakeOps and appends the new sequence instead.
  //
  // Inserts `op` before `pos` (at the end if null); returns it.
  Operation* InsertBefore(Operation* pos, std::unique_ptr<Operation> op);
  // Detaches every op, in order, leaving the block empty.
  std::vector<std::unique_ptr<Operation>> TakeOps();

 private:
  Region* parent_;
  std::vector<std::unique_ptr<ValueImpl>> args_;
  std::vector<std::unique_ptr<Operation>> ops_;
};

class Region {
 public:
  explicit Region(Operation* parent) : parent_(parent) {}
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  Operation* parent_op() const { return parent_; }
  bool empty() const { return blocks_.empty(); }
  int num_blocks() const { return static_cast<int>(blocks_.size()); }
  Block& block(int i) const { return *blocks_[i]; }
  Block& front() const { return *blocks_.front(); }
  Block& AddBlock();

 private:
  Operation* parent_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

class Function {
 public:
  Function(std::string name, FunctionType type, Location loc);
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  const std::string& name() const { return name_; }
  const FunctionType& type() const { return type_; }
  // REQUIRES: matches the entry block's arguments and the returned values.
  void set_type(FunctionType t) { type_ = std::move(t); }
  const Location& loc() const { return loc_; }
  bool is_public() const { return public_; }
  void set_public(bool p) { public_ = p; }

  // The body: one region whose entry block's arguments are the parameters.
  Region& body() const { return *body_; }
  Block& entry() const { return body_->front(); }

  // Per-argument and per-result attribute dictionaries (jax.result_info,
  // mhlo.sharding, ...); same length as the signature.
  std::vector<AttributeMap>& arg_attrs() { return arg_attrs_; }
  const std::vector<AttributeMap>& arg_attrs() const { return arg_attrs_; }
  std::vector<AttributeMap>& result_attrs() { return result_attrs_; }
  const std::vector<AttributeMap>& result_attrs() const { return result_attrs_; }
  AttributeMap& attrs() { return attrs_; }
  const AttributeMap& attrs() const { return attrs_; }

  // Gives every value in the body, nested regions included, a dense id in
  // [0, num_values()). Call after building or changing the body.
  void Renumber();
  int num_values() const { return num_values_; }

 private:
  std::string name_;
  FunctionType type_;
  Location loc_;
  bool public_ = true;
  std::unique_ptr<Region> body_;
  std::vector<AttributeMap> arg_attrs_;
  std::vector<AttributeMap> result_attrs_;
  AttributeMap attrs_;
  int num_values_ = 0;
};

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }  // without '@'; may be empty
  void set_name(std::string n) { name_ = std::move(n); }
  AttributeMap& attrs() { return attrs_; }
  const AttributeMap& attrs() const { return attrs_; }

  const std::vector<std::unique_ptr<Function>>& functions() const { return functions_; }
  // Takes ownership. REQUIRES: no function of the same name yet.
  Function* AddFunction(std::unique_ptr<Function> f);
  Function* Lookup(std::string_view name) const;  // null if absent
  // Detaches the function named `name` (null if absent).
  std::unique_ptr<Function> RemoveFunction(std::string_view name);

 private:
  std::string name_;
  AttributeMap attrs_;
  std::vector<std::unique_ptr<Function>> functions_;
  std::map<std::string, Function*, std::less<>> by_name_;
};

}  // namespace tpusim::ir

#endif  // TPUSIM_IR_IR_H_
