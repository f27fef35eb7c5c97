// Windowed reductions: reduce_window and select_and_scatter.
//
// Both walk, for each output position, a window of the (padded, dilated)
// input in ascending lexicographic order. reduce_window folds it left from
// the init value, padding and dilation holes reading as the init value, as
// the spec's pad-then-reduce definition gives. Bodies that are one
// elementwise op (or one compare, for select) run as typed loops.
#include "ops/reduce_window.h"

#include <algorithm>

#include "ops/kernels/region_kernels.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {

int64_t Window::InputOffset(std::span<const int64_t> out, std::span<const int64_t> w,
                            std::span<const int64_t> input_strides) const {
  int64_t flat = 0;
  for (int64_t d = 0; d < rank(); ++d) {
    const int64_t p = out[d] * strides[d] + w[d] * window_dilations[d] - pad_low[d];
    if (p < 0 || p % base_dilations[d] != 0) return -1;
    const int64_t i = p / base_dilations[d];
    if (i >= input[d]) return -1;
    flat += i * input_strides[d];
  }
  return flat;
}

ir::Shape Window::OutputShape() const {
  ir::Shape out;
  for (int64_t d = 0; d < rank(); ++d) {
    const int64_t dilated = input[d] == 0 ? 0 : (input[d] - 1) * base_dilations[d] + 1;
    const int64_t padded = pad_low[d] + dilated + pad_high[d];
    const int64_t window = (dims[d] - 1) * window_dilations[d] + 1;
    out.push_back(padded <= 0 || window > padded ? 0 : (padded - window) / strides[d] + 1);
  }
  return out;
}

StatusOr<Window> MakeWindow(ir::Shape input, std::vector<int64_t> dims,
                            std::vector<int64_t> strides, std::vector<int64_t> base_dilations,
                            std::vector<int64_t> window_dilations,
                            const std::vector<int64_t>& padding) {
  const size_t rank = input.size();
  Window w{.input = std::move(input),
           .dims = std::move(dims),
           .strides = std::move(strides),
           .base_dilations = std::move(base_dilations),
           .window_dilations = std::move(window_dilations)};
  struct Named {
    const char* name;
    const std::vector<int64_t>* v;
  };
  for (Named n : {Named{"window_dimensions", &w.dims}, Named{"window_strides", &w.strides},
                  Named{"base_dilations", &w.base_dilations},
                  Named{"window_dilations", &w.window_dilations}}) {
    if (n.v->size() != rank) {
      return InvalidArgument(std::string(n.name) + " " + FormatInts(*n.v) + " must have " +
                             std::to_string(rank) + " entries, one per input dimension");
    }
    for (int64_t x : *n.v) {
      if (x <= 0)
        return InvalidArgument(std::string(n.name) + " " + FormatInts(*n.v) + " must be > 0");
    }
  }
  if (padding.size() != 2 * rank) {
    return InvalidArgument("padding must have shape [" + std::to_string(rank) + ", 2]");
  }
  for (size_t d = 0; d < rank; ++d) {
    w.pad_low.push_back(padding[2 * d]);
    w.pad_high.push_back(padding[2 * d + 1]);
  }
  return w;
}

StatusOr<std::vector<Tensor>> ReduceWindows(const Window& w, std::span<const Tensor> in,
                                            std::vector<Tensor> results,
                                            const WindowReducer& reduce) {
  const size_t n = results.size();
  const std::vector<int64_t> in_strides = RowMajorStrides(in[0].shape());
  const ir::Shape& out_shape = results[0].shape();
  std::vector<int64_t> o(w.rank(), 0), k(w.rank(), 0);
  std::vector<Tensor> args(2 * n);
  for (int64_t r = 0, r_end = results[0].num_elements(); r < r_end;
       ++r, NextIndex(o, out_shape)) {
    for (size_t i = 0; i < n; ++i) args[i] = in[n + i];
    do {
      const int64_t at = w.InputOffset(o, k, in_strides);
      for (size_t i = 0; i < n; ++i) {
        if (at < 0) {
          args[n + i] = in[n + i];
        } else {
          TPUSIM_ASSIGN_OR_RETURN(args[n + i], ScalarAt(in[i], at));
        }
      }
      TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> acc, reduce(args));
      if (acc.size() != n)
        return InvalidArgument("the window reducer gave the wrong number of values");
      for (size_t i = 0; i < n; ++i) args[i] = std::move(acc[i]);
    } while (NextIndex(k, w.dims));
    for (size_t i = 0; i < n; ++i) {
      const int width = ir::StorageBytes(results[i].element());
      if (args[i].element() != results[i].element()) {
        return InvalidArgument("the window reducer gave " + args[i].type().ToString() +
                               " for a result of " + results[i].type().ToString());
      }
      std::memcpy(results[i].mutable_raw() + r * width, args[i].raw(), width);
    }
  }
  return results;
}

