// Ops that fold or map a region over elements: reduce and map.
//
// reduce folds left in ascending lexicographic order of the reduced index,
// starting from the init value: body(...body(body(init, x0), x1)..., xn).
// The spec allows any schedule; this one is deterministic and matches a
// sequential reference. Bodies that are one elementwise op (JAX's `applies
// stablehlo.add`) run as typed loops; others run the region per element.
#include <algorithm>
#include <cstring>

#include "ops/kernels/region_kernels.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/parallel.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

// ---- reduce ----

std::vector<ir::ElementType> ElementsOf(const std::vector<ir::Value>& values) {
  std::vector<ir::ElementType> out;
  for (ir::Value v : values) out.push_back(v.type().element());
  return out;
}

Status VerifyReduce(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_ASSIGN_OR_RETURN(const int n, CheckInputsAndInits(op));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, n));
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "dimensions"));
  const ir::Type& first = op.operand(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckDimsInRange(op, "dimensions", dims, first.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckUnique(op, "dimensions", dims));
  ir::Shape kept;
  for (int64_t d = 0; d < first.rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(first.dim(d));
  }
  for (int i = 0; i < n; ++i) {
    if (op.result(i).type().shape() != kept) {
      return OpError(op, "result " + std::to_string(i) + " has type " +
                             op.result(i).type().ToString() + ", expected shape " +
                             FormatInts(kept));
    }
  }
  std::vector<ir::ElementType> acc = ElementsOf(op.results());
  std::vector<ir::ElementType> args = acc;
  args.insert(args.end(), acc.begin(), acc.end());
  return CheckScalarRegion(op, op.region(0), "body", args, acc);
}

// Element promotion in bodies (is_promotable) is not evaluated.
Status CheckNoPromotion(const ir::Operation& op, int n) {
  for (int i = 0; i < n; ++i) {
    if (op.result(i).type().element() != op.operand(i).type().element()) {
      return Unimplemented("'" + op.name_str() + "' with a body on " +
                           std::string(ir::ElementTypeName(op.result(i).type().element())) +
                           " over " + op.operand(i).type().ToString() +
                           " (element promotion) is not supported");
    }
  }
  return Status::Ok();
}

// A reduction's index space with size-1 dimensions dropped and neighbours of
// one kind (kept or reduced) merged: the input's strides and the result's
// (0 along reduced dimensions), in elements.
struct ReduceSpace {
  std::vector<int64_t> shape, in_strides, out_strides;
};

ReduceSpace MergedSpace(const ir::Shape& input, const std::vector<int64_t>& dims) {
  ReduceSpace r;
  std::vector<bool> reduced(input.size(), false);
  for (int64_t d : dims) reduced[d] = true;
  bool last_reduced = false;
  for (size_t d = 0; d < input.size(); ++d) {
    if (input[d] == 1) continue;
    if (!r.shape.empty() && reduced[d] == last_reduced) {
      r.shape.back() *= input[d];
    } else {
      r.shape.push_back(input[d]);
      last_reduced = reduced[d];
      r.out_strides.push_back(reduced[d] ? 0 : 1);  // kept: marked, set below
    }
  }
  // Row-major strides of the input over the merged shape, and of the result
  // over the merged kept dimensions.
  r.in_strides.assign(r.shape.size(), 1);
  for (size_t d = r.shape.size(); d-- > 1;) r.in_strides[d - 1] = r.in_strides[d] * r.shape[d];
  int64_t out = 1;
  for (size_t d = r.shape.size(); d-- > 0;) {
    if (r.out_strides[d] == 0) continue;
    r.out_strides[d] = out;
    out *= r.shape[d];
  }
  return r;
}

