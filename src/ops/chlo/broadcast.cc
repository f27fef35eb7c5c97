// The CHLO broadcasting ops (chlo-ops.md): chlo.broadcast_X(lhs, rhs) is the
// elementwise op X applied after broadcasting both operands to a common
// shape, and chlo.broadcast_select likewise for three operands.
//
// Shapes broadcast the numpy way (align trailing dimensions; a dimension of
// size 1 stretches), unless the operands' ranks differ and the op gives
// `broadcast_dimensions`: then that list maps each dimension of the
// lower-rank operand to one of the other's (XLA's explicit broadcasting).
//
// X is not re-implemented here: evaluation materializes the broadcast
// operands and runs X's own definition from the op table (stablehlo.add for
// chlo.broadcast_add, chlo.zeta for chlo.broadcast_zeta, ...) on a free-
// standing copy of the op, so that each elementwise rule exists once.
#include <memory>
#include <string>
#include <vector>

#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

// How the result element type follows from the operands'.
enum class ResultElement {
  kSame,     // the operands' element type
  kBool,     // i1 (compare)
  kComplex,  // complex of the float operands (complex)
};

struct BroadcastBinary {
  const char* name;
  const char* target;
  ResultElement result;
};

constexpr BroadcastBinary kBinaryOps[] = {
    {"chlo.broadcast_add", "stablehlo.add", ResultElement::kSame},
    {"chlo.broadcast_and", "stablehlo.and", ResultElement::kSame},
    {"chlo.broadcast_atan2", "stablehlo.atan2", ResultElement::kSame},
    {"chlo.broadcast_compare", "stablehlo.compare", ResultElement::kBool},
    {"chlo.broadcast_complex", "stablehlo.complex", ResultElement::kComplex},
    {"chlo.broadcast_divide", "stablehlo.divide", ResultElement::kSame},
    {"chlo.broadcast_maximum", "stablehlo.maximum", ResultElement::kSame},
    {"chlo.broadcast_minimum", "stablehlo.minimum", ResultElement::kSame},
    {"chlo.broadcast_multiply", "stablehlo.multiply", ResultElement::kSame},
    {"chlo.broadcast_next_after", "chlo.next_after", ResultElement::kSame},
    {"chlo.broadcast_or", "stablehlo.or", ResultElement::kSame},
    {"chlo.broadcast_polygamma", "chlo.polygamma", ResultElement::kSame},
    {"chlo.broadcast_power", "stablehlo.power", ResultElement::kSame},
    {"chlo.broadcast_remainder", "stablehlo.remainder", ResultElement::kSame},
    {"chlo.broadcast_shift_left", "stablehlo.shift_left", ResultElement::kSame},
    {"chlo.broadcast_shift_right_arithmetic", "stablehlo.shift_right_arithmetic",
     ResultElement::kSame},
    {"chlo.broadcast_shift_right_logical", "stablehlo.shift_right_logical", ResultElement::kSame},
    {"chlo.broadcast_subtract", "stablehlo.subtract", ResultElement::kSame},
    {"chlo.broadcast_xor", "stablehlo.xor", ResultElement::kSame},
    {"chlo.broadcast_zeta", "chlo.zeta", ResultElement::kSame},
};

