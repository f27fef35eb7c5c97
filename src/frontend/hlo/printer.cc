// The HLO printer's walk over the module: functions and regions become
// computations (callees first, the entry last), every instruction gets a
// module-unique `opcode.N` name, and where StableHLO passes lists HLO passes
// one tuple: several results come back through get-tuple-element, while
// loops carry their state (and the values their regions read from outside)
// as a tuple, and each conditional branch receives a tuple of the values it
// uses from outside (empty if none) as its one parameter.
//
// Every name is derived from the IR's structure, never from source names
// (a fusion keeps the name the compiler gave it), so a module printed,
// parsed back and printed again reads the same.
#include "tpusim/frontend/hlo/printer.h"

#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/hlo/printer_internal.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ir/sharding.h"

namespace tpusim::frontend {
namespace {

using hlo::ShapeString;

// One computation being written: its instruction lines and where each IR
// value it can see is defined.
struct Computation {
  struct Def {
    std::string name;  // without '%'
    int line = 0;
  };
  std::vector<std::string> lines;
  std::unordered_map<const ir::ValueImpl*, Def> defs;
};

// A computation parameter: either one IR value, or a tuple whose elements
// are IR values reached through get-tuple-element.
struct Param {
  ir::Type type;
  ir::Value direct;
  std::vector<ir::Value> unpacked;
  bool packed = false;
  std::string sharding;  // the entry's `sharding={...}`, if any
};

// Whether the root of several values is a tuple, and of one the value
// itself (kSingleOrTuple), or always a tuple (a tuple-carrying while body).
enum class RootForm { kSingleOrTuple, kTuple };

ir::Type TupleOf(const std::vector<ir::Value>& values) {
  return ir::Type::Tuple(ir::TypesOf(values));
}

// The values `regions` use but do not define, in order of first use.
std::vector<ir::Value> Captures(const std::vector<const ir::Region*>& regions) {
  std::unordered_set<const ir::ValueImpl*> defined;
  auto define_args = [&](const ir::Region& r) {
    for (int b = 0; b < r.num_blocks(); ++b) {
      for (ir::Value arg : r.block(b).arguments()) defined.insert(arg.impl());
    }
  };
  for (const ir::Region* r : regions) {
    define_args(*r);
    ir::Walk(*r, [&](ir::Operation& op) {
      for (ir::Value v : op.results()) defined.insert(v.impl());
      for (int i = 0; i < op.num_regions(); ++i) define_args(op.region(i));
    });
  }
  std::vector<ir::Value> captures;
  std::unordered_set<const ir::ValueImpl*> seen;
  for (const ir::Region* r : regions) {
    ir::Walk(*r, [&](ir::Operation& op) {
      for (ir::Value v : op.operands()) {
        if (!defined.count(v.impl()) && seen.insert(v.impl()).second) captures.push_back(v);
      }
    });
  }
  return captures;
}

// HLO names are [A-Za-z_][A-Za-z0-9_.-]*.
std::string Sanitize(const std::string& s) {
  std::string r;
  for (char c : s) {
    r +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') ? c : '_';
  }
  if (r.empty() || !(std::isalpha(static_cast<unsigned char>(r[0])) || r[0] == '_')) r = "_" + r;
  return r;
}

Status NoHloForm(const ir::Operation& op, const std::string& why) {
  return Status(StatusCode::kUnimplemented,
                "op '" + op.name_str() + "' at " + op.loc().ToString() + " " + why);
}

class Printer {
 public:
  explicit Printer(const ir::Module& module) : module_(module) {}

  StatusOr<std::string> Print() {
    TPUSIM_ASSIGN_OR_RETURN(const ir::Function* entry, FindEntry());
    entry_ = entry;
    // The entry is `main` whatever its IR name, as ParseHlo names it.
    function_names_[entry->name()] = Unique(computation_names_, "main");
    for (const auto& f : module_.functions()) {
      if (f.get() != entry) {
        function_names_[f->name()] = Unique(computation_names_, Sanitize(f->name()));
      }
    }
    for (const auto& f : module_.functions()) {
      if (f.get() != entry) TPUSIM_RETURN_IF_ERROR(EmitFunction(*f));
    }
    TPUSIM_RETURN_IF_ERROR(EmitFunction(*entry));
    std::string text = Header(*entry) + "\n\n";
    for (const std::string& c : computations_) text += c + "\n\n";
    text.pop_back();
    return text;
  }