// out[t] = f(out[t], in[s]) over an index space in row-major order, so that
// each result element folds its inputs in ascending order of the reduced
// index. The innermost dimension runs as a tight loop: into one accumulator
// when it is reduced, elementwise over a row when it is kept.
template <class F, class S>
void FoldStrided(const ReduceSpace& r, const F& f, const S* in, S* out) {
  const size_t rank = r.shape.size();
  if (rank == 0) {
    out[0] = f(out[0], in[0]);
    return;
  }
  const size_t inner = rank - 1;
  const int64_t n = r.shape[inner];
  const bool inner_reduced = r.out_strides[inner] == 0;
  std::vector<int64_t> index(rank, 0);
  int64_t s = 0, t = 0;
  while (true) {
    if (inner_reduced) {
      S acc = out[t];
      const S* p = in + s;
      for (int64_t i = 0; i < n; ++i) acc = f(acc, p[i]);
      out[t] = acc;
    } else {
      S* __restrict o = out + t;
      const S* __restrict p = in + s;
      for (int64_t i = 0; i < n; ++i) o[i] = f(o[i], p[i]);
    }
    size_t d = inner;
    while (d-- > 0) {
      s += r.in_strides[d];
      t += r.out_strides[d];
      if (++index[d] < r.shape[d]) break;
      s -= r.in_strides[d] * r.shape[d];
      t -= r.out_strides[d] * r.shape[d];
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

// The kept dimension to split among threads: the outermost one long enough
// for each thread to take a part, else the longest; -1 if none is kept.
int SplitDimension(const ReduceSpace& r) {
  int best = -1;
  for (size_t d = 0; d < r.shape.size(); ++d) {
    if (r.out_strides[d] == 0) continue;
    if (r.shape[d] >= 8) return static_cast<int>(d);
    if (best < 0 || r.shape[d] > r.shape[best]) best = static_cast<int>(d);
  }
  return best;
}

// The typed fold for a single-input reduce whose body is one binary op;
// false if there is no kernel for it. Threads take disjoint ranges of one
// kept dimension: every result element is folded by one thread, in the
// serial order.
bool TryReduceFast(const ir::Operation& op, const Tensor& input, Tensor& result,
                   const std::vector<int64_t>& dims) {
  std::optional<BinaryKind> kind = MatchBinaryRegion(op.region(0));
  if (!kind) return false;
  const ReduceSpace space = MergedSpace(input.shape(), dims);
  const int64_t total = input.num_elements();
  return WithBinaryKernel(input.element(), *kind, [&](auto f) {
    using S = typename decltype(f)::Storage;
    const S* in = input.data<S>();
    S* out = result.mutable_data<S>();
    if (total == 0) return;
    const int split = SplitDimension(space);
    if (split < 0) {
      FoldStrided(space, f, in, out);
      return;
    }
    const int64_t extent = space.shape[split];
    const int64_t per_index = total / extent;
    ParallelFor(extent, std::max<int64_t>(1, kParallelElements / per_index),
                [&](int64_t b, int64_t e) {
                  ReduceSpace part = space;
                  part.shape[split] = e - b;
                  FoldStrided(part, f, in + b * space.in_strides[split],
                              out + b * space.out_strides[split]);
                });
  });
}

StatusOr<std::vector<Tensor>> EvalReduce(EvalContext& ctx, const ir::Operation& op,
                                         std::span<const Tensor> in) {
  const int n = op.num_results();
  TPUSIM_RETURN_IF_ERROR(CheckNoPromotion(op, n));
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "dimensions"));
  std::vector<Tensor> results(n);
  for (int i = 0; i < n; ++i) {
    TPUSIM_ASSIGN_OR_RETURN(results[i], Tensor::AllocateUninitialized(op.result(i).type()));
    FillWithScalar(results[i], in[n + i]);
  }
  if (n == 1 && TryReduceFast(op, in[0], results[0], dims)) return results;

  // General path: for each result element, fold its inputs through the body.
  const ir::Shape& shape = in[0].shape();
  const std::vector<int64_t> in_strides = RowMajorStrides(shape);
  ir::Shape reduced_shape;
  std::vector<int64_t> reduced_strides, kept_strides;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end()) {
      reduced_shape.push_back(shape[d]);
      reduced_strides.push_back(in_strides[d]);
    } else {
      kept_strides.push_back(in_strides[d]);
    }
  }
  if (ir::NumElements(reduced_shape) == 0) return results;
  const ir::Shape& out_shape = results[0].shape();
  std::vector<int64_t> out_index(out_shape.size(), 0), red_index(reduced_shape.size(), 0);
  std::vector<Tensor> args(2 * n);
  for (int64_t o = 0, n_out = results[0].num_elements(); o < n_out;
       ++o, NextIndex(out_index, out_shape)) {
    const int64_t base = FlatOffset(out_index, kept_strides);
    for (int i = 0; i < n; ++i) {
      TPUSIM_ASSIGN_OR_RETURN(args[i], ScalarAt(results[i], o));
    }
    do {
      const int64_t at = base + FlatOffset(red_index, reduced_strides);
      for (int i = 0; i < n; ++i) {
        TPUSIM_ASSIGN_OR_RETURN(args[n + i], ScalarAt(in[i], at));
      }
      TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> acc, ctx.RunRegion(op.region(0), args));
      for (int i = 0; i < n; ++i) args[i] = std::move(acc[i]);
    } while (NextIndex(red_index, reduced_shape));
    for (int i = 0; i < n; ++i) {
      const int w = ir::StorageBytes(results[i].element());
      std::memcpy(results[i].mutable_raw() + o * w, args[i].raw(), w);
    }
  }
  return results;
}

