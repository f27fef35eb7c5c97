// Shape refinement: a shape-polymorphic program (jax.export with symbolic
// dimensions) has `?` dimensions that its entry function's inputs decide.
// This pass does what StableHLO's refine-arguments and refine-shapes passes
// do before such a program runs: the entry's parameters take the argument
// types given, then every op, in program order, gets static result types
// from its operands' (the op's OpDef::infer, tpusim/ops/op_def.h, in the
// op's definition). Shape computations are evaluated
// as they are met: the values of get_dimension_size (which becomes a
// constant) and of the small integer ops on it are known, which sizes the
// dynamic_* ops' results; those whose static form exists become it
// (dynamic_broadcast_in_dim -> broadcast_in_dim, ...).
//
// The parts that are not one op's rule live here: regions (while's carried
// values, if/case results from their branches), func.call (each callee
// specialized for its call's argument types and for the values of the
// arguments marked jax.global_constant, jax's dimension variables; refined in
// place when it has one caller), and @shape_assertion custom calls, checked
// with the known values, failing with their error_message filled in as jax
// does, then dropped.
#include "tpusim/compiler/refine_shapes.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tpusim/ir/dynamic.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/ops/custom_call.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::compiler {
namespace {

// Shape computations are small: a value with more elements is not tracked.
constexpr int64_t kMaxKnownElements = 1024;

bool IsShapeAssertion(const ir::Operation& op) {
  return op.name_str() == "stablehlo.custom_call" && ops::CallTarget(op) == "shape_assertion";
}

// Whether `declared` (possibly dynamic) admits `inferred`: same kind, element
// type and rank, and equal static dimensions.
bool Admits(const ir::Type& declared, const ir::Type& inferred) {
  if (declared.kind() != inferred.kind()) return false;
  if (declared.is_tuple()) {
    const auto& a = declared.tuple_elements();
    const auto& b = inferred.tuple_elements();
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Admits(a[i], b[i])) return false;
    }
    return true;
  }
  if (!declared.is_tensor()) return true;
  if (declared.element() != inferred.element() || declared.rank() != inferred.rank()) return false;
  for (int64_t d = 0; d < declared.rank(); ++d) {
    if (declared.dim(d) != ir::kDynamicDim && declared.dim(d) != inferred.dim(d)) return false;
  }
  return true;
}

// Runs single ops on known values: no regions, calls or other processes.
class KnownValueContext : public ops::EvalContext {
 public:
  explicit KnownValueContext(const ir::Module& module) : module_(module) {}
  const ops::EvalOptions& options() const override { return options_; }
  const ir::Module& module() const override { return module_; }
  StatusOr<std::vector<Tensor>> RunRegion(const ir::Region&, std::span<const Tensor>) override {
    return Unimplemented("regions are not evaluated while refining shapes");
  }
  StatusOr<std::vector<Tensor>> Call(std::string_view, std::span<const Tensor>) override {
    return Unimplemented("calls are not evaluated while refining shapes");
  }
  int64_t replica_id() const override { return 0; }
  int64_t partition_id() const override { return 0; }
  int64_t num_replicas() const override { return 1; }
  int64_t num_partitions() const override { return 1; }
  ops::Collectives* collectives() override { return nullptr; }

 private:
  const ir::Module& module_;
  ops::EvalOptions options_;
};

// Whether `op`'s results may be computed now, its operands being known:
// small integer or boolean tensors from an op without regions or effects.
bool Computable(const ir::Operation& op, const ir::Module& module) {
  const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
  if (def == nullptr || !def->eval || op.num_regions() > 0 || op.num_results() == 0 ||
      ops::HasSideEffects(op, &module)) {
    return false;
  }
  for (ir::Value r : op.results()) {
    const ir::Type& t = r.type();
    if (!t.is_tensor() || !ir::IsStatic(t) || t.num_elements() > kMaxKnownElements ||
        !(ir::IsInteger(t.element()) || ir::IsBool(t.element()))) {
      return false;
    }
  }
  return true;
}

