// Ops that structure a program rather than compute: constants, returns and
// calls between functions.
#include <cstring>

#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

// constant: the value of its `value` attribute.
Status VerifyConstant(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 0));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute value,
                          GetAttr(op, "value", ir::Attribute::Kind::kDenseElements));
  return ExpectResultType(op, 0, value.type());
}

// A splat fills its tensor on the host's cores; other values are copied
// whole. Anything unusual goes through Tensor::FromAttribute.
StatusOr<std::vector<Tensor>> EvalConstant(EvalContext&, const ir::Operation& op,
                                           std::span<const Tensor>) {
  const ir::Attribute value = op.attr("value");
  if (value.kind() == ir::Attribute::Kind::kDenseElements && value.type().is_tensor()) {
    const std::vector<uint8_t>& bytes = value.bytes();
    const int w = ir::StorageBytes(value.type().element());
    if (value.is_splat() && static_cast<int64_t>(bytes.size()) >= w) {
      TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateUninitialized(value.type()));
      FillWithElement(t, bytes.data());
      return std::vector<Tensor>{std::move(t)};
    }
    if (!value.is_splat()) {
      TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateUninitialized(value.type()));
      if (static_cast<int64_t>(bytes.size()) == t.size_bytes()) {
        if (!bytes.empty()) std::memcpy(t.mutable_raw(), bytes.data(), bytes.size());
        return std::vector<Tensor>{std::move(t)};
      }
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::FromAttribute(value));
  return std::vector<Tensor>{std::move(t)};
}

// A constant's data is part of the program, loaded with it: free to run.
TPUSIM_REGISTER_OP({.name = "stablehlo.constant", .verify = VerifyConstant,
                    .eval = EvalConstant, .work = FreeWork});

// Terminators: their operands are the results of the enclosing region; the
// region's owner checks them against what it expects.
Status VerifyTerminator(const ir::Operation& op) { return ExpectNumResults(op, 0); }

TPUSIM_REGISTER_OP({.name = "func.return", .verify = VerifyTerminator,
                    .is_terminator = true, .work = FreeWork});
TPUSIM_REGISTER_OP({.name = "stablehlo.return", .verify = VerifyTerminator,
                    .is_terminator = true, .work = FreeWork});

// func.call @callee(args): the callee's results. The verifier checks that the
// callee exists and that types match the callee's signature.
StatusOr<std::vector<Tensor>> EvalCall(EvalContext& ctx, const ir::Operation& op,
                                       std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute callee,
                          GetAttr(op, "callee", ir::Attribute::Kind::kSymbolRef));
  return ctx.CallConsuming(callee.str(), ctx.TakeOperands(operands));
}

Status VerifyCall(const ir::Operation& op) {
  return GetAttr(op, "callee", ir::Attribute::Kind::kSymbolRef).status();
}

// The call itself is free; the timing engine times the callee's ops.
TPUSIM_REGISTER_OP({.name = "func.call", .verify = VerifyCall, .eval = EvalCall,
                    .work = FreeWork});

}  // namespace
}  // namespace tpusim::ops
