// stablehlo.sort: sorts 1-d slices of several tensors together by a
// comparator region. The sort is always stable (which is_stable = false
// permits). A comparator that is one compare of the first two arguments runs
// as a typed comparison; others run the region per comparison.
#include "ops/sort.h"

#include <algorithm>

#include "ops/kernels/region_kernels.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

Status VerifySort(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  if (op.num_operands() == 0) return OpError(op, "needs at least one input");
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, op.num_operands()));
  const ir::Type& first = op.operand(0).type();
  std::vector<ir::ElementType> args;
  for (int i = 0; i < op.num_operands(); ++i) {
    const ir::Type& t = op.operand(i).type();
    if (t.shape() != first.shape()) {
      return OpError(op,
                     "inputs have different shapes: " + first.ToString() + " and " + t.ToString());
    }
    TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, i, t));
    args.push_back(t.element());
    args.push_back(t.element());
  }
  const int64_t dim = GetIntOr(op, "dimension", -1);
  if (dim < -first.rank() || dim >= first.rank()) {
    return OpError(op,
                   "dimension " + std::to_string(dim) + " is out of range for " + first.ToString());
  }
  return CheckScalarRegion(op, op.region(0), "comparator", args, {ir::ElementType::kI1});
}

// Sorts the slice of `n` elements at `base` with step `stride` and returns
// the permutation: position p of the result takes element perm[p].
StatusOr<std::vector<int64_t>> SortSlice(EvalContext& ctx, const ir::Operation& op,
                                         std::span<const Tensor> in, int64_t base, int64_t stride,
                                         int64_t n) {
  return SortPermutation(
      op.region(0), [&](std::span<const Tensor> args) { return ctx.RunRegion(op.region(0), args); },
      in, base, stride, n);
}

StatusOr<std::vector<Tensor>> EvalSort(EvalContext& ctx, const ir::Operation& op,
                                       std::span<const Tensor> in) {
  const ir::Shape& shape = in[0].shape();
  const int64_t rank = in[0].rank();
  int64_t dim = GetIntOr(op, "dimension", -1);
  if (dim < 0) dim += rank;
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> results, AllocateResults(op));
  if (in[0].num_elements() == 0) return results;
  const std::vector<int64_t> strides = RowMajorStrides(shape);
  const int64_t n = shape[dim], stride = strides[dim];
  ir::Shape outer = shape;
  outer[dim] = 1;  // one index per slice
  std::vector<int64_t> index(rank, 0);
  do {
    const int64_t base = FlatOffset(index, strides);
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> perm, SortSlice(ctx, op, in, base, stride, n));
    for (size_t k = 0; k < in.size(); ++k) {
      DispatchByWidth(ir::StorageBytes(in[k].element()), [&]<typename T>() {
        const T* src = in[k].data<T>() + base;
        T* dst = results[k].mutable_data<T>() + base;
        for (int64_t p = 0; p < n; ++p) dst[p * stride] = src[perm[p] * stride];
      });
    }
  } while (NextIndex(index, outer));
  return results;
}

// A bitonic sort of every row: each comparator evaluation runs the region,
// then one select per input moves the winners.
Work SortWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  const ir::Type& t = op.operand(0).type();
  int64_t dim = GetIntOr(op, "dimension", -1);
  if (dim < 0) dim += t.rank();
  if (dim < 0 || dim >= t.rank() || t.dim(dim) == 0) return w;
  const int64_t evaluations = t.num_elements() / t.dim(dim) * BitonicEvaluations(t.dim(dim));
  AddRegionWork(w, op.region(0), evaluations, /*is_float=*/false);  // compares, not FLOPs
  w.AddVector(VectorClass::kAlu, evaluations * op.num_operands());
  return w;
}

std::optional<ShardingRule> SortRule(const ir::Operation& op) {
  return PositionalShardingRule(op, {GetIntOr(op, "dimension", -1)});
}

TPUSIM_REGISTER_OP({.name = "stablehlo.sort",
                    .verify = VerifySort,
                    .infer = InferSameAsOperands,
                    .eval = EvalSort,
                    .work = SortWork,
                    .sharding_rule = SortRule});

}  // namespace
StatusOr<std::vector<int64_t>> SortPermutation(const ir::Region& cmp, const RunComparator& run,
                                               std::span<const Tensor> in, int64_t base,
                                               int64_t stride, int64_t n) {
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  std::optional<CompareMatch> match = MatchCompareRegion(cmp);
  if (match && WithCompareKernel(in[0].element(), *match, [&](auto c) {
        using S = typename decltype(c)::Storage;
        const S* x = in[0].data<S>() + base;
        StableSort(perm, [&](int64_t a, int64_t b) { return c(x[a * stride], x[b * stride]); });
      })) {
    return perm;
  }
  // Each input's elements as 0-d tensors, made once per slice rather than
  // once per comparison.
  std::vector<std::vector<Tensor>> scalars(in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    for (int64_t i = 0; i < n; ++i) {
      TPUSIM_ASSIGN_OR_RETURN(Tensor s, ScalarAt(in[k], base + i * stride));
      scalars[k].push_back(std::move(s));
    }
  }
  Status status;
  std::vector<Tensor> args(2 * in.size());
  StableSort(perm, [&](int64_t a, int64_t b) {
    if (!status.ok()) return false;
    for (size_t k = 0; k < in.size(); ++k) {
      args[2 * k] = scalars[k][a];
      args[2 * k + 1] = scalars[k][b];
    }
    StatusOr<std::vector<Tensor>> r = run(args);
    if (!r.ok()) {
      status = r.status();
      return false;
    }
    return *(*r)[0].data<uint8_t>() != 0;
  });
  TPUSIM_RETURN_IF_ERROR(status);
  return perm;
}

}  // namespace tpusim::ops