namespace {

StatusOr<Window> ReadWindow(const ir::Operation& op, const ir::Type& input) {
  const int64_t rank = input.rank();
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, GetInts(op, "window_dimensions"));
  ir::Attribute pad_attr = op.attr("padding");
  if (pad_attr && pad_attr.kind() == ir::Attribute::Kind::kDenseElements &&
      pad_attr.type().shape() != ir::Shape{rank, 2}) {
    return OpError(op, "padding must have shape [" + std::to_string(rank) + ", 2]");
  }
  StatusOr<Window> w = MakeWindow(input.shape(), dims,
                                  GetIntsOr(op, "window_strides", std::vector<int64_t>(rank, 1)),
                                  GetIntsOr(op, "base_dilations", std::vector<int64_t>(rank, 1)),
                                  GetIntsOr(op, "window_dilations", std::vector<int64_t>(rank, 1)),
                                  GetIntsOr(op, "padding", std::vector<int64_t>(2 * rank, 0)));
  if (!w.ok()) return OpError(op, w.status().message());
  return w;
}

// ---- reduce_window ----

Status VerifyReduceWindow(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_ASSIGN_OR_RETURN(const int n, CheckInputsAndInits(op));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, n));
  const ir::Type& first = op.operand(0).type();
  TPUSIM_ASSIGN_OR_RETURN(Window w, ReadWindow(op, first));
  const ir::Shape out_shape = w.OutputShape();
  std::vector<ir::ElementType> acc;
  for (int i = 0; i < n; ++i) {
    if (op.result(i).type().shape() != out_shape) {
      return OpError(op, "result " + std::to_string(i) + " has type " +
                             op.result(i).type().ToString() + ", but the window gives shape " +
                             FormatInts(out_shape));
    }
    acc.push_back(op.result(i).type().element());
  }
  std::vector<ir::ElementType> args = acc;
  args.insert(args.end(), acc.begin(), acc.end());
  return CheckScalarRegion(op, op.region(0), "body", args, acc);
}

bool TryReduceWindowFast(const ir::Operation& op, const Window& w, const Tensor& input,
                         const Tensor& init, Tensor& result) {
  std::optional<BinaryKind> kind = MatchBinaryRegion(op.region(0));
  if (!kind) return false;
  const std::vector<int64_t> in_strides = RowMajorStrides(input.shape());
  return WithBinaryKernel(input.element(), *kind, [&](auto f) {
    using S = typename decltype(f)::Storage;
    const S* in = input.data<S>();
    const S init_value = *init.data<S>();
    S* out = result.mutable_data<S>();
    std::vector<int64_t> o(w.rank(), 0), k(w.rank(), 0);
    for (int64_t r = 0, r_end = result.num_elements(); r < r_end;
         ++r, NextIndex(o, result.shape())) {
      S acc = init_value;
      do {
        const int64_t at = w.InputOffset(o, k, in_strides);
        acc = f(acc, at < 0 ? init_value : in[at]);
      } while (NextIndex(k, w.dims));
      out[r] = acc;
    }
  });
}

StatusOr<std::vector<Tensor>> EvalReduceWindow(EvalContext& ctx, const ir::Operation& op,
                                               std::span<const Tensor> in) {
  const int n = op.num_results();
  for (int i = 0; i < n; ++i) {
    if (op.result(i).type().element() != in[i].element()) {
      return Unimplemented("'stablehlo.reduce_window' with element promotion in its body");
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Window w, ReadWindow(op, in[0].type()));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> results, AllocateResults(op));
  if (n == 1 && TryReduceWindowFast(op, w, in[0], in[1], results[0])) return results;
  return ReduceWindows(w, in, std::move(results), [&](std::span<const Tensor> args) {
    return ctx.RunRegion(op.region(0), args);
  });
}

