// stablehlo.dot_general and the legacy stablehlo.dot: contractions over
// named dimensions, normalized to a batched [B, M, K] x [B, K, N] product
// (ops/kernels/matmul.h), with operands viewed in place whenever their dimension
// groups are contiguous and transposed into a copy only when they are not.
#include <algorithm>

#include "ops/kernels/matmul.h"
#include "ops/util/op_util.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

struct DotDims {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contract, rhs_contract;
};

StatusOr<DotDims> GetDotDims(const ir::Operation& op) {
  if (op.name_str() == "stablehlo.dot") {
    // Vector/matrix products: lhs's last dimension against rhs's first.
    const int64_t lr = op.operand(0).type().rank(), rr = op.operand(1).type().rank();
    if (lr < 1 || lr > 2 || rr < 1 || rr > 2) {
      return InvalidArgument("'stablehlo.dot' needs rank 1 or 2 operands");
    }
    return DotDims{{}, {}, {lr - 1}, {0}};
  }
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute dn,
                          GetAttr(op, "dot_dimension_numbers", ir::Attribute::Kind::kStruct));
  auto ints = [&](std::string_view key) {
    ir::Attribute f = dn.Get(key);
    return f ? f.AsInts() : std::vector<int64_t>{};
  };
  return DotDims{ints("lhs_batching_dimensions"), ints("rhs_batching_dimensions"),
                 ints("lhs_contracting_dimensions"), ints("rhs_contracting_dimensions")};
}

// Dimensions of a rank-`rank` operand that are neither batch nor contracting,
// in increasing order (the order they take in the result).
std::vector<int64_t> FreeDims(int64_t rank, std::vector<int64_t> batch,
                              const std::vector<int64_t>& contract) {
  batch.insert(batch.end(), contract.begin(), contract.end());
  return RemainingDims(rank, batch);
}

Status CheckDimList(const ir::Operation& op, const char* what, const std::vector<int64_t>& dims,
                    int64_t rank) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return InvalidArgument("'" + op.name_str() + "' " + what + " " + FormatInts(dims) +
                             " out of range for rank " + std::to_string(rank));
    }
  }
  return Status::Ok();
}

// Spec constraints C1-C10; returns the result shape (C12).
StatusOr<ir::Shape> DotResultShape(const ir::Operation& op, const ir::Shape& lhs,
                                   const ir::Shape& rhs, const DotDims& d) {
  const auto lr = static_cast<int64_t>(lhs.size()), rr = static_cast<int64_t>(rhs.size());
  TPUSIM_RETURN_IF_ERROR(CheckDimList(op, "lhs_batching_dimensions", d.lhs_batch, lr));
  TPUSIM_RETURN_IF_ERROR(CheckDimList(op, "lhs_contracting_dimensions", d.lhs_contract, lr));
  TPUSIM_RETURN_IF_ERROR(CheckDimList(op, "rhs_batching_dimensions", d.rhs_batch, rr));
  TPUSIM_RETURN_IF_ERROR(CheckDimList(op, "rhs_contracting_dimensions", d.rhs_contract, rr));
  auto error = [&](const std::string& what) {
    return InvalidArgument("'" + op.name_str() + "' " + what);
  };
  if (d.lhs_batch.size() != d.rhs_batch.size()) {
    return error("has different numbers of lhs and rhs batching dimensions");
  }
  if (d.lhs_contract.size() != d.rhs_contract.size()) {
    return error("has different numbers of lhs and rhs contracting dimensions");
  }
  auto unique = [](std::vector<int64_t> a, const std::vector<int64_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    std::sort(a.begin(), a.end());
    return std::adjacent_find(a.begin(), a.end()) == a.end();
  };
  if (!unique(d.lhs_batch, d.lhs_contract) || !unique(d.rhs_batch, d.rhs_contract)) {
    return error("repeats a dimension among its batching and contracting dimensions");
  }
  ir::Shape result;
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    if (lhs[d.lhs_batch[i]] != rhs[d.rhs_batch[i]]) {
      return error("batching dimensions " + FormatInts(d.lhs_batch) + " x " +
                   FormatInts(d.rhs_batch) + " have different sizes");
    }
    result.push_back(lhs[d.lhs_batch[i]]);
  }
  for (size_t i = 0; i < d.lhs_contract.size(); ++i) {
    if (lhs[d.lhs_contract[i]] != rhs[d.rhs_contract[i]]) {
      return error("contracting dimensions " + FormatInts(d.lhs_contract) + " x " +
                   FormatInts(d.rhs_contract) + " have different sizes");
    }
  }
  for (int64_t dim : FreeDims(lr, d.lhs_batch, d.lhs_contract)) result.push_back(lhs[dim]);
  for (int64_t dim : FreeDims(rr, d.rhs_batch, d.rhs_contract)) result.push_back(rhs[dim]);
  return result;
}

// Algorithm constraints C22-C24 (C21 is in VerifyPrecisionConfig).
Status VerifyAlgorithm(const ir::Operation& op) {
  ir::Attribute alg = op.attr("algorithm");
  if (!alg) return Status::Ok();
  for (const char* key : {"lhs_component_count", "rhs_component_count",
                          "num_primitive_operations"}) {
    ir::Attribute f = alg.Get(key);
    if (f && f.kind() == ir::Attribute::Kind::kInt && f.int_value() <= 0) {
      return InvalidArgument("'" + op.name_str() + "' dot algorithm " + key +
                             " must be positive");
    }
  }
  return Status::Ok();
}