ir::Attribute Ints(const std::vector<int64_t>& v) {
  return ir::Attribute::DenseArray(ir::ElementType::kSI64, v);
}

class Refiner {
 public:
  explicit Refiner(ir::Module& module)
      : module_(module), pristine_(ir::CloneModule(module)), eval_ctx_(module) {
    CountCallers();
  }

  // Sets the entry's parameter types, then refines it and what it calls.
  Status RefineEntry(ir::Function& f, const std::vector<ir::Type>& arg_types) {
    if (!arg_types.empty()) TPUSIM_RETURN_IF_ERROR(SetArguments(f, arg_types));
    for (ir::Value a : f.entry().arguments()) {
      if (!ir::IsStatic(a.type())) {
        return InvalidArgument("@" + f.name() + "'s parameter %" +
                               (a.name().empty() ? "arg" + std::to_string(a.index()) : a.name()) +
                               " has the dynamic type " + a.type().ToString() +
                               "; give the argument shapes to refine it");
      }
    }
    return RefineFunction(f);
  }

  // Removes the functions left dynamic that no refined function calls (the
  // generic forms of specialized callees) and renumbers the rest.
  void RemoveUnreached(const std::string& entry) {
    std::set<std::string> reached = {entry};
    std::vector<std::string> work = {entry};
    while (!work.empty()) {
      const ir::Function* f = module_.Lookup(work.back());
      work.pop_back();
      if (f == nullptr) continue;
      ir::Walk(f->body(), [&](ir::Operation& op) {
        for (const auto& [key, value] : op.attrs().entries()) {
          if (value.kind() == ir::Attribute::Kind::kSymbolRef &&
              reached.insert(value.str()).second) {
            work.push_back(value.str());
          }
        }
      });
    }
    std::vector<std::string> gone;
    for (const auto& f : module_.functions()) {
      if (!reached.count(f->name()) && !AllStatic(*f)) gone.push_back(f->name());
    }
    for (const std::string& name : gone) module_.RemoveFunction(name);
    for (const auto& f : module_.functions()) f->Renumber();
  }

 private:
  static bool AllStatic(const ir::Function& f) {
    bool all = true;
    for (ir::Value a : f.entry().arguments()) all = all && ir::IsStatic(a.type());
    ir::Walk(f.body(), [&](ir::Operation& op) { all = all && !ir::HasDynamicTypes(op); });
    return all;
  }

  void CountCallers() {
    for (const auto& f : module_.functions()) {
      ir::Walk(f->body(), [&](ir::Operation& op) {
        ir::Attribute callee = op.attr("callee");
        if (callee.kind() == ir::Attribute::Kind::kSymbolRef) ++callers_[callee.str()];
      });
    }
  }

  Status SetArguments(ir::Function& f, const std::vector<ir::Type>& types) {
    if (types.size() != static_cast<size_t>(f.entry().num_arguments())) {
      return InvalidArgument("@" + f.name() + " takes " +
                             std::to_string(f.entry().num_arguments()) + " arguments, " +
                             std::to_string(types.size()) + " shapes given");
    }
    for (int i = 0; i < f.entry().num_arguments(); ++i) {
      ir::Value a = f.entry().argument(i);
      if (!ir::IsStatic(types[i]) || !Admits(a.type(), types[i])) {
        return InvalidArgument("@" + f.name() + "'s parameter %" +
                               (a.name().empty() ? "arg" + std::to_string(i) : a.name()) +
                               " has type " + a.type().ToString() + ", which " +
                               types[i].ToString() + " does not fit");
      }
      SetType(a, types[i]);
    }
    return Status::Ok();
  }

  void SetType(ir::Value v, const ir::Type& t) {
    if (v.type() == t && ir::IsStatic(v.type())) return;
    v.set_type(t);
    changed_.insert(v.impl());
  }

