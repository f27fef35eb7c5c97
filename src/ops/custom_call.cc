// stablehlo.custom_call: dispatches to the definition of its target
// (tpusim/ops/custom_call.h). Targets nobody registered verify (they may
// still be priced, as foreign kernels or by their traffic) and fail when run.
#include "tpusim/ops/custom_call.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "ops/custom_calls/foreign_kernels.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/ir/dynamic.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::ops {
namespace {

// Registration happens during static initialization, lookups afterwards.
struct Table {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<CustomCallDef>, std::less<>> by_target;
};

Table& GetTable() {
  static Table* t = new Table;  // never destroyed: used during exit
  return *t;
}

Status VerifyCustomCall(const ir::Operation& op) {
  const std::string target = CallTarget(op);
  if (target.empty()) {
    return InvalidArgument("'stablehlo.custom_call' needs a call_target_name");
  }
  const CustomCallDef* def = CustomCallRegistry::Lookup(target);
  if (def == nullptr || !def->verify) return Status::Ok();
  return def->verify(op).WithContext("custom_call @" + target);
}

StatusOr<std::vector<Tensor>> EvalCustomCall(EvalContext& ctx, const ir::Operation& op,
                                             std::span<const Tensor> operands) {
  const std::string target = CallTarget(op);
  const CustomCallDef* def = CustomCallRegistry::Lookup(target);
  if (def == nullptr || !def->eval) {
    return Unimplemented("custom_call target '" + target + "' is not supported");
  }
  return def->eval(ctx, op, operands);
}

// Registered targets state their work; any other is foreign code, priced by
// its algorithm when tpusim knows the kernel (foreign_kernels.h) and
// otherwise bounded by its operands and results alone (the timing engine
// notes which).
Work CustomCallWork(const ir::Operation& op) {
  const std::string target = CallTarget(op);
  const CustomCallDef* def = CustomCallRegistry::Lookup(target);
  if (def != nullptr && def->work) return def->work(op);
  if (std::optional<Work> known = ForeignKernelWork(op, target)) return *std::move(known);
  return ReadsAndWrites(op);
}

// The operands that give the shapes of dynamic results
// (indices_of_shape_operands, one per result, as jax adds them); empty when
// the call has none.
std::vector<int64_t> ShapeOperands(const ir::Operation& op) {
  ir::Attribute a = op.attr("indices_of_shape_operands");
  return a ? a.AsInts() : std::vector<int64_t>{};
}

// The shape operand `i` holds, when known and a valid shape.
std::optional<ir::Shape> KnownShape(const ir::Operation& op, std::span<const Tensor* const> values,
                                    int64_t i) {
  if (i < 0 || i >= op.num_operands() || static_cast<size_t>(i) >= values.size() ||
      values[i] == nullptr) {
    return std::nullopt;
  }
  const Tensor& t = *values[i];
  if (t.rank() != 1 || !ir::IsInteger(t.element())) return std::nullopt;
  ir::Shape shape = IndexValues(t);
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
  }
  return shape;
}

// A target's result types: its own rule when it has one; else the declared
// types, where a dynamic one is sized by its shape operand
// (indices_of_shape_operands) or else taken to be the type of the operand
// in its place when that has the same rank and element type and agrees with
// its static dimensions (the identity-like calls jax wraps values in:
// sharding markers, layout hints).
StatusOr<std::vector<ir::Type>> InferCustomCall(const ir::Operation& op,
                                                std::span<const Tensor* const> values) {
  const CustomCallDef* def = CustomCallRegistry::Lookup(CallTarget(op));
  if (def != nullptr && def->infer) return def->infer(op, values);
  const std::vector<int64_t> shape_operands = ShapeOperands(op);
  std::vector<ir::Type> types;
  for (int i = 0; i < op.num_results(); ++i) {
    const ir::Type& declared = op.result(i).type();
    if (ir::IsStatic(declared)) {
      types.push_back(declared);
      continue;
    }
    if (static_cast<size_t>(i) < shape_operands.size() && declared.is_tensor()) {
      std::optional<ir::Shape> shape = KnownShape(op, values, shape_operands[i]);
      if (!shape) {
        return InvalidArgument("the shape of result " + std::to_string(i) + " (" +
                               declared.ToString() + ") of custom_call @" + CallTarget(op) +
                               " depends on values not known before the program runs");
      }
      types.push_back(ir::Type::Tensor(declared.element(), *shape));
      continue;
    }
    const ir::Type* in = i < op.num_operands() ? &op.operand(i).type() : nullptr;
    bool fits = in != nullptr && in->is_tensor() && declared.is_tensor() &&
                in->element() == declared.element() && in->rank() == declared.rank();
    for (int64_t d = 0; fits && d < declared.rank(); ++d) {
      fits = declared.dim(d) == ir::kDynamicDim || declared.dim(d) == in->dim(d);
    }
    if (!fits) {
      return InvalidArgument("cannot size result " + std::to_string(i) + " (" +
                             declared.ToString() + ") of custom_call @" + CallTarget(op) +
                             ": it is not the type of operand " + std::to_string(i));
    }
    types.push_back(ir::Type::Tensor(declared.element(), in->shape()));
  }
  return types;
}

