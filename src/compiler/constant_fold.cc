// Constant folding: an op whose inputs are all stablehlo.constant results (or
// that has none, like iota) is evaluated now, with its OpDef's eval run by the
// interpreter, and replaced by one stablehlo.constant per result, in every
// function and nested region. A value whose elements are all equal becomes a
// splat constant. The folded ops are removed; constants they no longer use
// are left for dce.
//
// What it does not fold: results over kMaxFoldedBytes in all; broadcasts and
// iotas of more than one element (cheaper computed where used); ops with side
// effects or symbol references (calls, composites, custom_call); per-process
// values (replica_id, partition_id); implementation-defined bits
// (rng_bit_generator); optimization_barrier (it exists to stop this); matmul-
// like ops (dot, dot_general, convolution, ragged_dot, anything with a
// precision_config), whose values depend on the numerics mode chosen when the
// program runs; control flow (while, if, case: a loop may not end); ops whose
// regions use non-constant values from outside or contain any of these; and
// any op whose value differs between the reference and TPU numerics (an f32
// -> bf16 convert of a subnormal) or whose evaluation fails (it fails when
// run instead).
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "tpusim/compiler/pass.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::compiler {
namespace {

// Bounds the constant data one folded op may add to the program.
constexpr int64_t kMaxFoldedBytes = int64_t{1} << 20;

constexpr std::string_view kNeverFolded[] = {
    "stablehlo.dot",
    "stablehlo.dot_general",
    "stablehlo.convolution",
    "stablehlo.dynamic_conv",
    "chlo.ragged_dot",
    "stablehlo.replica_id",
    "stablehlo.partition_id",
    "stablehlo.rng_bit_generator",
    "stablehlo.optimization_barrier",
};

bool IsConstant(const ir::Operation& op) { return op.name_str() == "stablehlo.constant"; }

bool IsConstant(ir::Value v) { return v.defining_op() != nullptr && IsConstant(*v.defining_op()); }

// Broadcasts and iotas cost nothing where they are used (fusion clones them
// into each kernel), while folded they would become arrays in HBM; XLA leaves
// them unfolded for the same reason.
bool MaterializesArray(const ir::Operation& op) {
  bool expands =
      op.name_str() == "stablehlo.broadcast_in_dim" || op.name_str() == "stablehlo.iota";
  return expands && op.num_results() == 1 && op.result(0).type().is_tensor() &&
         op.result(0).type().num_elements() > 1;
}

// Whether `op`'s kind may be folded, whatever its operands.
bool FoldableKind(const ir::Operation& op) {
  for (std::string_view name : kNeverFolded) {
    if (op.name_str() == name) return false;
  }
  const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
  return def != nullptr && def->eval && !def->control_flow &&
         !op.attrs().Has("precision_config") && !MaterializesArray(op);
}

bool SmallTensorResults(const ir::Operation& op) {
  int64_t total = 0;
  for (ir::Value r : op.results()) {
    if (!r.type().is_tensor()) return false;
    StatusOr<int64_t> bytes =
        CheckedByteSize(r.type().shape(), ir::StorageBytes(r.type().element()));
    if (!bytes.ok() || (total += *bytes) > kMaxFoldedBytes) return false;
  }
  return op.num_results() > 0;
}

// The values `op` reads from outside itself (operands and values its regions
// capture), in first-use order; false if one is not a constant or an op
// inside may not be folded.
bool ConstantInputs(const ir::Operation& op, std::vector<ir::Value>& inputs) {
  std::unordered_set<const ir::ValueImpl*> inside, seen;
  bool ok = true;
  auto read = [&](ir::Value v) {
    if (inside.count(v.impl()) || !seen.insert(v.impl()).second) return;
    ok = ok && IsConstant(v);
    inputs.push_back(v);
  };
  auto define = [&](const ir::Operation& def) {
    for (ir::Value v : def.results()) inside.insert(v.impl());
    for (int r = 0; r < def.num_regions(); ++r) {
      for (int b = 0; b < def.region(r).num_blocks(); ++b) {
        for (ir::Value a : def.region(r).block(b).arguments()) inside.insert(a.impl());
      }
    }
  };
  for (ir::Value v : op.operands()) read(v);
  define(op);
  for (int r = 0; r < op.num_regions(); ++r) {
    // Walk visits an op before the ops of its regions, so block arguments
    // are known as inside before they are read.
    ir::Walk(op.region(r), [&](ir::Operation& nested) {
      const ops::OpDef* def = ops::OpRegistry::Lookup(nested.name());
      if (def == nullptr || !(def->is_terminator || FoldableKind(nested))) ok = false;
      for (ir::Value v : nested.operands()) read(v);
      define(nested);
    });
  }
  return ok;
}

// A one-function module computing `op` from copies of its constant inputs.
std::unique_ptr<ir::Module> Standalone(const ir::Operation& op,
                                       const std::vector<ir::Value>& inputs) {
  auto f = std::make_unique<ir::Function>("fold", ir::FunctionType{{}, ir::TypesOf(op.results())},
                                          op.loc());
  ir::Block& body = f->body().AddBlock();
  ir::ValueMap map;
  for (ir::Value v : inputs) body.Append(ir::CloneOp(*v.defining_op(), map));
  ir::Operation* copy = body.Append(ir::CloneOp(op, map));
  auto ret = std::make_unique<ir::Operation>(ir::OpName("func.return"), op.loc());
  ret->SetOperands(copy->results());
  body.Append(std::move(ret));
  f->Renumber();
  auto module = std::make_unique<ir::Module>();
  module->AddFunction(std::move(f));
  return module;
}

// The values of `op`'s results if every numerics mode gives the same bits.
std::optional<std::vector<Tensor>> Evaluate(const ir::Operation& op,
                                            const std::vector<ir::Value>& inputs) {
  std::unique_ptr<ir::Module> module = Standalone(op, inputs);
  std::optional<std::vector<Tensor>> first;
  for (ops::Numerics mode : {ops::Numerics::kReference, ops::Numerics::kTpu}) {
    exec::Interpreter interpreter(*module, ops::EvalOptions{.numerics = mode});
    StatusOr<std::vector<Tensor>> values = interpreter.Run("fold", {});
    if (!values.ok()) return std::nullopt;
    if (!first) {
      first = std::move(*values);
      continue;
    }
    for (size_t i = 0; i < first->size(); ++i) {
      if (!(*first)[i].BitwiseEquals((*values)[i])) return std::nullopt;
    }
  }
  return first;
}

// The dense attribute of `t`, one element when all are equal, as the parser
// builds it for a splat literal.
ir::Attribute DenseOf(const Tensor& t) {
  const int64_t width = ir::StorageBytes(t.element());
  const int64_t n = t.num_elements();
  const uint8_t* raw = t.raw();
  bool splat = n > 1;
  for (int64_t i = 1; splat && i < n; ++i) splat = std::memcmp(raw, raw + i * width, width) == 0;
  std::vector<uint8_t> bytes(raw, raw + (splat ? 1 : n) * width);
  return ir::Attribute::DenseElements(t.type().WithDefaultLayout(), std::move(bytes));
}

class Folder {
 public:
  void Run(ir::Function& f) {
    for (int b = 0; b < f.body().num_blocks(); ++b) Block(f.body().block(b));
    f.Renumber();
  }