  Status RefineFunction(ir::Function& f) {
    if (!refining_.insert(f.name()).second) {
      return Unimplemented("@" + f.name() + " calls itself; recursive functions cannot be refined")
          .WithLocation(f.loc().ToString());
    }
    if (f.body().num_blocks() != 1) {
      return Unimplemented("@" + f.name() + " has several blocks; refine-shapes takes one")
          .WithLocation(f.loc().ToString());
    }
    TPUSIM_RETURN_IF_ERROR(RefineBlock(f.entry()));
    const ir::Operation* ret = f.entry().terminator();
    f.set_type({ir::TypesOf(f.entry().arguments()),
                ret ? ir::TypesOf(ret->operands()) : std::vector<ir::Type>{}});
    refining_.erase(f.name());
    return Status::Ok();
  }

  // Re-emits the block's ops refined: shape assertions checked and dropped,
  // dynamic_* ops in their static forms where known.
  Status RefineBlock(ir::Block& block) {
    for (std::unique_ptr<ir::Operation>& op : block.TakeOps()) {
      for (int i = 0; i < op->num_operands(); ++i) {
        auto it = replaced_.find(op->operand(i).impl());
        if (it != replaced_.end()) op->SetOperand(i, it->second);
      }
      Status st = RefineOp(*op);
      if (!st.ok()) return st.WithLocation(op->loc().ToString());
      if (IsShapeAssertion(*op)) {
        TPUSIM_RETURN_IF_ERROR(CheckAssertion(*op));
        removed_.push_back(std::move(op));
        continue;
      }
      StatusOr<std::unique_ptr<ir::Operation>> static_form = StaticForm(*op);
      if (!static_form.ok()) return static_form.status().WithLocation(op->loc().ToString());
      if (std::unique_ptr<ir::Operation> stat = std::move(*static_form)) {
        for (int i = 0; i < op->num_results(); ++i)
          replaced_[op->result(i).impl()] = stat->result(i);
        removed_.push_back(std::move(op));
        op = std::move(stat);
      }
      Compute(*op);
      if (std::unique_ptr<ir::Operation> size = SizeConstant(*op)) {
        replaced_[op->result(0).impl()] = size->result(0);
        known_[size->result(0).impl()] = known_[op->result(0).impl()];
        removed_.push_back(std::move(op));
        op = std::move(size);
      }
      block.Append(std::move(op));
    }
    return Status::Ok();
  }

  // A get_dimension_size of a sized operand as the constant it now is, as
  // StableHLO's refinement folds it (XLA HLO text has no such op).
  std::unique_ptr<ir::Operation> SizeConstant(const ir::Operation& op) {
    if (op.name_str() != "stablehlo.get_dimension_size") return nullptr;
    auto it = known_.find(op.result(0).impl());
    if (it == known_.end()) return nullptr;
    const Tensor& t = it->second;
    auto constant = std::make_unique<ir::Operation>(ir::OpName("stablehlo.constant"), op.loc());
    constant->attrs().Set("value",
                          ir::Attribute::DenseElements(
                              t.type(), std::vector<uint8_t>(t.raw(), t.raw() + t.size_bytes())));
    constant->AddResult(op.result(0).type(), op.result(0).name());
    return constant;
  }

  Status RefineOp(ir::Operation& op) {
    for (ir::Value v : op.operands()) {
      if (!ir::IsStatic(v.type())) {
        return InvalidArgument("'" + op.name_str() + "' has an operand of unrefined type " +
                               v.type().ToString());
      }
    }
    const std::string& name = op.name_str();
    if (name == "func.call") return RefineCall(op);
    if (name == "stablehlo.while") return RefineWhile(op);
    if (name == "stablehlo.if" || name == "stablehlo.case") return RefineBranches(op);
    for (int r = 0; r < op.num_regions(); ++r) {
      for (int b = 0; b < op.region(r).num_blocks(); ++b) {
        TPUSIM_RETURN_IF_ERROR(RefineBlock(op.region(r).block(b)));
      }
    }
    return InferResults(op);
  }