// Elements in one window, or 0 when the window attribute is unreadable.
int64_t WindowSize(const ir::Operation& op) {
  auto dims = GetInts(op, "window_dimensions");
  if (!dims.ok()) return 0;
  int64_t n = 1;
  for (int64_t d : *dims) n *= d;
  return n;
}

// The body folds in every window element of every output position (XLA
// reduces windows directly, without sharing partial sums across them).
Work ReduceWindowWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  if (op.num_results() == 0 || op.num_regions() != 1) return w;
  const ir::Type& result = op.result(0).type();
  AddRegionWork(w, op.region(0), result.num_elements() * WindowSize(op), IsFloatTensor(result));
  return w;
}

// Dimensions the window spans, strides, dilates or pads stay whole (a split
// one would need its neighbours' halo); the others may be split.
// A dimension splits with halos from the neighbours unless the input is
// dilated; windows read the init value beyond the edges.
std::optional<ShardingRule> ReduceWindowRule(const ir::Operation& op) {
  auto w = ReadWindow(op, op.operand(0).type());
  if (!w.ok()) return std::nullopt;
  std::vector<int64_t> whole;
  for (int64_t d = 0; d < w->rank(); ++d) {
    if (w->base_dilations[d] != 1) whole.push_back(d);
  }
  ShardingRule rule = PositionalShardingRule(op, whole);
  const ir::Shape out = w->OutputShape();
  const int inputs = op.num_results();
  for (int64_t d = 0; d < w->rank(); ++d) {
    const int f = rule.operands[0][d];
    if (f < 0 ||
        (w->dims[d] == 1 && w->strides[d] == 1 && w->pad_low[d] == 0 && w->pad_high[d] == 0)) {
      continue;
    }
    rule.factors[f].size = out[d];
    rule.factors[f].window =
        ShardingRule::Window{.input = w->input[d],
                             .output = out[d],
                             .size = (w->dims[d] - 1) * w->window_dilations[d] + 1,
                             .stride = w->strides[d],
                             .pad_lo = w->pad_low[d],
                             .padding_row = d};
  }
  rule.padding = "padding";
  for (int i = 0; i < inputs; ++i) rule.pad_values.push_back(inputs + i);
  return rule;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.reduce_window",
                    .verify = VerifyReduceWindow,
                    .eval = EvalReduceWindow,
                    .work = ReduceWindowWork,
                    .sharding_rule = ReduceWindowRule});

// ---- select_and_scatter ----

Status VerifySelectAndScatter(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 3));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& operand = op.operand(0).type();
  const ir::ElementType e = operand.element();
  TPUSIM_RETURN_IF_ERROR(CheckSameElement(op, "source", op.operand(1).type(), e));
  TPUSIM_RETURN_IF_ERROR(CheckSameElement(op, "init value", op.operand(2).type(), e));
  if (op.operand(2).type().rank() != 0) return OpError(op, "init value must be 0-d");
  TPUSIM_ASSIGN_OR_RETURN(Window w, ReadWindow(op, operand));
  if (w.base_dilations != std::vector<int64_t>(operand.rank(), 1) ||
      w.window_dilations != std::vector<int64_t>(operand.rank(), 1)) {
    return OpError(op, "takes no dilations");
  }
  if (op.operand(1).type().shape() != w.OutputShape()) {
    return OpError(op, "source has type " + op.operand(1).type().ToString() +
                           ", but the window gives shape " + FormatInts(w.OutputShape()));
  }
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, 0, operand));
  TPUSIM_RETURN_IF_ERROR(
      CheckScalarRegion(op, op.region(0), "select", {e, e}, {ir::ElementType::kI1}));
  return CheckScalarRegion(op, op.region(1), "scatter", {e, e}, {e});
}

