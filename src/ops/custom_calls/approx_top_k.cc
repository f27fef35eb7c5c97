// ApproxTopK, as JAX lowers lax.approx_max_k / approx_min_k for TPU
// (jax/_src/lax/ann.py):
//   %v, %i = stablehlo.custom_call @ApproxTopK(%x, %iota, %init_v, %init_i) {
//       called_computations = [@top_k_gt_f32_comparator],
//       mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.95 : f32,
//                              reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64,
//                              top_k = 4 : i64}}
// N inputs of one shape, then N scalar init values; N results whose
// reduction dimension is k (aggregate_to_topk) or XLA's approximate output
// size. The comparator orders elements (its first two arguments the two
// first inputs' elements, and so on).
//
// tpusim computes the exact answer: each slice along the reduction
// dimension sorted by the comparator (stably), its first elements kept.
// Its recall is 1, at least any recall_target; the TPU's approximate
// result may hold other members or another order within its recall, and
// without aggregate_to_topk the TPU returns its bins' winners unsorted
// where tpusim returns the sorted best. The time is the TPU's algorithm:
// one pass over the input that keeps the best of each bin, then a sort of
// the bins' winners down to k.
#include <bit>
#include <cmath>

#include "ops/kernels/region_kernels.h"
#include "ops/sort.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops {
namespace {

struct Config {
  int64_t top_k = 0;
  int64_t reduction_dim = 0;
  double recall_target = 0.95;
  bool aggregate_to_topk = true;
  int64_t input_size_override = -1;
};

StatusOr<Config> ReadConfig(const ir::Operation& op) {
  ir::Attribute dict = op.attr("mhlo.backend_config");
  if (dict.kind() != ir::Attribute::Kind::kDict) dict = op.attr("backend_config");
  if (dict.kind() != ir::Attribute::Kind::kDict) {
    return InvalidArgument("ApproxTopK needs mhlo.backend_config = {top_k = ..., ...}");
  }
  auto integer = [&](const char* key, int64_t* out, bool required) -> Status {
    ir::Attribute a = dict.Get(key);
    if (!a && !required) return Status::Ok();
    if (a.kind() != ir::Attribute::Kind::kInt) {
      return InvalidArgument(std::string("ApproxTopK's backend_config needs an integer ") + key);
    }
    *out = a.int_value();
    return Status::Ok();
  };
  Config c;
  TPUSIM_RETURN_IF_ERROR(integer("top_k", &c.top_k, true));
  TPUSIM_RETURN_IF_ERROR(integer("reduction_dim", &c.reduction_dim, true));
  TPUSIM_RETURN_IF_ERROR(integer("reduction_input_size_override", &c.input_size_override, false));
  if (ir::Attribute r = dict.Get("recall_target")) {
    if (r.kind() != ir::Attribute::Kind::kFloat) {
      return InvalidArgument("ApproxTopK's recall_target must be a float");
    }
    c.recall_target = r.float_value();
  }
  if (ir::Attribute a = dict.Get("aggregate_to_topk")) {
    if (a.kind() != ir::Attribute::Kind::kBool) {
      return InvalidArgument("ApproxTopK's aggregate_to_topk must be a bool");
    }
    c.aggregate_to_topk = a.bool_value();
  }
  return c;
}

int FloorLog2(uint64_t v) { return v == 0 ? 0 : static_cast<int>(std::bit_width(v)) - 1; }
int CeilLog2(uint64_t v) { return v <= 1 ? 0 : FloorLog2(v - 1) + 1; }

// The size of the reduction dimension after the TPU's approximate pass, and
// how many times (log2) it halves the input: n windows of `tiling` lanes
// fold into as many bins as the recall target needs (expected recall
// exp((1 - k) / bins)). Without aggregate_to_topk this is the results' size.
struct Reduction {
  int64_t output = 0;
  int log2 = 0;
};

StatusOr<Reduction> ApproxReduction(int64_t n, int64_t rank, const Config& c) {
  const int64_t tiling = rank == 1 ? 1024 : 128;  // what one vector pass holds
  if (n <= tiling) return Reduction{n, 0};
  if (c.input_size_override >= 0 && n > c.input_size_override) {
    return InvalidArgument("reduction_input_size_override " +
                           std::to_string(c.input_size_override) +
                           " is smaller than the reduction dimension " + std::to_string(n));
  }
  const int64_t logical = c.input_size_override >= 0 ? c.input_size_override : n;
  if (c.top_k == 1) return Reduction{tiling, CeilLog2((logical + tiling - 1) / tiling)};
  if (!(c.recall_target > 0 && c.recall_target <= 1)) {
    return InvalidArgument("recall_target must be in (0, 1]");
  }
  // Bins the recall target needs; a target of 1 keeps every element.
  const double bins =
      c.recall_target >= 1 ? static_cast<double>(n) : (1.0 - c.top_k) / std::log(c.recall_target);
  const int64_t m = std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(bins), tiling), n);
  int log2 = FloorLog2(static_cast<uint64_t>(logical / m));
  if (log2 == 0) return Reduction{n, 0};
  log2 = std::min(log2, CeilLog2(static_cast<uint64_t>(n / tiling)));
  const int64_t windows = (n + tiling - 1) / tiling;
  return Reduction{((windows + (int64_t{1} << log2) - 1) >> log2) * tiling, log2};
}