const BroadcastBinary* FindBinary(const std::string& name) {
  for (const BroadcastBinary& b : kBinaryOps) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

// ----------------------------------------------------------------- shapes

// A broadcast: the result shape and, per operand, the result dimension each
// of its dimensions lands on.
struct Broadcast {
  ir::Shape shape;
  std::vector<std::vector<int64_t>> dims;
};

// Folds an operand dimension of size `size` into result dimension `d`.
Status Stretch(const ir::Operation& op, int64_t size, int64_t d, ir::Shape& shape) {
  if (size == shape[d] || size == 1) return Status::Ok();
  if (shape[d] == 1) {
    shape[d] = size;
    return Status::Ok();
  }
  return OpError(op, "cannot broadcast dimension " + std::to_string(d) + " of sizes " +
                         std::to_string(shape[d]) + " and " + std::to_string(size));
}

// numpy: every operand is aligned to the trailing dimensions.
StatusOr<Broadcast> NumpyBroadcast(const ir::Operation& op, const std::vector<ir::Shape>& shapes) {
  size_t rank = 0;
  for (const ir::Shape& s : shapes) rank = std::max(rank, s.size());
  Broadcast b{ir::Shape(rank, 1), {}};
  for (const ir::Shape& s : shapes) {
    std::vector<int64_t> dims;
    for (size_t i = 0; i < s.size(); ++i) {
      const int64_t d = static_cast<int64_t>(rank - s.size() + i);
      TPUSIM_RETURN_IF_ERROR(Stretch(op, s[i], d, b.shape));
      dims.push_back(d);
    }
    b.dims.push_back(std::move(dims));
  }
  return b;
}

// Explicit: the lower-rank operand's dimension i lands on dims[i] of the
// higher-rank one.
StatusOr<Broadcast> ExplicitBroadcast(const ir::Operation& op, const ir::Shape& lhs,
                                      const ir::Shape& rhs, const std::vector<int64_t>& dims) {
  const bool lhs_small = lhs.size() < rhs.size();
  const ir::Shape& small = lhs_small ? lhs : rhs;
  const ir::Shape& large = lhs_small ? rhs : lhs;
  TPUSIM_RETURN_IF_ERROR(
      CheckSize(op, "broadcast_dimensions", dims, static_cast<int64_t>(small.size())));
  TPUSIM_RETURN_IF_ERROR(
      CheckDimsInRange(op, "broadcast_dimensions", dims, static_cast<int64_t>(large.size())));
  TPUSIM_RETURN_IF_ERROR(CheckUnique(op, "broadcast_dimensions", dims));
  Broadcast b{large, {}};
  for (size_t i = 0; i < small.size(); ++i) {
    TPUSIM_RETURN_IF_ERROR(Stretch(op, small[i], dims[i], b.shape));
  }
  std::vector<int64_t> identity(large.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int64_t>(i);
  b.dims = lhs_small ? std::vector<std::vector<int64_t>>{dims, identity}
                     : std::vector<std::vector<int64_t>>{identity, dims};
  return b;
}

StatusOr<Broadcast> BroadcastOf(const ir::Operation& op) {
  std::vector<ir::Shape> shapes;
  for (int i = 0; i < op.num_operands(); ++i) shapes.push_back(op.operand(i).type().shape());
  const ir::Attribute dims = op.attr("broadcast_dimensions");
  if (dims && shapes.size() == 2 && shapes[0].size() != shapes[1].size()) {
    return ExplicitBroadcast(op, shapes[0], shapes[1], dims.AsInts());
  }
  return NumpyBroadcast(op, shapes);
}

// `t` broadcast to `b.shape`, its dimension i landing on dims[i].
StatusOr<Tensor> Materialize(const Tensor& t, const Broadcast& b,
                             const std::vector<int64_t>& dims) {
  if (t.shape() == b.shape) return t;
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(ir::Type::Tensor(t.element(), b.shape)));
  const std::vector<int64_t> strides = RowMajorStrides(t.shape());
  std::vector<int64_t> src(b.shape.size(), 0);  // stretched dimensions repeat
  for (size_t i = 0; i < dims.size(); ++i) {
    if (t.shape()[i] == b.shape[dims[i]]) src[dims[i]] = strides[i];
  }
  StridedCopier copier(ir::StorageBytes(t.element()), b.shape, src, RowMajorStrides(b.shape));
  copier.Run(t.raw(), out.mutable_raw());
  return out;
}

// ----------------------------------------------------------------- target op

// A free-standing operation `target` on values of `operand_types`, with the
// chlo op's result type, location and attributes (CHLO enums renamed to their
// StableHLO twins, broadcast_dimensions dropped).
class TargetOp {
 public:
  TargetOp(const ir::Operation& chlo, std::string_view target,
           const std::vector<ir::Type>& operand_types)
      : op_(ir::OpName(target), chlo.loc()) {
    std::vector<ir::Value> values;
    for (const ir::Type& t : operand_types) {
      auto impl = std::make_unique<ir::ValueImpl>();
      impl->type = t;
      impl->index = static_cast<int>(values.size());
      values.emplace_back(impl.get());
      operands_.push_back(std::move(impl));
    }
    op_.SetOperands(std::move(values));
    op_.AddResult(chlo.result(0).type());
    for (const auto& [key, value] : chlo.attrs().entries()) {
      if (key == "broadcast_dimensions") continue;
      op_.attrs().Set(key, Translate(value));
    }
  }
  const ir::Operation& op() const { return op_; }

 private:
  static ir::Attribute Translate(const ir::Attribute& a) {
    if (a.kind() == ir::Attribute::Kind::kEnum && a.name().starts_with("chlo.")) {
      return ir::Attribute::Enum("stablehlo." + a.name().substr(5), a.str());
    }
    return a;
  }

  std::vector<std::unique_ptr<ir::ValueImpl>> operands_;  // before op_: outlives it
  ir::Operation op_;
};

StatusOr<const OpDef*> TargetDef(const ir::Operation& op, std::string_view target) {
  const OpDef* def = OpRegistry::Lookup(target);
  if (def == nullptr || !def->eval) {
    return Unimplemented("'" + op.name_str() + "' needs '" + std::string(target) +
                         "', which tpusim does not implement");
  }
  return def;
}

// The types of `op`'s operands broadcast to `b`.
std::vector<ir::Type> BroadcastTypes(const ir::Operation& op, const Broadcast& b) {
  std::vector<ir::Type> types;
  for (int i = 0; i < op.num_operands(); ++i) {
    types.push_back(ir::Type::Tensor(op.operand(i).type().element(), b.shape));
  }
  return types;
}

// Shape rule shared by all: the result is the broadcast shape with
// `element`, and the target op accepts the broadcast operands.
Status VerifyAgainstTarget(const ir::Operation& op, std::string_view target,
                           ir::ElementType element) {
  TPUSIM_ASSIGN_OR_RETURN(Broadcast b, BroadcastOf(op));
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, 0, ir::Type::Tensor(element, b.shape)));
  TPUSIM_ASSIGN_OR_RETURN(const OpDef* def, TargetDef(op, target));
  TargetOp t(op, target, BroadcastTypes(op, b));
  return def->verify ? def->verify(t.op()) : Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalViaTarget(EvalContext& ctx, const ir::Operation& op,
                                            std::string_view target,
                                            std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(Broadcast b, BroadcastOf(op));
  TPUSIM_ASSIGN_OR_RETURN(const OpDef* def, TargetDef(op, target));
  if (static_cast<int>(operands.size()) != op.num_operands()) {
    return Internal("'" + op.name_str() + "' evaluated with the wrong operand count");
  }
  std::vector<Tensor> broadcast;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].shape() != op.operand(static_cast<int>(i)).type().shape()) {
      return Internal("'" + op.name_str() + "' operand does not match its type");
    }
    TPUSIM_ASSIGN_OR_RETURN(Tensor t, Materialize(operands[i], b, b.dims[i]));
    broadcast.push_back(std::move(t));
  }
  TargetOp t(op, target, BroadcastTypes(op, b));
  return def->eval(ctx, t.op(), broadcast);
}