// For each source position, the flat operand offset its window selects, or
// -1 for a window of padding only. `select(a, b)` keeps a when true.
template <class SelectFn>
StatusOr<std::vector<int64_t>> SelectPositions(const Window& w, const ir::Shape& source,
                                               SelectFn&& select) {
  const std::vector<int64_t> in_strides = RowMajorStrides(w.input);
  std::vector<int64_t> picked;
  picked.reserve(ir::NumElements(source));
  std::vector<int64_t> o(w.rank(), 0), k(w.rank(), 0);
  for (int64_t s = 0, s_end = ir::NumElements(source); s < s_end;
       ++s, NextIndex(o, source)) {
    int64_t best = -1;
    do {
      const int64_t at = w.InputOffset(o, k, in_strides);
      if (at < 0) continue;
      if (best < 0) {
        best = at;
        continue;
      }
      TPUSIM_ASSIGN_OR_RETURN(bool keep, select(best, at));
      if (!keep) best = at;
    } while (NextIndex(k, w.dims));
    picked.push_back(best);
  }
  return picked;
}

// SelectPositions with the select region: a typed comparison when it is one
// compare, else the region run per comparison.
StatusOr<std::vector<int64_t>> RunSelect(EvalContext& ctx, const ir::Operation& op, const Window& w,
                                         const Tensor& operand, const ir::Shape& source) {
  std::optional<CompareMatch> cmp = MatchCompareRegion(op.region(0));
  std::optional<StatusOr<std::vector<int64_t>>> fast;
  if (cmp) {
    WithCompareKernel(operand.element(), *cmp, [&](auto c) {
      using S = typename decltype(c)::Storage;
      const S* data = operand.data<S>();
      fast.emplace(SelectPositions(
          w, source, [&](int64_t a, int64_t b) -> StatusOr<bool> { return c(data[a], data[b]); }));
    });
  }
  if (fast) return std::move(*fast);
  return SelectPositions(w, source, [&](int64_t a, int64_t b) -> StatusOr<bool> {
    TPUSIM_ASSIGN_OR_RETURN(Tensor x, ScalarAt(operand, a));
    TPUSIM_ASSIGN_OR_RETURN(Tensor y, ScalarAt(operand, b));
    std::vector<Tensor> args = {std::move(x), std::move(y)};
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> r, ctx.RunRegion(op.region(0), args));
    return *r[0].data<uint8_t>() != 0;
  });
}

StatusOr<std::vector<Tensor>> EvalSelectAndScatter(EvalContext& ctx, const ir::Operation& op,
                                                   std::span<const Tensor> in) {
  const Tensor& operand = in[0];
  const Tensor& source = in[1];
  TPUSIM_ASSIGN_OR_RETURN(Window w, ReadWindow(op, operand.type()));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> picked,
                          RunSelect(ctx, op, w, operand, source.shape()));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::Allocate(operand.type()));
  FillWithScalar(r, in[2]);
  // Each result element folds the source values that selected it, in
  // source order, from the init value.
  std::optional<BinaryKind> kind = MatchBinaryRegion(op.region(1));
  if (kind && WithBinaryKernel(r.element(), *kind, [&](auto f) {
        using S = typename decltype(f)::Storage;
        const S* src = source.data<S>();
        S* out = r.mutable_data<S>();
        for (size_t s = 0; s < picked.size(); ++s) {
          if (picked[s] >= 0) out[picked[s]] = f(out[picked[s]], src[s]);
        }
      })) {
    return std::vector<Tensor>{std::move(r)};
  }
  const int width = ir::StorageBytes(r.element());
  for (size_t s = 0; s < picked.size(); ++s) {
    if (picked[s] < 0) continue;
    std::vector<Tensor> args(2);
    TPUSIM_ASSIGN_OR_RETURN(args[0], ScalarAt(r, picked[s]));
    TPUSIM_ASSIGN_OR_RETURN(args[1], ScalarAt(source, static_cast<int64_t>(s)));
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, ctx.RunRegion(op.region(1), args));
    std::memcpy(r.mutable_raw() + picked[s] * width, out[0].raw(), width);
  }
  return std::vector<Tensor>{std::move(r)};
}

// Each source element runs select over its window, then scatter once.
Work SelectAndScatterWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  if (op.num_operands() != 3 || op.num_regions() != 2) return w;
  const ir::Type& source = op.operand(1).type();
  AddRegionWork(w, op.region(0), source.num_elements() * WindowSize(op), /*is_float=*/false);
  AddRegionWork(w, op.region(1), source.num_elements(), IsFloatTensor(source));
  return w;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.select_and_scatter",
                    .verify = VerifySelectAndScatter,
                    .eval = EvalSelectAndScatter,
                    .work = SelectAndScatterWork});

}  // namespace
}  // namespace tpusim::ops
