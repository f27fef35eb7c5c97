#include "frontend/onnx/fold.h"

#include <vector>

#include "tpusim/ops/op_def.h"

namespace tpusim::frontend::onnx_import {
namespace {

using Values = std::unordered_map<const ir::ValueImpl*, Tensor>;

constexpr int64_t kMaxElements = 1 << 20;

// Evaluates ops on the values of one map; regions (a reduce's body) run on
// the same map, so that they see what encloses them.
class Folder : public ops::EvalContext {
 public:
  Folder(const KnownFn& known) : known_(known) {}

  const ops::EvalOptions& options() const override { return options_; }
  const ir::Module& module() const override { return module_; }
  StatusOr<std::vector<Tensor>> RunRegion(const ir::Region& region,
                                          std::span<const Tensor> args) override {
    const ir::Block& block = region.front();
    for (int i = 0; i < block.num_arguments(); ++i) values_[block.argument(i).impl()] = args[i];
    for (size_t i = 0; i + 1 < block.ops().size(); ++i) {
      TPUSIM_RETURN_IF_ERROR(Run(*block.ops()[i]));
    }
    std::vector<Tensor> out;
    for (ir::Value v : block.terminator()->operands()) {
      const Tensor* t = Lookup(v);
      if (t == nullptr) return Unimplemented("unknown value");
      out.push_back(*t);
    }
    return out;
  }
  StatusOr<std::vector<Tensor>> Call(std::string_view, std::span<const Tensor>) override {
    return Unimplemented("calls are not folded");
  }
  int64_t replica_id() const override { return 0; }
  int64_t partition_id() const override { return 0; }
  int64_t num_replicas() const override { return 1; }
  int64_t num_partitions() const override { return 1; }
  ops::Collectives* collectives() override { return nullptr; }

  Status Run(const ir::Operation& op) {
    const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
    if (def == nullptr || !def->eval || def->control_flow || ops::HasSideEffects(op, nullptr)) {
      return Unimplemented("not folded");
    }
    for (ir::Value r : op.results()) {
      // Import-time work stays small even where a node's ops widen a value.
      if (!r.type().is_tensor() || r.type().num_elements() > kMaxElements) {
        return Unimplemented("too large to fold");
      }
    }
    TPUSIM_RETURN_IF_ERROR(def->verify ? def->verify(op) : Status::Ok());
    std::vector<Tensor> operands;
    for (ir::Value v : op.operands()) {
      const Tensor* t = Lookup(v);
      if (t == nullptr) return Unimplemented("unknown operand");
      operands.push_back(*t);
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> results, def->eval(*this, op, operands));
    for (int i = 0; i < op.num_results(); ++i) values_[op.result(i).impl()] = std::move(results[i]);
    return Status::Ok();
  }

  Values& values() { return values_; }

 private:
  const Tensor* Lookup(ir::Value v) {
    auto it = values_.find(v.impl());
    return it != values_.end() ? &it->second : known_(v);
  }

  const KnownFn& known_;
  ops::EvalOptions options_;
  ir::Module module_;
  Values values_;
};

}  // namespace

std::optional<Values> FoldOps(const ir::Block& block, size_t first, const KnownFn& known) {
  Folder folder(known);
  for (size_t i = first; i < block.ops().size(); ++i) {
    if (!folder.Run(*block.ops()[i]).ok()) return std::nullopt;
  }
  return std::move(folder.values());
}

}  // namespace tpusim::frontend::onnx_import