StatusOr<int64_t> OutputSize(const ir::Type& input, const Config& c) {
  if (c.aggregate_to_topk) return c.top_k;
  TPUSIM_ASSIGN_OR_RETURN(Reduction r,
                          ApproxReduction(input.dim(c.reduction_dim), input.rank(), c));
  return r.output;
}

std::string Comparator(const ir::Operation& op) {
  ir::Attribute calls = op.attr("called_computations");
  if (calls.kind() != ir::Attribute::Kind::kArray || calls.array().size() != 1) return "";
  const ir::Attribute& f = calls.array()[0];
  return f.kind() == ir::Attribute::Kind::kSymbolRef ? f.str() : "";
}

Status VerifyApproxTopK(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const int n = op.num_operands() / 2;
  if (n == 0 || op.num_operands() != 2 * n) {
    return InvalidArgument("ApproxTopK takes N inputs and N init values");
  }
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, n));
  if (Comparator(op).empty()) {
    return InvalidArgument("ApproxTopK needs called_computations = [@comparator]");
  }
  TPUSIM_ASSIGN_OR_RETURN(Config c, ReadConfig(op));
  const ir::Type& first = op.operand(0).type();
  if (c.reduction_dim < 0 || c.reduction_dim >= first.rank()) {
    return InvalidArgument("reduction_dim " + std::to_string(c.reduction_dim) +
                           " is out of range for " + first.ToString());
  }
  if (c.top_k < 1 || c.top_k > first.dim(c.reduction_dim)) {
    return InvalidArgument("top_k " + std::to_string(c.top_k) + " is out of range for " +
                           first.ToString());
  }
  TPUSIM_ASSIGN_OR_RETURN(int64_t out, OutputSize(first, c));
  for (int i = 0; i < n; ++i) {
    const ir::Type& input = op.operand(i).type();
    if (input.shape() != first.shape()) {
      return InvalidArgument("inputs have different shapes: " + first.ToString() + " and " +
                             input.ToString());
    }
    if (op.operand(n + i).type() != ir::Type::Tensor(input.element(), {})) {
      return InvalidArgument("init value " + std::to_string(i) + " must be a " +
                             ir::Type::Tensor(input.element(), {}).ToString());
    }
    ir::Shape shape = input.shape();
    shape[c.reduction_dim] = out;
    TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, i, ir::Type::Tensor(input.element(), shape)));
  }
  return Status::Ok();
}