// ----------------------------------------------------------------- binary ops

Status VerifyBinary(const ir::Operation& op) {
  const BroadcastBinary* info = FindBinary(op.name_str());
  if (info == nullptr) return Internal("'" + op.name_str() + "' is not a broadcasting op");
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::ElementType e = op.operand(0).type().element();
  if (op.operand(1).type().element() != e) {
    return OpError(op, "operands must have one element type, got " +
                           op.operand(0).type().ToString() + " and " +
                           op.operand(1).type().ToString());
  }
  ir::ElementType result = e;
  if (info->result == ResultElement::kBool) {
    result = ir::ElementType::kI1;
  } else if (info->result == ResultElement::kComplex) {
    if (e != ir::ElementType::kF32 && e != ir::ElementType::kF64) {
      return OpError(op, "needs f32 or f64 operands, got " + op.operand(0).type().ToString());
    }
    result = e == ir::ElementType::kF32 ? ir::ElementType::kC64 : ir::ElementType::kC128;
  }
  return VerifyAgainstTarget(op, info->target, result);
}

StatusOr<std::vector<Tensor>> EvalBinary(EvalContext& ctx, const ir::Operation& op,
                                         std::span<const Tensor> operands) {
  const BroadcastBinary* info = FindBinary(op.name_str());
  if (info == nullptr) return Internal("'" + op.name_str() + "' is not a broadcasting op");
  return EvalViaTarget(ctx, op, info->target, operands);
}

// A broadcasting op does its target's work on the broadcast shapes.
WorkFn TargetWork(std::string_view target) {
  return [target](const ir::Operation& op) {
    const OpDef* def = OpRegistry::Lookup(target);
    return def != nullptr && def->work ? def->work(op) : ElementwiseWork(op, VectorClass::kAlu);
  };
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const BroadcastBinary& b : kBinaryOps) {
    OpRegistry::Register({.name = b.name, .verify = VerifyBinary, .eval = EvalBinary,
                          .work = TargetWork(b.target)});
  }
  return true;
}();

// ----------------------------------------------------------------- select

// broadcast_select(pred, on_true, on_false): all three broadcast together.
Status VerifySelect(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 3));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  return VerifyAgainstTarget(op, "stablehlo.select", op.operand(1).type().element());
}

StatusOr<std::vector<Tensor>> EvalSelect(EvalContext& ctx, const ir::Operation& op,
                                         std::span<const Tensor> operands) {
  return EvalViaTarget(ctx, op, "stablehlo.select", operands);
}

TPUSIM_REGISTER_OP({.name = "chlo.broadcast_select", .verify = VerifySelect, .eval = EvalSelect,
                    .work = TargetWork("stablehlo.select")});

}  // namespace
}  // namespace tpusim::ops