 private:
  StatusOr<const ir::Function*> FindEntry() const {
    if (const ir::Function* main = module_.Lookup("main")) return main;
    const ir::Function* only = nullptr;
    for (const auto& f : module_.functions()) {
      if (!f->is_public()) continue;
      if (only != nullptr) {
        return Status(StatusCode::kInvalidArgument,
                      "no entry function: no @main and several public functions");
      }
      only = f.get();
    }
    if (only == nullptr) return Status(StatusCode::kInvalidArgument, "no entry function");
    return only;
  }

  std::string Header(const ir::Function& entry) const {
    std::string name = module_.name().empty() ? "main" : Sanitize(module_.name());
    std::string layout = "(";
    for (size_t i = 0; i < entry.type().inputs.size(); ++i) {
      layout += i ? ", " : "";
      layout += ShapeString(entry.type().inputs[i]);
    }
    const std::vector<ir::Type>& results = entry.type().results;
    layout += ")->" + ShapeString(results.size() == 1 ? results[0] : ir::Type::Tuple(results));
    std::string s = "HloModule " + name;
    // A partitioned program runs its ops in program order, as a scheduled
    // XLA module does; reading the mark back keeps it per device.
    if (module_.attrs().Has(ir::kSpmdPartitioned)) s += ", is_scheduled=true";
    s += ", entry_computation_layout={" + layout + "}";
    for (const auto& [key, hlo_key] : {std::pair{"mhlo.num_replicas", "replica_count"},
                                       std::pair{"mhlo.num_partitions", "num_partitions"}}) {
      ir::Attribute a = module_.attrs().Get(key);
      if (a.kind() == ir::Attribute::Kind::kInt && a.int_value() > 1) {
        s += std::string(", ") + hlo_key + "=" + std::to_string(a.int_value());
      }
    }
    return s;
  }

  static std::string Unique(std::set<std::string>& used, std::string name) {
    while (!used.insert(name).second) name += "_";
    return name;
  }

  std::string NewName(std::string_view base) {
    return Unique(instruction_names_, std::string(base) + "." + std::to_string(next_id_++));
  }

  std::string ComputationName(std::string_view function) const {
    auto it = function_names_.find(std::string(function));
    return it != function_names_.end() ? it->second : Sanitize(std::string(function));
  }

  // Prints `f` after every function it calls, once.
  Status EmitFunction(const ir::Function& f) {
    if (emitted_.count(&f)) return Status::Ok();
    if (!emitting_.insert(&f).second) {
      return Status(StatusCode::kUnimplemented,
                    "@" + f.name() + " calls itself; HLO has no recursion");
    }
    std::vector<std::string> callees;
    ir::Walk(f.body(), [&](ir::Operation& op) {
      for (const char* key : {"callee", "decomposition"}) {
        if (ir::Attribute a = op.attr(key); a.kind() == ir::Attribute::Kind::kSymbolRef) {
          callees.push_back(a.str());
        }
      }
      if (ir::Attribute a = op.attr("called_computations");
          a.kind() == ir::Attribute::Kind::kArray) {
        for (const ir::Attribute& c : a.array()) {
          if (c.kind() == ir::Attribute::Kind::kSymbolRef) callees.push_back(c.str());
        }
      }
    });
    for (const std::string& callee : callees) {
      const ir::Function* g = module_.Lookup(callee);
      if (g == nullptr) {
        return Status(StatusCode::kInvalidArgument,
                      "@" + f.name() + " calls @" + callee + ", which is not defined");
      }
      TPUSIM_RETURN_IF_ERROR(EmitFunction(*g));
    }
    if (f.body().num_blocks() != 1) {
      return Status(StatusCode::kUnimplemented, "@" + f.name() + " has several blocks");
    }
    std::vector<Param> params;
    for (ir::Value arg : f.entry().arguments()) {
      params.push_back({.type = arg.type(), .direct = arg});
    }
    std::string root_sharding;
    if (&f == entry_) {
      TPUSIM_ASSIGN_OR_RETURN(root_sharding, EntryShardings(f, params));
    }
    TPUSIM_RETURN_IF_ERROR(PrintComputation(ComputationName(f.name()), params, f.entry(),
                                            RootForm::kSingleOrTuple, {}, &f == entry_, "Arg_",
                                            root_sharding));
    emitting_.erase(&f);
    emitted_.insert(&f);
    return Status::Ok();
  }