 private:
  // Re-emits the block's ops, each folded op as constants.
  void Block(ir::Block& block) {
    for (std::unique_ptr<ir::Operation>& op : block.TakeOps()) {
      for (int i = 0; i < op->num_operands(); ++i) {
        auto it = folded_.find(op->operand(i).impl());
        if (it != folded_.end()) op->SetOperand(i, it->second);
      }
      for (int r = 0; r < op->num_regions(); ++r) {
        for (int b = 0; b < op->region(r).num_blocks(); ++b) Block(op->region(r).block(b));
      }
      if (TryFold(block, *op)) {
        removed_.push_back(std::move(op));
      } else {
        block.Append(std::move(op));
      }
    }
  }

  // Appends constants for `op`'s results and maps them; false if not folded.
  bool TryFold(ir::Block& block, const ir::Operation& op) {
    std::vector<ir::Value> inputs;
    if (IsConstant(op) || !FoldableKind(op) || !SmallTensorResults(op) ||
        ops::HasSideEffects(op, nullptr) || !ConstantInputs(op, inputs)) {
      return false;
    }
    std::optional<std::vector<Tensor>> values = Evaluate(op, inputs);
    if (!values) return false;
    for (int i = 0; i < op.num_results(); ++i) {
      auto constant = std::make_unique<ir::Operation>(ir::OpName("stablehlo.constant"), op.loc());
      constant->attrs().Set("value", DenseOf((*values)[i]));
      folded_[op.result(i).impl()] = constant->AddResult(op.result(i).type(), op.result(i).name());
      block.Append(std::move(constant));
    }
    return true;
  }

  ir::ValueMap folded_;  // result of a folded op -> its constant
  // The folded ops, kept while folded_ is keyed by their results' addresses
  // so that no new op reuses one.
  std::vector<std::unique_ptr<ir::Operation>> removed_;
};

}  // namespace

Status RunConstantFolding(ir::Module& module, PassContext&) {
  for (const auto& f : module.functions()) Folder().Run(*f);
  return Status::Ok();
}

}  // namespace tpusim::compiler
