// Shape rules: an op's result types from its operand types, for the
// refine-shapes pass (compiler/pass.h), which sizes the dynamic dimensions of
// shape-polymorphic programs. Optional, and read by that pass alone, so they
// sit in their own table beside the op table (op_def.h): an op's rule is
// registered in the src/ops/ file that defines the op, next to its OpDef,
// with TPUSIM_REGISTER_SHAPE_RULE. An op without one keeps its declared
// result types, and refine-shapes reports any of them left dynamic.
#ifndef TPUSIM_OPS_SHAPE_RULE_H_
#define TPUSIM_OPS_SHAPE_RULE_H_

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

// The result types of `op` from its operand types, all static, and from the
// values of those operands known before the program runs
// (`operand_values[i]`, null where unknown: the shape operands of the
// dynamic_* ops are known when computed from input shapes alone). Runs on ops
// whose shape rule (OpDef::verify) has not, so it checks what it reads.
// Errors need no location.
using InferFn = std::function<StatusOr<std::vector<ir::Type>>(
    const ir::Operation& op, std::span<const Tensor* const> operand_values)>;

class ShapeRuleRegistry {
 public:
  // Gives each op of `ops` the rule `infer`; returns true. An op given two
  // rules aborts at start-up (a bug).
  static bool Register(std::vector<std::string> ops, InferFn infer);
  // The rule of `name`, or null when it has none.
  static const InferFn* Lookup(ir::OpName name);
};

}  // namespace tpusim::ops

#define TPUSIM_REGISTER_SHAPE_RULE(...)                                                 \
  [[maybe_unused]] static const bool TPUSIM_CONCAT_(tpusim_shape_rule_reg_, __LINE__) = \
      ::tpusim::ops::ShapeRuleRegistry::Register(__VA_ARGS__)

#endif  // TPUSIM_OPS_SHAPE_RULE_H_