  // The entry's shardings (mhlo.sharding or sdy.sharding) as HLO writes
  // them: on each parameter, and the root's, returned (a tuple of them for
  // several results; "" when no result has one).
  StatusOr<std::string> EntryShardings(const ir::Function& f, std::vector<Param>& params) const {
    for (size_t i = 0; i < params.size(); ++i) {
      TPUSIM_ASSIGN_OR_RETURN(auto s, ir::ArgSharding(module_, f, static_cast<int>(i)));
      if (s) params[i].sharding = s->ToString();
    }
    std::vector<std::string> results;
    bool any = false;
    for (size_t i = 0; i < f.type().results.size(); ++i) {
      TPUSIM_ASSIGN_OR_RETURN(auto s, ir::ResultSharding(module_, f, static_cast<int>(i)));
      results.push_back(s ? s->ToString() : "{replicated}");
      any |= s.has_value();
    }
    if (!any) return std::string();
    if (results.size() == 1) return results[0];
    std::string tuple = "{";
    for (size_t i = 0; i < results.size(); ++i) tuple += (i ? ", " : "") + results[i];
    return tuple + "}";
  }

  // Writes `block` as computation `name` taking `params`; the root is what
  // the block returns followed by `extra_root`, with `root_sharding` if set.
  Status PrintComputation(const std::string& name, const std::vector<Param>& params,
                          const ir::Block& block, RootForm form,
                          const std::vector<ir::Value>& extra_root, bool is_entry,
                          std::string_view param_prefix, const std::string& root_sharding = "") {
    Computation c;
    std::string signature;
    for (size_t i = 0; i < params.size(); ++i) {
      const Param& p = params[i];
      const std::string pname = NewName(std::string(param_prefix) + std::to_string(i));
      signature += i ? ", " : "";
      signature += pname + ": " + ShapeString(p.type, false);
      std::vector<std::string> attrs;
      if (!p.sharding.empty()) attrs.push_back("sharding=" + p.sharding);
      const int line = Emit(c, pname, p.type, "parameter(" + std::to_string(i) + ")", attrs);
      if (p.direct) c.defs[p.direct.impl()] = {pname, line};
      for (size_t j = 0; j < p.unpacked.size(); ++j) {
        Bind(c, p.unpacked[j], EmitElement(c, pname, p.type, static_cast<int>(j)));
      }
    }
    const ir::Operation* terminator = block.terminator();
    if (terminator == nullptr ||
        (terminator->name_str() != "func.return" && terminator->name_str() != "stablehlo.return")) {
      return Status(StatusCode::kInvalidArgument,
                    "computation " + name + " does not end in a return");
    }
    for (const auto& op : block.ops()) {
      if (op.get() != terminator) TPUSIM_RETURN_IF_ERROR(PrintOp(c, *op));
    }
    std::vector<ir::Value> roots = terminator->operands();
    roots.insert(roots.end(), extra_root.begin(), extra_root.end());
    int root_line = 0;
    ir::Type root_type;
    if (form == RootForm::kSingleOrTuple && roots.size() == 1) {
      auto it = c.defs.find(roots[0].impl());
      if (it == c.defs.end()) return Ref(c, roots[0], *terminator).status();
      root_line = it->second.line;
      root_type = roots[0].type();
    } else {
      TPUSIM_ASSIGN_OR_RETURN(Computation::Def tuple, EmitTuple(c, roots, *terminator));
      root_line = tuple.line;
      root_type = TupleOf(roots);
    }
    if (!root_sharding.empty()) c.lines[root_line] += ", sharding=" + root_sharding;
    std::string text = is_entry ? "ENTRY %" : "%";
    text += name + " (" + signature + ") -> " + ShapeString(root_type, false) + " {\n";
    for (size_t i = 0; i < c.lines.size(); ++i) {
      text += static_cast<int>(i) == root_line ? "  ROOT " : "  ";
      text += c.lines[i] + "\n";
    }
    computations_.push_back(text + "}");
    return Status::Ok();
  }