// The permutation that sorts the slice of `n` elements at `base` (step
// `stride`) by the comparator function.
StatusOr<std::vector<int64_t>> SortSlice(EvalContext& ctx, const ir::Function& cmp,
                                         std::span<const Tensor> in, int64_t base, int64_t stride,
                                         int64_t n) {
  return SortPermutation(
      cmp.body(), [&](std::span<const Tensor> args) { return ctx.Call(cmp.name(), args); }, in,
      base, stride, n);
}

StatusOr<std::vector<Tensor>> EvalApproxTopK(EvalContext& ctx, const ir::Operation& op,
                                             std::span<const Tensor> operands) {
  const std::string name = Comparator(op);
  const ir::Function* cmp = ctx.module().Lookup(name);
  if (cmp == nullptr) return NotFound("ApproxTopK's comparator @" + name + " is not defined");
  TPUSIM_ASSIGN_OR_RETURN(Config c, ReadConfig(op));
  const size_t n = operands.size() / 2;
  std::span<const Tensor> in = operands.first(n);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> results, AllocateResults(op));
  const ir::Shape& shape = in[0].shape();
  if (in[0].num_elements() == 0) return results;
  const int64_t dim = c.reduction_dim, size = shape[dim];
  const int64_t kept = results[0].shape()[dim];
  const std::vector<int64_t> strides = RowMajorStrides(shape);
  const std::vector<int64_t> out_strides = RowMajorStrides(results[0].shape());
  ir::Shape outer = shape;
  outer[dim] = 1;  // one index per slice
  std::vector<int64_t> index(shape.size(), 0);
  do {
    const int64_t base = FlatOffset(index, strides), out_base = FlatOffset(index, out_strides);
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                            SortSlice(ctx, *cmp, in, base, strides[dim], size));
    for (size_t k = 0; k < n; ++k) {
      DispatchByWidth(ir::StorageBytes(in[k].element()), [&]<typename T>() {
        const T* src = in[k].data<T>() + base;
        T* dst = results[k].mutable_data<T>() + out_base;
        for (int64_t p = 0; p < kept; ++p) dst[p * out_strides[dim]] = src[perm[p] * strides[dim]];
      });
    }
  } while (NextIndex(index, outer));
  return results;
}

// The TPU's algorithm: one pass that compares each element with its bin's
// best so far and moves the winner (a compare and a select per input), then
// a bitonic sort of each slice's bins when aggregating to k.
Work ApproxTopKWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  StatusOr<Config> c = ReadConfig(op);
  const ir::Type& t = op.operand(0).type();
  if (!c.ok() || c->reduction_dim < 0 || c->reduction_dim >= t.rank()) return w;
  const int64_t n = t.dim(c->reduction_dim);
  if (n == 0) return w;
  const int64_t slices = t.num_elements() / n, inputs = op.num_operands() / 2;
  StatusOr<Reduction> r = ApproxReduction(n, t.rank(), *c);
  const int64_t bins = r.ok() ? r->output : n;
  if (r.ok() && r->log2 > 0) w.AddVector(VectorClass::kAlu, (1 + inputs) * slices * n);
  if (c->aggregate_to_topk) {
    w.AddVector(VectorClass::kAlu, (1 + inputs) * slices * BitonicEvaluations(bins));
  }
  w.priced_as = "an approximate top-" + std::to_string(c->top_k) + " (a pass over " +
                std::to_string(n) + " elements per slice into " + std::to_string(bins) + " bins" +
                (c->aggregate_to_topk ? ", then a sort of the bins" : "") + ")";
  return w;
}

TPUSIM_REGISTER_CUSTOM_CALL({.target = "ApproxTopK",
                             .verify = VerifyApproxTopK,
                             .eval = EvalApproxTopK,
                             .work = ApproxTopKWork});

}  // namespace
}  // namespace tpusim::ops
