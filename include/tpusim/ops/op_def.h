// The op table: every op tpusim knows is defined once, in one file under
// src/ops/, by an OpDef that holds its shape rules (the check of its types and
// the inference of its result types), its evaluation and the
// hardware-independent work it does. Front ends build generic ir::Operations;
// everything that needs an op's meaning looks it up here.
//
// Adding an op: write an OpDef in the src/ops/ file of its family and register
// it with TPUSIM_REGISTER_OP; add tests beside it.
#ifndef TPUSIM_OPS_OP_DEF_H_
#define TPUSIM_OPS_OP_DEF_H_

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/numerics/tpu.h"
#include "tpusim/ops/sharding_rule.h"
#include "tpusim/ops/work.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

enum class Numerics {
  kReference,  // the StableHLO spec's exact semantics
  kTpu,        // the TPU's: bf16 MXU passes for f32 dot/conv, TPU bf16 rounding
};

struct EvalOptions {
  Numerics numerics = Numerics::kReference;
  // Overrides every dot/conv's precision attribute when set.
  bool override_precision = false;
  numerics::MatmulPrecision precision = numerics::MatmulPrecision::kDefault;
};

class Collectives;  // see ops/collectives.h; exchanges data between processes

// What an op's evaluation may ask of the interpreter running it.
// Implemented by the interpreter; one per running process.
class EvalContext {
 public:
  virtual ~EvalContext() = default;
  virtual const EvalOptions& options() const = 0;
  // The module running: its functions and module attributes (sdy meshes).
  virtual const ir::Module& module() const = 0;
  // Runs a region of the op being evaluated with `args` bound to its entry
  // block's arguments; returns the operands of its terminator.
  virtual StatusOr<std::vector<Tensor>> RunRegion(const ir::Region& region,
                                                  std::span<const Tensor> args) = 0;
  // Calls a function of the module by name.
  virtual StatusOr<std::vector<Tensor>> Call(std::string_view function,
                                             std::span<const Tensor> args) = 0;

  // In-place evaluation. An op's result may reuse the storage of an operand
  // that nothing else holds any more (its last use, as a loop updates a
  // stacked buffer one slice per iteration): the op takes its operands, and
  // writes into one whose Tensor::unique_storage() is true instead of
  // allocating.
  //
  // The op's operands as values it owns. When `operands` is the span the
  // interpreter handed to the op being evaluated, its tensors are moved out
  // (so an operand dead after this op is then held by the returned vector
  // alone); otherwise, as in every context but the interpreter, they are
  // copies, never unique. Call it at most once per evaluation, and read the
  // operands from the returned vector afterwards.
  virtual std::vector<Tensor> TakeOperands(std::span<const Tensor> operands) {
    return {operands.begin(), operands.end()};
  }
  // As RunRegion and Call, with arguments the region's or function's ops may
  // consume in place (those held by `args` alone: taken with TakeOperands or
  // results of an earlier region run).
  virtual StatusOr<std::vector<Tensor>> RunRegionConsuming(const ir::Region& region,
                                                           std::vector<Tensor> args) {
    return RunRegion(region, args);
  }
  virtual StatusOr<std::vector<Tensor>> CallConsuming(std::string_view function,
                                                      std::vector<Tensor> args) {
    return Call(function, args);
  }
  // This process's place in the replicas x partitions grid (0, 0 alone).
  virtual int64_t replica_id() const = 0;
  virtual int64_t partition_id() const = 0;
  virtual int64_t num_replicas() const = 0;
  virtual int64_t num_partitions() const = 0;
  // The channel to other processes; null when running alone.
  virtual Collectives* collectives() = 0;
  // Told by a loop's evaluation as it begins iteration `iteration` (from 0):
  // a long or endless loop shows progress, and stops when asked. kCancelled
  // ends the loop; any other error too.
  virtual Status BeginIteration(const ir::Operation& loop, int64_t iteration) {
    (void)loop, (void)iteration;
    return Status::Ok();
  }
};