  // Gives `op`'s results the types its shape rule infers, when its operands
  // changed or its results are dynamic.
  Status InferResults(ir::Operation& op) {
    bool needed = false;
    for (ir::Value v : op.operands()) needed = needed || changed_.count(v.impl()) > 0;
    for (ir::Value v : op.results()) needed = needed || !ir::IsStatic(v.type());
    if (!needed) return Status::Ok();
    const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
    const ops::InferFn* infer = def != nullptr && def->infer ? &def->infer : nullptr;
    if (infer == nullptr) {
      for (ir::Value v : op.results()) {
        if (!ir::IsStatic(v.type())) {
          return Unimplemented("cannot refine the result type " + v.type().ToString() + " of '" +
                               op.name_str() + "': tpusim has no shape rule for it");
        }
      }
      return Status::Ok();
    }
    std::vector<const Tensor*> values;
    for (ir::Value v : op.operands()) {
      auto it = known_.find(v.impl());
      values.push_back(it == known_.end() ? nullptr : &it->second);
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<ir::Type> types, (*infer)(op, values));
    return SetResults(op, types);
  }

  Status SetResults(ir::Operation& op, const std::vector<ir::Type>& types) {
    if (static_cast<int>(types.size()) != op.num_results()) {
      return Internal("'" + op.name_str() + "' inferred " + std::to_string(types.size()) +
                      " result types for " + std::to_string(op.num_results()) + " results");
    }
    for (int i = 0; i < op.num_results(); ++i) {
      const ir::Type& declared = op.result(i).type();
      if (!ir::IsStatic(types[i]) || !Admits(declared, types[i])) {
        return InvalidArgument("'" + op.name_str() + "' result " + std::to_string(i) +
                               " is declared " + declared.ToString() +
                               " but its operands make it " + types[i].ToString());
      }
      // A static declared type keeps its layout.
      if (!ir::IsStatic(declared)) SetType(op.result(i), types[i]);
    }
    return Status::Ok();
  }

  Status RefineWhile(ir::Operation& op) {
    if (op.num_regions() != 2 || op.region(0).empty() || op.region(1).empty()) {
      return InvalidArgument("'stablehlo.while' needs a cond and a body region");
    }
    for (int r = 0; r < op.num_regions(); ++r) {
      ir::Block& body = op.region(r).front();
      if (body.num_arguments() != op.num_operands()) {
        return InvalidArgument("'stablehlo.while' region arguments do not match its operands");
      }
      for (int i = 0; i < op.num_operands(); ++i) {
        SetType(body.argument(i), op.operand(i).type());
      }
      TPUSIM_RETURN_IF_ERROR(RefineBlock(body));
    }
    const ir::Operation* ret = op.region(1).front().terminator();
    if (ret == nullptr || ir::TypesOf(ret->operands()) != ir::TypesOf(op.operands())) {
      return InvalidArgument(
          "'stablehlo.while' body returns types other than those it is given once refined");
    }
    return SetResults(op, ir::TypesOf(op.operands()));
  }

  Status RefineBranches(ir::Operation& op) {
    std::optional<std::vector<ir::Type>> types;
    for (int r = 0; r < op.num_regions(); ++r) {
      if (op.region(r).empty())
        return InvalidArgument("'" + op.name_str() + "' has an empty branch");
      ir::Block& body = op.region(r).front();
      TPUSIM_RETURN_IF_ERROR(RefineBlock(body));
      const ir::Operation* ret = body.terminator();
      if (ret == nullptr) return InvalidArgument("'" + op.name_str() + "' branch has no return");
      std::vector<ir::Type> branch = ir::TypesOf(ret->operands());
      if (types && *types != branch) {
        return InvalidArgument("'" + op.name_str() + "' branches return " +
                               ir::TypeListString(*types) + " and " + ir::TypeListString(branch) +
                               " once refined");
      }
      types = std::move(branch);
    }
    return types ? SetResults(op, *types) : Status::Ok();
  }

