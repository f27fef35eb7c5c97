// The lowering driver: computations to functions and regions, instructions
// in dependency order, tuples split and rebuilt, opcodes dispatched to their
// family's lowering.
#include "frontend/hlo/lower.h"

#include <algorithm>

#include "frontend/hlo/opcodes.h"
#include "frontend/hlo/printer_internal.h"
#include "frontend/stablehlo/parser.h"
#include "tpusim/ir/sharding.h"

namespace tpusim::frontend {
namespace {

// Element types and dimensions alike, layouts aside: an operand's written
// shape may leave its layout out.
bool SameShape(const ir::Type& a, const ir::Type& b) {
  if (a.is_tuple() || b.is_tuple()) {
    if (!a.is_tuple() || !b.is_tuple() ||
        a.tuple_elements().size() != b.tuple_elements().size()) {
      return false;
    }
    for (size_t i = 0; i < a.tuple_elements().size(); ++i) {
      if (!SameShape(a.tuple_elements()[i], b.tuple_elements()[i])) return false;
    }
    return true;
  }
  if (!a.is_tensor() || !b.is_tensor()) return a == b;
  return a.element() == b.element() && a.shape() == b.shape();
}

}  // namespace

struct HloLowering::Body {
  const HloComputation* comp = nullptr;
  std::vector<std::vector<int>> operands;             // per instruction, operand indices
  std::vector<HloValue> values;                       // per instruction, once lowered
  std::vector<HloValue> params;                       // bound parameter values
  std::vector<int> param_number;                      // per instruction; -1 if not one
  std::unordered_map<std::string_view, int> done_of;  // async start -> its done
};

HloLowering::HloLowering(const HloSource& source, const HloModuleAst& ast, ir::Module* module)
    : src_(source), ast_(ast), module_(module) {
  AddDataLowerings(table_);
  AddComputeLowerings(table_);
  AddControlLowerings(table_);
  int64_t instructions = 0;
  for (const HloComputation& c : ast.computations) instructions += c.instructions.size();
  budget_ = std::max<int64_t>(int64_t{1} << 18, 16 * instructions);
}

Status HloLowering::Error(const HloInstruction& inst, std::string_view message) const {
  return src_.ErrorAt(inst.offset, "%" + std::string(inst.name) + ": " + std::string(message));
}

Status HloLowering::Unsupported(const HloInstruction& inst, std::string_view message) const {
  return src_.UnimplementedAt(inst.opcode_offset, message);
}

ir::Operation* HloLowering::Emit(const HloInstruction& inst, std::string_view name,
                                 std::vector<ir::Value> operands, std::vector<ir::Type> results) {
  auto op = std::make_unique<ir::Operation>(ir::OpName(name), Loc(inst));
  op->SetOperands(std::move(operands));
  // Results keep the instruction's name, which the reports show.
  for (ir::Type& t : results) op->AddResult(std::move(t), std::string(inst.name));
  return block_->Append(std::move(op));
}

std::vector<ir::Type> HloLowering::ResultTypes(const HloInstruction& inst, bool split) {
  if (split && inst.type.is_tuple()) return inst.type.tuple_elements();
  return {inst.type};
}

HloValue HloLowering::ResultOf(const HloInstruction& inst, ir::Operation* op) const {
  if (op->num_results() == 1 && !(inst.type.is_tuple() && !op->result(0).type().is_tuple())) {
    return HloValue::Whole(op->result(0));
  }
  return HloValue{inst.type, {}, op->results()};
}

Status HloLowering::ExpectOperands(const HloInstruction& inst, int n) const {
  if (static_cast<int>(inst.operands.size()) == n) return Status::Ok();
  return Error(inst, std::string(inst.opcode) + " takes " + std::to_string(n) +
                         " operand(s), given " + std::to_string(inst.operands.size()));
}

Status HloLowering::ExpectMinOperands(const HloInstruction& inst, int n) const {
  if (static_cast<int>(inst.operands.size()) >= n) return Status::Ok();
  return Error(inst, std::string(inst.opcode) + " takes at least " + std::to_string(n) +
                         " operand(s), given " + std::to_string(inst.operands.size()));
}

const HloValue& HloLowering::OperandValue(const HloInstruction& inst, int i) const {
  int self = static_cast<int>(&inst - body_->comp->instructions.data());
  return body_->values[body_->operands[self][i]];
}

ir::Value HloLowering::Operand(const HloInstruction& inst, int i) {
  return Whole(inst, OperandValue(inst, i));
}

std::vector<ir::Value> HloLowering::AllOperands(const HloInstruction& inst) {
  std::vector<ir::Value> out;
  for (size_t i = 0; i < inst.operands.size(); ++i) out.push_back(Operand(inst, i));
  return out;
}

ir::Value HloLowering::Whole(const HloInstruction& at, const HloValue& v) {
  if (v.whole) return v.whole;
  return Emit(at, "stablehlo.tuple", v.elements, {v.type})->result(0);
}

std::vector<ir::Value> HloLowering::Elements(const HloInstruction& at, const HloValue& v) {
  if (!v.whole) return v.elements;
  std::vector<ir::Value> out;
  const std::vector<ir::Type>& types = v.type.tuple_elements();
  for (size_t i = 0; i < types.size(); ++i) {
    ir::Operation* gte = Emit(at, "stablehlo.get_tuple_element", {v.whole}, {types[i]});
    gte->attrs().Set("index", ir::Attribute::Int(static_cast<int64_t>(i), ir::ElementType::kSI32));
    out.push_back(gte->result(0));
  }
  return out;
}

std::vector<ir::Value> HloLowering::Flatten(const HloInstruction& at, const HloValue& v) {
  if (v.type.is_tuple()) return Elements(at, v);
  return {Whole(at, v)};
}

StatusOr<const HloComputation*> HloLowering::Computation(std::string_view name,
                                                         size_t offset) const {
  auto it = ast_.by_name.find(name);
  if (name.empty() || it == ast_.by_name.end()) {
    return src_.ErrorAt(offset, "no computation named %" + std::string(name));
  }
  return &ast_.computations[it->second];
}

StatusOr<const HloComputation*> HloLowering::Called(const HloInstruction& inst,
                                                    std::string_view key) {
  const HloAttr* a = inst.Attr(key);
  if (a == nullptr) return Error(inst, "missing attribute '" + std::string(key) + "'");
  HloCursor c = CursorOver(src_, a->value);
  c.SkipTrivia();
  size_t at = c.pos();
  std::string_view name = c.ReadName();
  if (!c.AtEnd()) return c.Error("expected one computation name");
  return Computation(name, at);
}

const HloInstruction* HloLowering::DoneOf(const HloInstruction& start) const {
  auto it = body_->done_of.find(start.name);
  return it == body_->done_of.end() ? nullptr : &body_->comp->instructions[it->second];
}

StatusOr<HloValue> HloLowering::Inline(const HloInstruction& at, const HloComputation& comp,
                                       std::vector<HloValue> params) {
  if (params.size() != comp.parameters.size()) {
    return Error(at, "computation %" + std::string(comp.name) + " takes " +
                         std::to_string(comp.parameters.size()) + " parameter(s), given " +
                         std::to_string(params.size()));
  }
  return LowerBody(comp, std::move(params), block_);
}

Status HloLowering::LowerRegion(const HloInstruction& at, const HloComputation& comp,
                                ir::Region* region, const std::vector<ir::Type>& arg_types,
                                const BindParams& bind, bool flatten_root) {
  ir::Block& block = region->AddBlock();
  for (const ir::Type& t : arg_types) block.AddArgument(t);
  ir::Block* saved = block_;
  block_ = &block;
  StatusOr<HloValue> root = Inline(at, comp, bind(block.arguments()));
  if (root.ok()) {
    std::vector<ir::Value> results =
        flatten_root ? Flatten(at, *root) : std::vector<ir::Value>{Whole(at, *root)};
    Emit(at, "stablehlo.return", std::move(results), {});
  }
  block_ = saved;
  return root.status();
}

Status HloLowering::LowerRegionWithArgs(const HloInstruction& at, const HloComputation& comp,
                                        ir::Region* region, const std::vector<ir::Type>& arg_types,
                                        bool flatten_root) {
  auto one_per_arg = [](const std::vector<ir::Value>& args) {
    std::vector<HloValue> params;
    for (ir::Value a : args) params.push_back(HloValue::Whole(a));
    return params;
  };
  return LowerRegion(at, comp, region, arg_types, one_per_arg, flatten_root);
}

StatusOr<std::vector<int>> HloLowering::Order(const HloComputation& comp, Body& body) {
  // Iterative depth-first post order: operands first, any source order.
  size_t n = comp.instructions.size();
  std::vector<int> order;
  std::vector<uint8_t> state(n, 0);  // 0 new, 1 on the stack, 2 done
  std::vector<std::pair<int, size_t>> stack;
  for (size_t root = 0; root < n; ++root) {
    if (state[root] != 0) continue;
    stack.push_back({static_cast<int>(root), 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      if (next < body.operands[i].size()) {
        int operand = body.operands[i][next++];
        if (state[operand] == 1) {
          return src_.ErrorAt(comp.instructions[i].operands[next - 1].offset,
                              "instructions depend on each other in a cycle");
        }
        if (state[operand] == 0) {
          state[operand] = 1;
          stack.push_back({operand, 0});
        }
        continue;
      }
      state[i] = 2;
      order.push_back(i);
      stack.pop_back();
    }
  }
  return order;
}

StatusOr<HloValue> HloLowering::LowerBody(const HloComputation& comp, std::vector<HloValue> params,
                                          ir::Block* block) {
  if (in_progress_.count(&comp) != 0) {
    return src_.ErrorAt(comp.offset, "computation %" + std::string(comp.name) + " calls itself");
  }
  if (depth_ >= kMaxNesting) return src_.ErrorAt(comp.offset, "computations nest too deeply");
  Body body;
  body.comp = &comp;
  body.params = std::move(params);
  size_t n = comp.instructions.size();
  body.operands.resize(n);
  body.values.resize(n);
  body.param_number.assign(n, -1);
  for (size_t p = 0; p < comp.parameters.size(); ++p) body.param_number[comp.parameters[p]] = p;
  for (size_t i = 0; i < n; ++i) {
    const HloInstruction& inst = comp.instructions[i];
    for (const HloOperandRef& ref : inst.operands) {
      auto it = comp.by_name.find(ref.name);
      if (it == comp.by_name.end()) {
        return src_.ErrorAt(ref.offset, "use of undefined instruction %" + std::string(ref.name));
      }
      const ir::Type& defined = comp.instructions[it->second].type;
      if (ref.type && !SameShape(*ref.type, defined)) {
        return src_.ErrorAt(ref.type_offset, "operand %" + std::string(ref.name) + " is " +
                                                 hlo::ShapeString(defined, false) + ", not " +
                                                 hlo::ShapeString(*ref.type, false) +
                                                 " as written here");
      }
      body.operands[i].push_back(it->second);
    }
    if (inst.opcode.ends_with("-done") && !inst.operands.empty()) {
      body.done_of.emplace(inst.operands[0].name, static_cast<int>(i));
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int> order, Order(comp, body));
  Body* saved_body = body_;
  ir::Block* saved_block = block_;
  body_ = &body;
  block_ = block;
  in_progress_.insert(&comp);
  ++depth_;
  Status status;
  for (int i : order) {
    status = LowerInstruction(comp.instructions[i], body, i);
    if (!status.ok()) break;
  }
  --depth_;
  in_progress_.erase(&comp);
  body_ = saved_body;
  block_ = saved_block;
  TPUSIM_RETURN_IF_ERROR(status);
  return body.values[comp.root];
}

Status HloLowering::LowerInstruction(const HloInstruction& inst, Body& body, int index) {
  // Bodies used as regions are copied at each use, so nested reuse could
  // multiply a small text into an enormous module.
  if (++lowered_ > budget_) {
    return Status(StatusCode::kResourceExhausted,
                  "inlining computation bodies would build more than " + std::to_string(budget_) +
                      " operations");
  }
  if (int p = body.param_number[index]; p >= 0) {
    const HloValue& bound = body.params[p];
    if (bound.type != inst.type) {
      return Error(inst, "parameter(" + std::to_string(p) + ") has shape " + inst.type.ToString() +
                             " but is given " + bound.type.ToString());
    }
    body.values[index] = bound;
    return Status::Ok();
  }
  if (auto it = table_.find(inst.opcode); it != table_.end()) {
    TPUSIM_ASSIGN_OR_RETURN(body.values[index], it->second(*this, inst));
    return Status::Ok();
  }
  if (const HloOpcode* renamed = FindByHloName(inst.opcode)) {
    ir::Operation* op = Emit(inst, renamed->stablehlo, AllOperands(inst), {inst.type});
    body.values[index] = HloValue::Whole(op->result(0));
    return Status::Ok();
  }
  return Unsupported(inst, "HLO opcode '" + std::string(inst.opcode) + "' is not supported");
}

StatusOr<ir::Function*> HloLowering::LowerFunction(const HloComputation& comp, std::string name) {
  auto f = std::make_unique<ir::Function>(std::move(name), ir::FunctionType{},
                                          src_.LocationAt(comp.offset));
  ir::Block& entry = f->body().AddBlock();
  ir::FunctionType type;
  std::vector<HloValue> params;
  for (int index : comp.parameters) {
    const HloInstruction& p = comp.instructions[index];
    type.inputs.push_back(p.type);
    params.push_back(HloValue::Whole(entry.AddArgument(p.type, std::string(p.name))));
  }
  ir::Function* out = module_->AddFunction(std::move(f));
  TPUSIM_ASSIGN_OR_RETURN(HloValue root, LowerBody(comp, std::move(params), &entry));
  ir::Block* saved = block_;
  block_ = &entry;
  const HloInstruction& root_inst = comp.instructions[comp.root];
  std::vector<ir::Value> results = Flatten(root_inst, root);
  Emit(root_inst, "func.return", results, {});
  block_ = saved;
  type.results = ir::TypesOf(results);
  out->arg_attrs().resize(type.inputs.size());
  out->result_attrs().resize(type.results.size());
  TPUSIM_RETURN_IF_ERROR(KeepShardings(comp, out));
  out->set_type(std::move(type));
  out->Renumber();
  return out;
}

// `sharding={...}` on parameters and the root become the mhlo.sharding
// argument and result attributes JAX's StableHLO carries, so partitioning
// reads them alike. A tuple sharding on a tuple root splits over the results.
Status HloLowering::KeepShardings(const HloComputation& comp, ir::Function* f) const {
  for (size_t p = 0; p < comp.parameters.size(); ++p) {
    std::string_view s = AttrWord(comp.instructions[comp.parameters[p]], "sharding");
    if (!s.empty()) f->arg_attrs()[p].Set("mhlo.sharding", ir::Attribute::String(std::string(s)));
  }
  const HloInstruction& root = comp.instructions[comp.root];
  std::string_view s = AttrWord(root, "sharding");
  if (s.empty()) return Status::Ok();
  std::vector<ir::AttributeMap>& results = f->result_attrs();
  std::vector<std::string> per_result(results.size(), std::string(s));
  if (root.type.is_tuple()) {
    StatusOr<ir::HloSharding> parsed = ir::ParseHloSharding(s);
    if (!parsed.ok()) return src_.ErrorAt(root.offset, parsed.status().message());
    if (parsed->kind == ir::HloSharding::Kind::kTuple) {
      if (parsed->elements.size() != results.size()) {
        return src_.ErrorAt(root.offset, "tuple sharding does not match the root's shape");
      }
      for (size_t i = 0; i < results.size(); ++i) per_result[i] = parsed->elements[i].ToString();
    }
  }
  for (size_t i = 0; i < results.size(); ++i) {
    results[i].Set("mhlo.sharding", ir::Attribute::String(per_result[i]));
  }
  return Status::Ok();
}

StatusOr<std::string> HloLowering::FunctionFor(const HloInstruction& at,
                                               const HloComputation& comp) {
  if (in_progress_.count(&comp) != 0) {
    return Error(at, "computation %" + std::string(comp.name) + " calls itself");
  }
  if (auto it = functions_.find(&comp); it != functions_.end()) return it->second;
  std::string name(comp.name);
  for (int suffix = 1; module_->Lookup(name) != nullptr; ++suffix) {
    name = std::string(comp.name) + "." + std::to_string(suffix);
  }
  functions_.emplace(&comp, name);
  TPUSIM_ASSIGN_OR_RETURN(ir::Function * f, LowerFunction(comp, name));
  f->set_public(false);
  return name;
}

Status HloLowering::LowerModule() {
  module_->set_name(std::string(ast_.name));
  for (const HloAttr& a : ast_.attrs) {
    // XLA schedules a module after partitioning it: it is per device.
    if (a.key == "is_scheduled" && a.value == "true") {
      module_->attrs().Set(std::string(ir::kSpmdPartitioned), ir::Attribute::Unit());
      continue;
    }
    std::string_view key = a.key == "replica_count"    ? "mhlo.num_replicas"
                           : a.key == "num_partitions" ? "mhlo.num_partitions"
                                                       : "";
    if (key.empty()) continue;
    HloCursor c = CursorOver(src_, a.value);
    TPUSIM_ASSIGN_OR_RETURN(int64_t n, c.ReadInt());
    module_->attrs().Set(std::string(key), ir::Attribute::Int(n, ir::ElementType::kSI32));
  }
  const HloComputation& entry = ast_.computations[ast_.entry];
  functions_.emplace(&entry, "main");
  return LowerFunction(entry, "main").status();
}

}  // namespace tpusim::frontend