  // Appends `%name = shape opcode_and_args, attrs`; returns its line.
  static int Emit(Computation& c, const std::string& name, const ir::Type& shape,
                  const std::string& opcode_and_args, const std::vector<std::string>& attrs) {
    std::string line = "%" + name + " = " + ShapeString(shape) + " " + opcode_and_args;
    for (const std::string& a : attrs) line += ", " + a;
    c.lines.push_back(std::move(line));
    return static_cast<int>(c.lines.size()) - 1;
  }

  static void Bind(Computation& c, ir::Value v, Computation::Def def) { c.defs[v.impl()] = def; }

  // "f32[2]{0} %name", or an error if `v` is not visible in `c`.
  static StatusOr<std::string> Ref(const Computation& c, ir::Value v, const ir::Operation& user) {
    auto it = c.defs.find(v.impl());
    if (it == c.defs.end()) {
      return NoHloForm(user, "uses a value defined outside its region, which HLO cannot express");
    }
    return ShapeString(v.type()) + " %" + it->second.name;
  }

  static StatusOr<std::string> Args(const Computation& c, const std::vector<ir::Value>& values,
                                    const ir::Operation& user) {
    std::string s;
    for (size_t i = 0; i < values.size(); ++i) {
      TPUSIM_ASSIGN_OR_RETURN(std::string r, Ref(c, values[i], user));
      s += i ? ", " : "";
      s += r;
    }
    return s;
  }

  // Element `index` of the tuple `%tuple` of type `tuple_type`.
  Computation::Def EmitElement(Computation& c, const std::string& tuple, const ir::Type& tuple_type,
                               int index) {
    const std::string name = NewName("get-tuple-element");
    const int line = Emit(c, name, tuple_type.tuple_elements()[index],
                          "get-tuple-element(" + ShapeString(tuple_type) + " %" + tuple + ")",
                          {"index=" + std::to_string(index)});
    return {name, line};
  }

  StatusOr<Computation::Def> EmitTuple(Computation& c, const std::vector<ir::Value>& values,
                                       const ir::Operation& user) {
    TPUSIM_ASSIGN_OR_RETURN(std::string args, Args(c, values, user));
    const std::string name = NewName("tuple");
    return Computation::Def{name, Emit(c, name, TupleOf(values), "tuple(" + args + ")", {})};
  }

  // The one HLO operand standing for `values`: a tuple-typed value alone is
  // passed as it is, anything else as a new tuple.
  struct Packed {
    std::string operand;
    ir::Type type;
    bool direct = false;
  };
  StatusOr<Packed> Pack(Computation& c, const std::vector<ir::Value>& values,
                        const ir::Operation& user) {
    if (values.size() == 1 && values[0].type().is_tuple()) {
      TPUSIM_ASSIGN_OR_RETURN(std::string ref, Ref(c, values[0], user));
      return Packed{ref, values[0].type(), true};
    }
    TPUSIM_ASSIGN_OR_RETURN(Computation::Def tuple, EmitTuple(c, values, user));
    const ir::Type type = TupleOf(values);
    return Packed{ShapeString(type) + " %" + tuple.name, type, false};
  }

  // The parameter matching Pack(values): `args` are the region's own
  // values standing for them.
  static Param PackedParam(const Packed& p, const std::vector<ir::Value>& args) {
    if (p.direct) return {.type = p.type, .direct = args[0]};
    return {.type = p.type, .unpacked = args, .packed = true};
  }

  // Binds the results of `op`, defined by instruction `name` on `line`:
  // one result is the instruction, several are its tuple's elements.
  void BindResults(Computation& c, const ir::Operation& op, const std::string& name, int line,
                   const ir::Type& shape) {
    if (op.num_results() == 1) {
      Bind(c, op.result(0), {name, line});
      return;
    }
    for (int i = 0; i < op.num_results(); ++i)
      Bind(c, op.result(i), EmitElement(c, name, shape, i));
  }

  static ir::Type ResultShape(const ir::Operation& op) {
    return op.num_results() == 1 ? op.result(0).type() : TupleOf(op.results());
  }