  // Points the call at its callee specialized for its argument types (and
  // its dimension arguments' values), refined.
  Status RefineCall(ir::Operation& op) {
    const std::string callee_name = op.attr("callee").str();
    ir::Function* callee = module_.Lookup(callee_name);
    if (callee == nullptr) return NotFound("call to unknown function @" + callee_name);
    if (callee->entry().num_arguments() != op.num_operands()) {
      return InvalidArgument("call to @" + callee_name + " has the wrong number of arguments");
    }
    // The key: argument types and the values of dimension arguments: those
    // marked jax.global_constant and, as StableHLO takes them (older exports
    // lack the mark), the leading known integer scalars after any tokens.
    std::string key = callee_name + ir::TypeListString(ir::TypesOf(op.operands()));
    std::vector<const Tensor*> dims(op.num_operands(), nullptr);
    bool leading = true;
    for (int i = 0; i < op.num_operands(); ++i) {
      auto it = known_.find(op.operand(i).impl());
      const ir::Type& t = op.operand(i).type();
      if (t.is_token() && leading) continue;
      leading = leading && it != known_.end() && t.is_tensor() && t.rank() == 0 &&
                ir::IsInteger(t.element());
      bool dimension = leading || (i < static_cast<int>(callee->arg_attrs().size()) &&
                                   callee->arg_attrs()[i].Has("jax.global_constant"));
      if (dimension && it != known_.end()) {
        dims[i] = &it->second;
        key += " %" + std::to_string(i) + "=" + ValueString(it->second);
      }
    }
    auto done = specialized_.find(key);
    ir::Function* target = nullptr;
    if (done != specialized_.end()) {
      target = module_.Lookup(done->second);
    } else {
      const bool in_place = !callee->is_public() && callers_[callee_name] == 1 &&
                            !refined_in_place_.count(callee_name);
      const ir::Function* generic = pristine_->Lookup(callee_name);
      target = in_place ? callee : Clone(generic != nullptr ? *generic : *callee);
      if (in_place) refined_in_place_.insert(callee_name);
      specialized_[key] = target->name();
      for (int i = 0; i < op.num_operands(); ++i) {
        SetType(target->entry().argument(i), op.operand(i).type());
        if (dims[i] != nullptr) known_[target->entry().argument(i).impl()] = *dims[i];
      }
      TPUSIM_RETURN_IF_ERROR(RefineFunction(*target));
    }
    op.attrs().Set("callee", ir::Attribute::SymbolRef(target->name()));
    return SetResults(op, target->type().results);
  }

