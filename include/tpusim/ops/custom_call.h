// Custom call targets: stablehlo.custom_call is one op whose meaning is its
// call_target_name, so each target tpusim knows is defined once, like an op,
// by a CustomCallDef in the src/ops/ file of its family (LAPACK's FFI
// targets, the TPU's linear algebra, the SPMD markers, the check targets...)
// and registered with TPUSIM_REGISTER_CUSTOM_CALL. The op itself
// (custom_call.cc) looks the target up for its shape rule, evaluation and
// work; a target nobody registered fails when run, naming it.
#ifndef TPUSIM_OPS_CUSTOM_CALL_H_
#define TPUSIM_OPS_CUSTOM_CALL_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/ops/op_def.h"

namespace tpusim::ops {

struct CustomCallDef {
  std::string target;  // the exact call_target_name
  // Checks the operand and result types (and backend_config) against what
  // the target takes; null accepts anything. Errors need no location.
  VerifyFn verify;
  // Computes the results; null: tpusim can price the target but not run it,
  // and running it is kUnimplemented naming the target.
  EvalFn eval;
  // The work of one call; null prices it by its operands and results alone.
  WorkFn work;
  // How the partitioner may split the call when it declares no
  // sdy.sharding_rule; null: it runs on whole arrays.
  ShardingRuleFn sharding_rule;
  // For targets whose result types depend on operand values (the dynamic
  // calls of shape-polymorphic exports): the result types, for
  // refine-shapes. Null: the declared types, a dynamic one sized by its
  // indices_of_shape_operands entry or else taken from the operand in its
  // place.
  InferFn infer;
  // The static op computing what the call does, from the values of its
  // operands (null where unknown) and the module's functions, or null while
  // those it needs are unknown. Set for the targets that exist only until
  // their sizes are known; see StaticFormOfCall.
  std::function<StatusOr<std::unique_ptr<ir::Operation>>(
      const ir::Operation& call, std::span<const Tensor* const> operand_values,
      const ir::Module& module)>
      static_form;
};

class CustomCallRegistry {
 public:
  // Adds `def`; returns true. A target registered twice aborts at start-up.
  static bool Register(CustomCallDef def);
  // The definition of `target`, or null when tpusim does not know it.
  static const CustomCallDef* Lookup(std::string_view target);
  // Every registered target, sorted.
  static std::vector<std::string> Targets();
};

// The call_target_name of custom call `op`; "" when it has none.
std::string CallTarget(const ir::Operation& op);

// The static op that replaces custom call `call` once the values its result
// sizes depend on are known (`operand_values[i]`, null where unknown), as
// StableHLO's canonicalize-dynamism does: the target's static_form, or, for
// any call whose results are all static, the call without the shape
// operands named by indices_of_shape_operands. Null when there is none yet;
// an error when the known values are invalid for the target. Regions of the
// new op are copies of the functions `module` holds.
StatusOr<std::unique_ptr<ir::Operation>> StaticFormOfCall(
    const ir::Operation& call, std::span<const Tensor* const> operand_values,
    const ir::Module& module);

// Whether `op` is a custom call that must become its static form before it
// runs (refine-shapes does that even in programs with no `?` dimension).
bool NeedsStaticForm(const ir::Operation& op);

// Where a placement call (annotate_device_placement, MoveToHost,
// MoveToDevice; src/ops/custom_calls/host_offload.cc) moves its operand:
// "pinned_host", "unpinned_host" or "device"; "" for any other op.
std::string MemoryPlacement(const ir::Operation& op);

}  // namespace tpusim::ops

#define TPUSIM_REGISTER_CUSTOM_CALL(...)                                                 \
  [[maybe_unused]] static const bool TPUSIM_CONCAT_(tpusim_custom_call_reg_, __LINE__) = \
      ::tpusim::ops::CustomCallRegistry::Register(__VA_ARGS__)

#endif  // TPUSIM_OPS_CUSTOM_CALL_H_