  // Ops other than the control flow HLO restructures: the instruction
  // DescribeOp spells, after the computations of its regions.
  Status PrintOp(Computation& c, const ir::Operation& op) {
    const std::string& n = op.name_str();
    if (n == "stablehlo.while") return PrintWhile(c, op);
    if (n == "stablehlo.if" || n == "stablehlo.case") return PrintConditional(c, op);
    if (n == "stablehlo.optimization_barrier") return PrintBarrier(c, op);
    TPUSIM_ASSIGN_OR_RETURN(
        std::optional<hlo::HloForm> form,
        hlo::DescribeOp(op, [this](std::string_view f) { return ComputationName(f); }));
    if (!form) return NoHloForm(op, "has no HLO form");
    if (static_cast<int>(form->region_keys.size()) != op.num_regions()) {
      return NoHloForm(op, "has regions HLO has no place for");
    }
    TPUSIM_ASSIGN_OR_RETURN(std::string args, Args(c, op.operands(), op));
    if (form->inline_args) args = *form->inline_args;
    const bool fusion = n == "tpusim.fusion";
    std::vector<std::string> attrs = form->attrs;
    std::string name = fusion ? FusionName(op) : "";
    for (int r = 0; r < op.num_regions(); ++r) {
      TPUSIM_ASSIGN_OR_RETURN(std::string callee,
                              PrintRegion(op, r, fusion ? FusedComputationName(name) : ""));
      attrs.push_back(form->region_keys[r] + "=%" + callee);
    }
    attrs.insert(attrs.end(), form->attrs_after.begin(), form->attrs_after.end());
    if (name.empty()) name = NewName(form->opcode);
    const ir::Type shape = ResultShape(op);
    const int line = Emit(c, name, shape, form->opcode + "(" + args + ")", attrs);
    BindResults(c, op, name, line, shape);
    return Status::Ok();
  }

  // A fusion keeps the name the compiler gave it when that is a free HLO
  // name, so dumps and reports agree. It takes a number either way, so that
  // the names after it do not depend on whether it had one.
  std::string FusionName(const ir::Operation& op) {
    const std::string numbered = NewName("fusion");
    ir::Attribute a = op.attr("name");
    if (a.kind() == ir::Attribute::Kind::kString && Sanitize(a.str()) == a.str() &&
        instruction_names_.insert(a.str()).second) {
      instruction_names_.erase(numbered);
      return a.str();
    }
    return numbered;
  }

  // fusion.3 -> fused_computation.3, as XLA pairs them.
  std::string FusedComputationName(const std::string& fusion) {
    const std::string suffix = fusion.rfind("fusion", 0) == 0 ? fusion.substr(6) : "." + fusion;
    return Unique(computation_names_, "fused_computation" + suffix);
  }

  // Region `r` of `op`, which sees only its arguments, as a computation;
  // `name` empty means a fresh region_K.N.
  StatusOr<std::string> PrintRegion(const ir::Operation& op, int r, std::string name) {
    const ir::Region& region = op.region(r);
    if (region.num_blocks() != 1) return NoHloForm(op, "has a region of several blocks");
    const bool fused = !name.empty();
    if (!fused) name = NewRegionName();
    std::vector<Param> params;
    for (ir::Value arg : region.front().arguments()) {
      params.push_back({.type = arg.type(), .direct = arg});
    }
    TPUSIM_RETURN_IF_ERROR(PrintComputation(name, params, region.front(), RootForm::kSingleOrTuple,
                                            {}, false, fused ? "param_" : "Arg_"));
    return name;
  }

  std::string NewRegionName() {
    return Unique(computation_names_,
                  "region_" + std::to_string(next_region_++) + "." + std::to_string(next_id_++));
  }

