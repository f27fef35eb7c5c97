#include "compiler/fusion_rules.h"

#include <unordered_set>

#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::compiler {
namespace {

bool IsScalarLike(const ir::Type& t) { return t.is_tensor() && t.num_elements() == 1; }

// Same shape as the result, but every result element reads many operand
// elements: not elementwise whatever their work says.
bool MixesElements(const ir::Operation& op) {
  const std::string& n = op.name_str();
  return n == "stablehlo.fft" || n == "stablehlo.cholesky" || n == "stablehlo.triangular_solve";
}

bool IsVectorWorkOnly(const ops::Work& w) {
  int64_t vector = 0;
  for (int64_t n : w.vector_ops) vector += n;
  return !w.free && w.matmuls.empty() && w.transpose_elements == 0 &&
         w.random_accesses == 0 && vector > 0;
}

void AddBlockArguments(const ir::Region& region,
                       std::unordered_set<const ir::ValueImpl*>& values) {
  for (int b = 0; b < region.num_blocks(); ++b) {
    for (ir::Value a : region.block(b).arguments()) values.insert(a.impl());
  }
}

// Whether every value `op`'s regions use is defined inside them.
bool RegionsSelfContained(const ir::Operation& op) {
  std::unordered_set<const ir::ValueImpl*> defined;
  for (int r = 0; r < op.num_regions(); ++r) {
    AddBlockArguments(op.region(r), defined);
    ir::Walk(op.region(r), [&](const ir::Operation& inner) {
      for (ir::Value v : inner.results()) defined.insert(v.impl());
      for (int i = 0; i < inner.num_regions(); ++i) AddBlockArguments(inner.region(i), defined);
    });
  }
  bool self_contained = true;
  for (int r = 0; r < op.num_regions(); ++r) {
    ir::Walk(op.region(r), [&](const ir::Operation& inner) {
      for (ir::Value v : inner.operands()) self_contained &= defined.count(v.impl()) > 0;
    });
  }
  return self_contained;
}

}  // namespace

bool IsElementwise(const ir::Operation& op) {
  const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
  if (def == nullptr || def->work == nullptr || def->control_flow || op.num_regions() > 0 ||
      op.num_results() != 1 || op.num_operands() == 0 || MixesElements(op)) {
    return false;
  }
  const ir::Type& out = op.result(0).type();
  if (!out.is_tensor()) return false;
  for (ir::Value v : op.operands()) {
    if (!v.type().is_tensor() || v.type().shape() != out.shape()) return false;
  }
  return IsVectorWorkOnly(def->work(op));
}

bool IsDuplicable(const ir::Operation& op) {
  const std::string& n = op.name_str();
  if (n == "stablehlo.constant") {
    ir::Attribute value = op.attr("value");
    return value.kind() == ir::Attribute::Kind::kDenseElements &&
           (value.is_splat() || IsScalarLike(value.type()));
  }
  if (n == "stablehlo.iota") return true;
  return n == "stablehlo.broadcast_in_dim" && op.num_operands() == 1 &&
         IsScalarLike(op.operand(0).type());
}

bool IsLoopFusible(const ir::Operation& op) {
  if (op.num_results() != 1 || !op.result(0).type().is_tensor()) return false;
  const std::string& n = op.name_str();
  return n == "stablehlo.broadcast_in_dim" || n == "stablehlo.reshape" ||
         n == "stablehlo.transpose" || n == "tpusim.copy" || n == "stablehlo.dynamic_slice" ||
         IsDuplicable(op) || IsElementwise(op);
}

bool IsCheapToDuplicate(const ir::Operation& op) {
  static const std::unordered_set<std::string> kCheap = {
      "stablehlo.add",     "stablehlo.subtract", "stablehlo.multiply",
      "stablehlo.maximum", "stablehlo.minimum",  "stablehlo.negate",
      "stablehlo.abs",     "stablehlo.compare",  "stablehlo.select",
      "stablehlo.clamp",   "stablehlo.convert",  "stablehlo.and",
      "stablehlo.or",      "stablehlo.xor",      "stablehlo.not",
      "stablehlo.broadcast_in_dim", "stablehlo.reshape"};
  if (kCheap.count(op.name_str()) == 0 || !IsLoopFusible(op)) return false;
  // Complex abs is a square root; complex products are several ops.
  return !ir::IsComplex(op.result(0).type().element());
}

bool IsOperandView(const ir::Operation& op) {
  const std::string& n = op.name_str();
  return n == "stablehlo.dynamic_slice" || n == "stablehlo.reshape";
}

bool IsFusibleReduction(const ir::Operation& op) {
  const std::string& n = op.name_str();
  return (n == "stablehlo.reduce" || n == "stablehlo.reduce_window") &&
         RegionsSelfContained(op);
}

bool IsMatmul(const ir::Operation& op) {
  const std::string& n = op.name_str();
  return n == "stablehlo.dot_general" || n == "stablehlo.dot" || n == "stablehlo.convolution";
}

bool IsEpilogue(const ir::Operation& op) {
  return IsElementwise(op) || op.name_str() == "tpusim.copy";
}

}  // namespace tpusim::compiler