  static std::string ValueString(const Tensor& t) {
    std::string s;
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      s += (i ? "," : "") + std::to_string(numerics::LoadAsInt64(
                                t.element(), t.raw() + i * ir::StorageBytes(t.element())));
    }
    return s;
  }

  // A private copy of `f` under a new name, to refine for one call.
  ir::Function* Clone(const ir::Function& f) {
    std::string name;
    do {
      name = f.name() + "_" + std::to_string(++clones_[f.name()]);
    } while (module_.Lookup(name) != nullptr);
    auto copy = std::make_unique<ir::Function>(name, f.type(), f.loc());
    copy->set_public(false);
    copy->arg_attrs() = f.arg_attrs();
    copy->result_attrs() = f.result_attrs();
    copy->attrs() = f.attrs();
    ir::Block& body = copy->body().AddBlock();
    ir::ValueMap map;
    for (ir::Value a : f.entry().arguments()) {
      map[a.impl()] = body.AddArgument(a.type(), a.name());
    }
    for (const auto& op : f.entry().ops()) body.Append(ir::CloneOp(*op, map));
    return module_.AddFunction(std::move(copy));
  }

  Status CheckAssertion(const ir::Operation& op) {
    std::vector<Tensor> args;
    for (ir::Value v : op.operands()) {
      auto it = known_.find(v.impl());
      if (it == known_.end()) {
        return InvalidArgument(
                   "@shape_assertion depends on values not known before the program runs")
            .WithLocation(op.loc().ToString());
      }
      args.push_back(it->second);
    }
    const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
    StatusOr<std::vector<Tensor>> checked = def->eval(eval_ctx_, op, args);
    if (!checked.ok()) return checked.status().WithLocation(op.loc().ToString());
    return Status::Ok();
  }

  // The static op computing what `op` does, when its shape operands are
  // known; null otherwise.
  StatusOr<std::unique_ptr<ir::Operation>> StaticForm(const ir::Operation& op) {
    const std::string& name = op.name_str();
    if (ops::NeedsStaticForm(op)) {
      std::vector<const Tensor*> values;
      for (ir::Value v : op.operands()) {
        auto it = known_.find(v.impl());
        values.push_back(it == known_.end() ? nullptr : &it->second);
      }
      return ops::StaticFormOfCall(op, values, module_);
    }
    if (!name.starts_with("stablehlo.dynamic_") && name != "stablehlo.real_dynamic_slice") {
      return std::unique_ptr<ir::Operation>();
    }
    if (op.num_results() != 1 || !ir::IsStatic(op.result(0).type()))
      return std::unique_ptr<ir::Operation>();
    auto known = [&](int i) -> std::optional<std::vector<int64_t>> {
      if (i >= op.num_operands()) return std::nullopt;
      auto it = known_.find(op.operand(i).impl());
      if (it == known_.end()) return std::nullopt;
      std::vector<int64_t> v;
      const Tensor& t = it->second;
      for (int64_t k = 0; k < t.num_elements(); ++k) {
        v.push_back(
            numerics::LoadAsInt64(t.element(), t.raw() + k * ir::StorageBytes(t.element())));
      }
      return v;
    };
    std::string static_name;
    std::vector<ir::Value> operands;
    std::vector<std::pair<std::string, ir::Attribute>> attrs;
    std::vector<std::string> keep;
    if (name == "stablehlo.dynamic_broadcast_in_dim") {
      static_name = "stablehlo.broadcast_in_dim";
      operands = {op.operand(0)};
      keep = {"broadcast_dimensions"};
    } else if (name == "stablehlo.dynamic_reshape") {
      static_name = "stablehlo.reshape";
      operands = {op.operand(0)};
    } else if (name == "stablehlo.dynamic_iota") {
      static_name = "stablehlo.iota";
      keep = {"iota_dimension"};
    } else if (name == "stablehlo.real_dynamic_slice") {
      auto start = known(1), limit = known(2), strides = known(3);
      if (!start || !limit || !strides) return std::unique_ptr<ir::Operation>();
      static_name = "stablehlo.slice";
      operands = {op.operand(0)};
      attrs = {{"start_indices", Ints(*start)},
               {"limit_indices", Ints(*limit)},
               {"strides", Ints(*strides)}};
    } else if (name == "stablehlo.dynamic_pad") {
      auto low = known(2), high = known(3), interior = known(4);
      if (!low || !high || !interior) return std::unique_ptr<ir::Operation>();
      static_name = "stablehlo.pad";
      operands = {op.operand(0), op.operand(1)};
      attrs = {{"edge_padding_low", Ints(*low)},
               {"edge_padding_high", Ints(*high)},
               {"interior_padding", Ints(*interior)}};
    } else if (name == "stablehlo.dynamic_gather") {
      auto sizes = known(2);
      if (!sizes) return std::unique_ptr<ir::Operation>();
      static_name = "stablehlo.gather";
      operands = {op.operand(0), op.operand(1)};
      keep = {"dimension_numbers", "indices_are_sorted"};
      attrs = {{"slice_sizes", Ints(*sizes)}};
    } else {
      return std::unique_ptr<ir::Operation>();  // dynamic_slice and dynamic_update_slice are static
                                                // forms already
    }
    auto stat = std::make_unique<ir::Operation>(ir::OpName(static_name), op.loc());
    stat->SetOperands(std::move(operands));
    for (const std::string& k : keep) {
      if (op.attrs().Has(k)) stat->attrs().Set(k, op.attr(k));
    }
    for (auto& [k, v] : attrs) stat->attrs().Set(k, std::move(v));
    stat->AddResult(op.result(0).type(), op.result(0).name());
    return stat;
  }

  // Records the values of `op`'s results when they are known now.
  void Compute(const ir::Operation& op) {
    if (op.name_str() == "stablehlo.get_dimension_size") {
      const ir::Type& in = op.operand(0).type();
      const int64_t d = op.attr("dimension").kind() == ir::Attribute::Kind::kInt
                            ? op.attr("dimension").int_value()
                            : -1;
      StatusOr<Tensor> t = Tensor::Allocate(op.result(0).type());
      if (d < 0 || d >= in.rank() || !t.ok() || t->num_elements() != 1) return;
      numerics::StoreInt64(t->element(), in.dim(d), t->mutable_raw());
      known_[op.result(0).impl()] = std::move(*t);
      return;
    }
    if (!Computable(op, module_)) return;
    std::vector<Tensor> args;
    for (ir::Value v : op.operands()) {
      auto it = known_.find(v.impl());
      if (it == known_.end()) return;
      args.push_back(it->second);
    }
    const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
    StatusOr<std::vector<Tensor>> values = def->eval(eval_ctx_, op, args);
    if (!values.ok() || static_cast<int>(values->size()) != op.num_results()) return;
    for (int i = 0; i < op.num_results(); ++i) known_[op.result(i).impl()] = (*values)[i];
  }

  ir::Module& module_;
  // The module as given: specializations are copies of its functions, never
  // of one already refined.
  std::unique_ptr<ir::Module> pristine_;
  KnownValueContext eval_ctx_;
  std::unordered_map<const ir::ValueImpl*, Tensor> known_;  // values known before the run
  std::unordered_set<const ir::ValueImpl*> changed_;        // values whose type was refined
  ir::ValueMap replaced_;  // results of ops replaced by static forms
  // Replaced and dropped ops, kept while the maps are keyed by their results.
  std::vector<std::unique_ptr<ir::Operation>> removed_;
  std::map<std::string, int> callers_;              // call sites per function
  std::map<std::string, std::string> specialized_;  // call key -> function refined for it
  std::set<std::string> refined_in_place_;
  std::map<std::string, int> clones_;
  std::set<std::string> refining_;  // functions on the current call path
};

}  // namespace