// `call` without its shape operands, once its results are static.
std::unique_ptr<ir::Operation> WithoutShapeOperands(const ir::Operation& call) {
  const std::vector<int64_t> shape_operands = ShapeOperands(call);
  if (shape_operands.empty()) return nullptr;
  for (ir::Value r : call.results()) {
    if (!ir::IsStatic(r.type())) return nullptr;
  }
  auto is_shape = [&](int i) {
    return std::find(shape_operands.begin(), shape_operands.end(), i) != shape_operands.end();
  };
  auto out = std::make_unique<ir::Operation>(call.name(), call.loc());
  std::vector<ir::Value> operands;
  for (int i = 0; i < call.num_operands(); ++i) {
    if (!is_shape(i)) operands.push_back(call.operand(i));
  }
  out->SetOperands(std::move(operands));
  for (const auto& [key, value] : call.attrs().entries()) {
    if (key == "indices_of_shape_operands") continue;
    if (key == "operand_layouts" && value.kind() == ir::Attribute::Kind::kArray) {
      std::vector<ir::Attribute> kept;
      for (size_t i = 0; i < value.array().size(); ++i) {
        if (!is_shape(static_cast<int>(i))) kept.push_back(value.array()[i]);
      }
      out->attrs().Set(key, ir::Attribute::Array(std::move(kept)));
      continue;
    }
    out->attrs().Set(key, value);
  }
  for (ir::Value r : call.results()) out->AddResult(r.type(), r.name());
  return out;
}

// The rule the call declares, else its target's own.
std::optional<ShardingRule> CustomCallShardingRule(const ir::Operation& op) {
  if (std::optional<ShardingRule> declared = DeclaredShardingRule(op)) return declared;
  const CustomCallDef* def = CustomCallRegistry::Lookup(CallTarget(op));
  if (def == nullptr || !def->sharding_rule) return std::nullopt;
  return def->sharding_rule(op);
}

TPUSIM_REGISTER_OP({.name = "stablehlo.custom_call",
                    .verify = VerifyCustomCall,
                    .infer = InferCustomCall,
                    .eval = EvalCustomCall,
                    .work = CustomCallWork,
                    .side_effects = true,
                    .sharding_rule = CustomCallShardingRule});

}  // namespace

bool CustomCallRegistry::Register(CustomCallDef def) {
  Table& t = GetTable();
  std::lock_guard<std::mutex> lock(t.mu);
  auto [it, added] = t.by_target.try_emplace(def.target, nullptr);
  if (!added) {
    std::fprintf(stderr, "tpusim: custom call target %s registered twice\n", def.target.c_str());
    std::abort();
  }
  it->second = std::make_unique<CustomCallDef>(std::move(def));
  return true;
}

const CustomCallDef* CustomCallRegistry::Lookup(std::string_view target) {
  Table& t = GetTable();
  auto it = t.by_target.find(target);
  return it == t.by_target.end() ? nullptr : it->second.get();
}

std::vector<std::string> CustomCallRegistry::Targets() {
  std::vector<std::string> out;
  for (const auto& [target, def] : GetTable().by_target) out.push_back(target);
  return out;
}

StatusOr<std::unique_ptr<ir::Operation>> StaticFormOfCall(
    const ir::Operation& call, std::span<const Tensor* const> operand_values,
    const ir::Module& module) {
  const CustomCallDef* def = CustomCallRegistry::Lookup(CallTarget(call));
  if (def != nullptr && def->static_form) return def->static_form(call, operand_values, module);
  return WithoutShapeOperands(call);
}

bool NeedsStaticForm(const ir::Operation& op) {
  if (op.name_str() != "stablehlo.custom_call") return false;
  const CustomCallDef* def = CustomCallRegistry::Lookup(CallTarget(op));
  return (def != nullptr && def->static_form) || !ShapeOperands(op).empty();
}

std::string CallTarget(const ir::Operation& op) {
  ir::Attribute a = op.attr("call_target_name");
  bool named =
      a.kind() == ir::Attribute::Kind::kString || a.kind() == ir::Attribute::Kind::kSymbolRef;
  return named ? a.str() : "";
}

}  // namespace tpusim::ops
