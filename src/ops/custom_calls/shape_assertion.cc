// @shape_assertion: the custom call jax.export puts at the top of a
// shape-polymorphic program to check that the input shapes fit its
// polymorphic specification (b >= 1, a dimension divisible by another...).
// Its operands are the predicate and the dimension values its
// error_message refers to as {0}, {1}, ...; it fails, with that message
// filled in, when the predicate is false. refine-shapes checks and drops
// these calls once the input shapes are known; one left in a program is
// checked when it runs.
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops {
namespace {

Status VerifyShapeAssertion(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 0));
  if (op.num_operands() < 1) return OpError(op, "@shape_assertion needs a predicate");
  const ir::Type& pred = op.operand(0).type();
  if (!pred.is_tensor() || pred.rank() != 0 || !ir::IsBool(pred.element())) {
    return OpError(op, "@shape_assertion's predicate must be tensor<i1>, got " + pred.ToString());
  }
  for (int i = 1; i < op.num_operands(); ++i) {
    const ir::Type& t = op.operand(i).type();
    if (!t.is_tensor() || t.rank() != 0 || !ir::IsInteger(t.element())) {
      return OpError(op,
                     "@shape_assertion's values must be 0-d integer tensors, got " + t.ToString());
    }
  }
  if (op.attr("error_message").kind() != ir::Attribute::Kind::kString) {
    return OpError(op, "@shape_assertion needs a string error_message");
  }
  return Status::Ok();
}

// `message` with each {k} replaced by values[k], as Python's str.format.
std::string Fill(const std::string& message, const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < message.size(); ++i) {
    size_t close = message.find('}', i);
    if (message[i] == '{' && close != std::string::npos && close > i + 1 && close - i <= 4) {
      std::string digits = message.substr(i + 1, close - i - 1);
      if (digits.find_first_not_of("0123456789") == std::string::npos) {
        size_t k = std::stoul(digits);
        if (k < values.size()) {
          out += std::to_string(values[k]);
          i = close;
          continue;
        }
      }
    }
    out += message[i];
  }
  return out;
}

StatusOr<std::vector<Tensor>> EvalShapeAssertion(EvalContext&, const ir::Operation& op,
                                                 std::span<const Tensor> in) {
  if (in.empty()) return InvalidArgument("@shape_assertion needs a predicate");
  for (const Tensor& t : in) {
    if (!t.type().is_tensor() || t.num_elements() != 1) {
      return InvalidArgument("@shape_assertion's operands must be scalars");
    }
  }
  if (IndexValues(in[0])[0] != 0) return std::vector<Tensor>{};
  std::vector<int64_t> values;
  for (size_t i = 1; i < in.size(); ++i) values.push_back(IndexValues(in[i])[0]);
  return InvalidArgument(Fill(op.attr("error_message").str(), values));
}

TPUSIM_REGISTER_CUSTOM_CALL({.target = "shape_assertion",
                             .verify = VerifyShapeAssertion,
                             .eval = EvalShapeAssertion,
                             .work = [](const ir::Operation&) { return Work{.free = true}; }});

}  // namespace
}  // namespace tpusim::ops
