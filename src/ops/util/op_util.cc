#include "ops/util/op_util.h"

namespace tpusim::ops {

namespace {
Status Error(const ir::Operation& op, const std::string& what) {
  return InvalidArgument("'" + op.name_str() + "' " + what);
}
}  // namespace

Status ExpectNumOperands(const ir::Operation& op, int n) {
  if (op.num_operands() == n) return Status::Ok();
  return Error(op, "expects " + std::to_string(n) + " operands, got " +
                       std::to_string(op.num_operands()));
}

Status ExpectNumResults(const ir::Operation& op, int n) {
  if (op.num_results() == n) return Status::Ok();
  return Error(op, "expects " + std::to_string(n) + " results, got " +
                       std::to_string(op.num_results()));
}

Status ExpectNumRegions(const ir::Operation& op, int n) {
  if (op.num_regions() == n) return Status::Ok();
  return Error(op, "expects " + std::to_string(n) + " regions, got " +
                       std::to_string(op.num_regions()));
}

Status ExpectAllTensors(const ir::Operation& op) {
  for (int i = 0; i < op.num_operands(); ++i) {
    if (!op.operand(i).type().is_tensor()) {
      return Error(op, "operand " + std::to_string(i) + " must be a tensor, got " +
                           op.operand(i).type().ToString());
    }
  }
  for (int i = 0; i < op.num_results(); ++i) {
    if (!op.result(i).type().is_tensor()) {
      return Error(op, "result " + std::to_string(i) + " must be a tensor, got " +
                           op.result(i).type().ToString());
    }
  }
  return Status::Ok();
}

Status ExpectResultType(const ir::Operation& op, int i, const ir::Type& type) {
  if (op.result(i).type() == type) return Status::Ok();
  return Error(op, "result " + std::to_string(i) + " has type " +
                       op.result(i).type().ToString() + ", but the shape rule gives " +
                       type.ToString());
}

StatusOr<ir::Attribute> GetAttr(const ir::Operation& op, std::string_view key,
                                ir::Attribute::Kind kind) {
  ir::Attribute a = op.attr(key);
  if (!a) return Error(op, "needs attribute '" + std::string(key) + "'");
  if (a.kind() != kind) {
    return Error(op, "attribute '" + std::string(key) + "' has the wrong kind: " +
                         a.ToString());
  }
  return a;
}

StatusOr<std::vector<int64_t>> GetInts(const ir::Operation& op, std::string_view key) {
  ir::Attribute a = op.attr(key);
  if (!a) return Error(op, "needs attribute '" + std::string(key) + "'");
  using K = ir::Attribute::Kind;
  if (a.kind() != K::kDenseArray && a.kind() != K::kArray &&
      a.kind() != K::kDenseElements) {
    return Error(op, "attribute '" + std::string(key) + "' must be a list of integers");
  }
  return a.AsInts();
}

std::vector<int64_t> GetIntsOr(const ir::Operation& op, std::string_view key,
                               std::vector<int64_t> fallback) {
  ir::Attribute a = op.attr(key);
  return a ? a.AsInts() : fallback;
}

int64_t GetIntOr(const ir::Operation& op, std::string_view key, int64_t fallback) {
  ir::Attribute a = op.attr(key);
  return a && a.kind() == ir::Attribute::Kind::kInt ? a.int_value() : fallback;
}

std::string GetEnumOr(const ir::Operation& op, std::string_view key,
                      std::string fallback) {
  ir::Attribute a = op.attr(key);
  return a && a.kind() == ir::Attribute::Kind::kEnum ? a.str() : fallback;
}

std::string FormatInts(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

StatusOr<std::vector<Tensor>> AllocateResults(const ir::Operation& op) {
  std::vector<Tensor> out;
  for (int i = 0; i < op.num_results(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(op.result(i).type()));
    out.push_back(std::move(t));
  }
  return out;
}

StatusOr<Tensor> ReuseOrAllocate(std::span<const Tensor> owned,
                                 std::initializer_list<int> candidates, const ir::Type& type) {
  for (int i : candidates) {
    if (i < 0 || i >= static_cast<int>(owned.size())) continue;
    const Tensor& t = owned[i];
    if (t.valid() && t.type().is_tensor() && t.unique_storage() && t.element() == type.element() &&
        t.num_elements() == type.num_elements()) {
      return t.Reshaped(type.shape());
    }
  }
  return Tensor::AllocateUninitialized(type);
}

}  // namespace tpusim::ops