Status VerifyDot(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& lhs = op.operand(0).type();
  const ir::Type& rhs = op.operand(1).type();
  const ir::Type& result = op.result(0).type();
  TPUSIM_RETURN_IF_ERROR(VerifyMatmulTypes(op, lhs.element(), rhs.element(), result.element()));
  TPUSIM_RETURN_IF_ERROR(VerifyPrecisionConfig(op));
  TPUSIM_RETURN_IF_ERROR(VerifyAlgorithm(op));
  TPUSIM_ASSIGN_OR_RETURN(DotDims dims, GetDotDims(op));
  TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape, DotResultShape(op, lhs.shape(), rhs.shape(), dims));
  return ExpectResultType(op, 0, ir::Type::Tensor(result.element(), shape));
}

StatusOr<std::vector<Tensor>> EvalDot(EvalContext& ctx, const ir::Operation& op,
                                      std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(DotDims d, GetDotDims(op));
  TPUSIM_ASSIGN_OR_RETURN(MatmulNumerics num, SelectMatmulNumerics(ctx, op));
  const Tensor& lhs = operands[0];
  const Tensor& rhs = operands[1];
  const std::vector<int64_t> lhs_free = FreeDims(lhs.rank(), d.lhs_batch, d.lhs_contract);
  const std::vector<int64_t> rhs_free = FreeDims(rhs.rank(), d.rhs_batch, d.rhs_contract);
  MatmulProblem p;
  p.batch = DimsProduct(lhs.shape(), d.lhs_batch);
  p.m = DimsProduct(lhs.shape(), lhs_free);
  p.k = DimsProduct(lhs.shape(), d.lhs_contract);
  p.n = DimsProduct(rhs.shape(), rhs_free);
  Tensor lhs_packed, rhs_packed;
  TPUSIM_ASSIGN_OR_RETURN(p.lhs,
                          GroupedView(lhs, d.lhs_batch, lhs_free, d.lhs_contract, &lhs_packed));
  TPUSIM_ASSIGN_OR_RETURN(p.rhs,
                          GroupedView(rhs, d.rhs_batch, d.rhs_contract, rhs_free, &rhs_packed));
  const ir::Type& result_type = op.result(0).type();
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, BatchedMatmul(p, result_type.element(), num));
  return std::vector<Tensor>{out.Reshaped(result_type.shape())};
}

// One batched [B, M, K] x [B, K, N] product on the MXU.
Work DotWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  auto dims = GetDotDims(op);
  if (!dims.ok()) return w;
  const ir::Shape& lhs = op.operand(0).type().shape();
  const ir::Shape& rhs = op.operand(1).type().shape();
  const int64_t lr = static_cast<int64_t>(lhs.size()), rr = static_cast<int64_t>(rhs.size());
  MatmulWork mm = MxuWork(op, DimsProduct(lhs, dims->lhs_batch),
                          DimsProduct(lhs, FreeDims(lr, dims->lhs_batch, dims->lhs_contract)),
                          DimsProduct(lhs, dims->lhs_contract),
                          DimsProduct(rhs, FreeDims(rr, dims->rhs_batch, dims->rhs_contract)));
  w.flops = mm.flops();
  w.matmuls.push_back(mm);
  return w;
}

// Batch dimensions, then each side's free dimensions, as the result orders
// them; contracting dimensions are reductions whose partial sums add up.
std::optional<ShardingRule> DotRule(const ir::Operation& op) {
  auto d = GetDotDims(op);
  if (!d.ok()) return std::nullopt;
  const ir::Type& lhs = op.operand(0).type();
  const ir::Type& rhs = op.operand(1).type();
  ShardingRule rule;
  rule.operands = {std::vector<int>(lhs.rank(), -1), std::vector<int>(rhs.rank(), -1)};
  std::vector<int>& result = rule.results.emplace_back();
  for (size_t k = 0; k < d->lhs_batch.size(); ++k) {
    const int f = rule.Add(lhs.dim(d->lhs_batch[k]));
    rule.operands[0][d->lhs_batch[k]] = rule.operands[1][d->rhs_batch[k]] = f;
    result.push_back(f);
  }
  for (int64_t i : FreeDims(lhs.rank(), d->lhs_batch, d->lhs_contract)) {
    result.push_back(rule.operands[0][i] = rule.Add(lhs.dim(i)));
  }
  for (int64_t i : FreeDims(rhs.rank(), d->rhs_batch, d->rhs_contract)) {
    result.push_back(rule.operands[1][i] = rule.Add(rhs.dim(i)));
  }
  for (size_t k = 0; k < d->lhs_contract.size(); ++k) {
    rule.operands[0][d->lhs_contract[k]] = rule.operands[1][d->rhs_contract[k]] =
        rule.Add(lhs.dim(d->lhs_contract[k]));
  }
  rule.combiner = "stablehlo.add";
  return rule;
}

StatusOr<std::vector<ir::Type>> InferDot(const ir::Operation& op, Values) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, 2));
  TPUSIM_ASSIGN_OR_RETURN(DotDims dims, GetDotDims(op));
  TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape, DotResultShape(op, op.operand(0).type().shape(),
                                                          op.operand(1).type().shape(), dims));
  return OneResult(op, std::move(shape));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.dot_general",
                    .verify = VerifyDot,
                    .infer = InferDot,
                    .eval = EvalDot,
                    .work = DotWork,
                    .sharding_rule = DotRule});

TPUSIM_REGISTER_OP({.name = "stablehlo.dot",
                    .verify = VerifyDot,
                    .infer = InferDot,
                    .eval = EvalDot,
                    .work = DotWork,
                    .sharding_rule = DotRule});

}  // namespace
}  // namespace tpusim::ops