using VerifyFn = std::function<Status(const ir::Operation& op)>;
// The result types of `op` from its operand types, all static, and from the
// values of those operands known before the program runs
// (`operand_values[i]`, null where unknown: the shape operands of the
// dynamic_* ops are known when computed from input shapes alone). Runs on ops
// whose VerifyFn has not, so it checks what it reads. Errors need no
// location.
using InferFn = std::function<StatusOr<std::vector<ir::Type>>(
    const ir::Operation& op, std::span<const Tensor* const> operand_values)>;
using EvalFn = std::function<StatusOr<std::vector<Tensor>>(
    EvalContext& ctx, const ir::Operation& op, std::span<const Tensor> operands)>;
// The work of one execution of `op`, from its types and attributes alone.
// Ops with regions state only their own work; the timing engine adds the
// work of the regions they run.
using WorkFn = std::function<Work(const ir::Operation& op)>;

struct OpDef {
  std::string name;  // full name, "stablehlo.add"
  // Shape rule: checks operand and result types and attributes. Errors need
  // no location; the verifier adds it.
  VerifyFn verify;
  // Infers the result types, for the refine-shapes pass (compiler/pass.h),
  // which sizes the dynamic dimensions of shape-polymorphic programs. Null:
  // the op keeps its declared result types, and refine-shapes reports any
  // left dynamic.
  InferFn infer;
  // Computes the results from operand values. Null for ops that only
  // structure the program (func.return, stablehlo.return) and are handled by
  // the interpreter itself.
  EvalFn eval;
  // Terminators end a block and are handled by the interpreter.
  bool is_terminator = false;
  // Hardware-independent work; null means the timing model cannot price the
  // op, which the report says rather than counting it as free.
  WorkFn work;
  // The op's regions run as part of the program (while, if, case): their ops
  // are timed one by one. Other ops' regions are per-element computations
  // (reduce bodies, sort comparators) whose cost is in the op's own work.
  bool control_flow = false;
  // Running the op does more than compute its results: it exchanges data
  // with other processes or the host, prints, or checks values. Passes keep
  // such ops even when their results are unused, and never evaluate them at
  // compile time. See HasSideEffects for the whole rule.
  bool side_effects = false;
  // How the SPMD partitioner may split the op across devices; null: it runs
  // on whole arrays. Elementwise ops need none (ElementwiseShardingRule).
  ShardingRuleFn sharding_rule;
  // The evaluation accepts, for an operand of more than one element, a
  // Tensor of one element standing for the operand filled with it
  // (IsSplatPlaceholder in ops/util/op_util.h): the interpreter then never
  // expands a large splat constant, nor a broadcast of one element, that
  // only such ops read.
  bool splat_operands = false;
};

class OpRegistry {
 public:
  // Adds `def`; returns true. Duplicate names abort at start-up (a bug).
  static bool Register(OpDef def);
  // The definition of `name`, or null if tpusim does not know the op.
  static const OpDef* Lookup(ir::OpName name);
  static const OpDef* Lookup(std::string_view name);
  // Every registered op name, sorted.
  static std::vector<std::string> Names();
};

// Whether `op` must be kept even when its results are unused: it is unknown
// to the registry, marked side_effects, has no results (it exists for its
// effect; terminators included), or an op in its regions or in a function it
// names (@callee, looked up in `module`; any symbol counts when `module` is
// null) has side effects. Recursive function references are followed once.
bool HasSideEffects(const ir::Operation& op, const ir::Module* module);

}  // namespace tpusim::ops

#define TPUSIM_REGISTER_OP(...)                                         \
  [[maybe_unused]] static const bool TPUSIM_CONCAT_(tpusim_op_reg_, __LINE__) = \
      ::tpusim::ops::OpRegistry::Register(__VA_ARGS__)

#endif  // TPUSIM_OPS_OP_DEF_H_