  // while(state) -> while(tuple(state, captures)), condition and body taking
  // that tuple; the body passes the captures through unchanged.
  Status PrintWhile(Computation& c, const ir::Operation& op) {
    if (op.num_regions() != 2 || op.region(0).num_blocks() != 1 || op.region(1).num_blocks() != 1 ||
        op.region(0).front().num_arguments() != op.num_operands() ||
        op.region(1).front().num_arguments() != op.num_operands()) {
      return NoHloForm(op, "has malformed regions");
    }
    const std::vector<ir::Value> captures = Captures({&op.region(0), &op.region(1)});
    std::vector<ir::Value> carried = op.operands();
    carried.insert(carried.end(), captures.begin(), captures.end());
    TPUSIM_ASSIGN_OR_RETURN(Packed packed, Pack(c, carried, op));
    std::string names[2];
    for (int r = 0; r < 2; ++r) {
      const ir::Block& block = op.region(r).front();
      std::vector<ir::Value> args = block.arguments();
      args.insert(args.end(), captures.begin(), captures.end());
      names[r] = NewRegionName();
      const bool body = r == 1;
      TPUSIM_RETURN_IF_ERROR(
          PrintComputation(names[r], {PackedParam(packed, args)}, block,
                           body && !packed.direct ? RootForm::kTuple : RootForm::kSingleOrTuple,
                           body ? captures : std::vector<ir::Value>{}, false, "Arg_"));
    }
    const std::string name = NewName("while");
    const int line = Emit(c, name, packed.type, "while(" + packed.operand + ")",
                          {"condition=%" + names[0], "body=%" + names[1]});
    if (packed.direct) {
      Bind(c, op.result(0), {name, line});
      return Status::Ok();
    }
    // Every carried element is read back, the captures' too, so that a
    // parser that gives the loop one result per element prints the same.
    for (size_t i = 0; i < carried.size(); ++i) {
      Computation::Def element = EmitElement(c, name, packed.type, static_cast<int>(i));
      if (static_cast<int>(i) < op.num_results()) Bind(c, op.result(static_cast<int>(i)), element);
    }
    return Status::Ok();
  }

  // if/case -> conditional: each branch takes the values it uses from
  // outside as one operand (an empty tuple when it uses none).
  Status PrintConditional(Computation& c, const ir::Operation& op) {
    if (op.num_operands() != 1) return NoHloForm(op, "has other than one operand");
    const ir::Value selector = op.operand(0);
    TPUSIM_ASSIGN_OR_RETURN(std::string args, Ref(c, selector, op));
    std::vector<Param> params;
    for (int r = 0; r < op.num_regions(); ++r) {
      if (op.region(r).num_blocks() != 1 || op.region(r).front().num_arguments() != 0) {
        return NoHloForm(op, "has malformed regions");
      }
      const std::vector<ir::Value> captures = Captures({&op.region(r)});
      TPUSIM_ASSIGN_OR_RETURN(Packed packed, Pack(c, captures, op));
      args += ", " + packed.operand;
      params.push_back(PackedParam(packed, captures));
    }
    std::vector<std::string> branches;
    for (int r = 0; r < op.num_regions(); ++r) {
      branches.push_back(NewRegionName());
      TPUSIM_RETURN_IF_ERROR(PrintComputation(branches.back(), {params[r]}, op.region(r).front(),
                                              RootForm::kSingleOrTuple, {}, false, "Arg_"));
    }
    std::vector<std::string> attrs;
    if (op.name_str() == "stablehlo.if") {
      attrs = {"true_computation=%" + branches[0], "false_computation=%" + branches[1]};
    } else {
      std::string list;
      for (const std::string& b : branches) {
        list += list.empty() ? "%" : ", %";
        list += b;
      }
      attrs = {"branch_computations={" + list + "}"};
    }
    const std::string name = NewName("conditional");
    const ir::Type shape = ResultShape(op);
    BindResults(c, op, name, Emit(c, name, shape, "conditional(" + args + ")", attrs), shape);
    return Status::Ok();
  }

  // HLO's opt-barrier takes and returns one tuple.
  Status PrintBarrier(Computation& c, const ir::Operation& op) {
    TPUSIM_ASSIGN_OR_RETURN(Packed packed, Pack(c, op.operands(), op));
    const std::string name = NewName("opt-barrier");
    const int line = Emit(c, name, packed.type, "opt-barrier(" + packed.operand + ")", {});
    if (packed.direct) {
      Bind(c, op.result(0), {name, line});
    } else {
      for (int i = 0; i < op.num_results(); ++i) {
        Bind(c, op.result(i), EmitElement(c, name, packed.type, i));
      }
    }
    return Status::Ok();
  }

  const ir::Module& module_;
  const ir::Function* entry_ = nullptr;
  int next_id_ = 1;
  int next_region_ = 0;
  std::vector<std::string> computations_;  // finished, callees first
  std::unordered_map<std::string, std::string> function_names_;
  std::set<std::string> computation_names_;
  std::set<std::string> instruction_names_;
  std::set<const ir::Function*> emitted_, emitting_;
};

}  // namespace

StatusOr<std::string> PrintHlo(const ir::Module& module) { return Printer(module).Print(); }

}  // namespace tpusim::frontend