// The body folds in every input element once.
Work ReduceWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  if (op.num_operands() == 0 || op.num_regions() != 1) return w;
  const ir::Type& input = op.operand(0).type();
  AddRegionWork(w, op.region(0), input.num_elements(), IsFloatTensor(input));
  return w;
}

// Kept dimensions are shared with the result; reduced ones are reductions.
// Partial results combine across devices when folding the init value in
// more than once changes nothing: max/min/and/or, or add from zero.
std::optional<ShardingRule> ReduceRule(const ir::Operation& op) {
  if (op.num_operands() != 2 || op.num_regions() != 1) return std::nullopt;
  auto dims = GetInts(op, "dimensions");
  if (!dims.ok()) return std::nullopt;
  ShardingRule rule;
  std::vector<int> in, out;
  const ir::Shape& shape = op.operand(0).type().shape();
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    in.push_back(rule.Add(shape[d]));
    if (std::find(dims->begin(), dims->end(), d) == dims->end()) out.push_back(in.back());
  }
  rule.operands = {in, {}};  // the init value is a scalar
  rule.results = {out};
  rule.pad_values = {1};
  const std::string body = CombinerOf(op.region(0));
  if (body == "stablehlo.maximum" || body == "stablehlo.minimum" || body == "stablehlo.and" ||
      body == "stablehlo.or" || (body == "stablehlo.add" && IsZeroConstant(op.operand(1)))) {
    rule.combiner = body;
  }
  return rule;
}

// Each result: the first input's shape without `dimensions`.
StatusOr<std::vector<ir::Type>> InferReduce(const ir::Operation& op, Values) {
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  if (op.num_operands() == 0) return OpError(op, "needs inputs");
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "dimensions"));
  const ir::Type& first = op.operand(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckDimsInRange(op, "dimensions", dims, first.rank()));
  ir::Shape kept;
  for (int64_t d = 0; d < first.rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(first.dim(d));
  }
  std::vector<ir::Type> types;
  for (ir::Value r : op.results()) types.push_back(ir::Type::Tensor(r.type().element(), kept));
  return types;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.reduce",
                    .verify = VerifyReduce,
                    .infer = InferReduce,
                    .eval = EvalReduce,
                    .work = ReduceWork,
                    .sharding_rule = ReduceRule});

// ---- map: result[i] = computation(inputs...[i]) ----

Status VerifyMap(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  if (op.num_operands() == 0) return OpError(op, "needs at least one input");
  const ir::Type& result = op.result(0).type();
  for (int i = 0; i < op.num_operands(); ++i) {
    if (op.operand(i).type().shape() != result.shape()) {
      return OpError(op, "input " + std::to_string(i) + " has type " +
                             op.operand(i).type().ToString() + ", expected the shape of " +
                             result.ToString());
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(auto dims, GetInts(op, "dimensions"));
  for (int64_t d = 0; d < result.rank(); ++d) {
    if (static_cast<int64_t>(dims.size()) != result.rank() || dims[d] != d) {
      return OpError(op, "dimensions " + FormatInts(dims) + " must be [0, ..., rank - 1]");
    }
  }
  return CheckScalarRegion(op, op.region(0), "computation",
                           ElementsOf(op.operands()), {result.element()});
}

StatusOr<std::vector<Tensor>> EvalMap(EvalContext& ctx, const ir::Operation& op,
                                      std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::Allocate(op.result(0).type()));
  const int64_t n = r.num_elements();
  std::optional<BinaryKind> kind = MatchBinaryRegion(op.region(0));
  if (kind && in.size() == 2 && in[0].element() == r.element() &&
      WithBinaryKernel(r.element(), *kind, [&](auto f) {
        using S = typename decltype(f)::Storage;
        const S* a = in[0].data<S>();
        const S* b = in[1].data<S>();
        S* out = r.mutable_data<S>();
        for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
      })) {
    return std::vector<Tensor>{std::move(r)};
  }
  const int w = ir::StorageBytes(r.element());
  std::vector<Tensor> args(in.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < in.size(); ++k) {
      TPUSIM_ASSIGN_OR_RETURN(args[k], ScalarAt(in[k], i));
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, ctx.RunRegion(op.region(0), args));
    std::memcpy(r.mutable_raw() + i * w, out[0].raw(), w);
  }
  return std::vector<Tensor>{std::move(r)};
}

// The computation runs once per result element.
Work MapWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  if (op.num_results() != 1 || op.num_regions() != 1) return w;
  const ir::Type& result = op.result(0).type();
  AddRegionWork(w, op.region(0), result.num_elements(), IsFloatTensor(result));
  return w;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.map",
                    .verify = VerifyMap,
                    .infer = InferElementwise,
                    .eval = EvalMap,
                    .work = MapWork});

}  // namespace
}  // namespace tpusim::ops