bool HasDynamicShapes(const ir::Module& module) {
  for (const auto& f : module.functions()) {
    for (const ir::Type& t : f->type().inputs) {
      if (!ir::IsStatic(t)) return true;
    }
    for (const ir::Type& t : f->type().results) {
      if (!ir::IsStatic(t)) return true;
    }
    bool dynamic = false;
    ir::Walk(f->body(), [&](ir::Operation& op) {
      dynamic =
          dynamic || ir::HasDynamicTypes(op) || IsShapeAssertion(op) || ops::NeedsStaticForm(op);
    });
    if (dynamic) return true;
  }
  return false;
}

Status RefineShapes(ir::Module& module, const std::string& entry,
                    const std::vector<ir::Type>& arg_types) {
  ir::Function* f = module.Lookup(entry);
  if (f == nullptr) return NotFound("no function @" + entry + " to refine");
  Refiner refiner(module);
  TPUSIM_RETURN_IF_ERROR(refiner.RefineEntry(*f, arg_types));
  refiner.RemoveUnreached(entry);
  return Status::Ok();
}

Status RunRefineShapes(ir::Module& module, PassContext& ctx) {
  if (!HasDynamicShapes(module)) return Status::Ok();
  return RefineShapes(module, ctx.entry, {});
}

}  // namespace tpusim::compiler
