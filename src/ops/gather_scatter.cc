// gather, dynamic_gather and scatter: slices of an operand addressed by a
// tensor of start indices, with operand/indices batching dimensions.
//
// gather clamps each slice's start so that the slice lies inside the operand
// and copies it with one planned StridedCopier. scatter does not clamp: each
// update element whose target index is out of bounds is skipped, as the spec
// says. scatter's update_computation runs per element, except for the
// common bodies (one elementwise op, or "return the update") which run as
// typed loops.
#include <algorithm>

#include "ops/kernels/region_kernels.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/parallel.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Reads start index vectors out of an index tensor. A batch position is an
// index of the tensor's dimensions other than index_vector_dim.
class IndexReader {
 public:
  IndexReader(const Tensor& indices, int64_t index_vector_dim)
      : values_(IndexValues(indices)),
        strides_(RowMajorStrides(indices.shape())),
        ivd_(index_vector_dim),
        rank_(indices.rank()) {}

  // The start vector of `count` entries at `batch`.
  void Read(std::span<const int64_t> batch, int64_t count, std::vector<int64_t>& out) const {
    int64_t base = 0;
    for (size_t j = 0; j < batch.size(); ++j) {
      const int64_t d = static_cast<int64_t>(j) < ivd_ ? j : j + 1;
      base += batch[j] * strides_[d];
    }
    out.resize(count);
    const int64_t step = ivd_ < rank_ ? strides_[ivd_] : 0;
    for (int64_t k = 0; k < count; ++k) out[k] = values_[base + k * step];
  }

  // The batch position's entry for an indices batching dimension.
  int64_t BatchEntry(std::span<const int64_t> batch, int64_t indices_dim) const {
    return batch[indices_dim < ivd_ ? indices_dim : indices_dim - 1];
  }

 private:
  std::vector<int64_t> values_;
  std::vector<int64_t> strides_;
  int64_t ivd_;
  int64_t rank_;
};

// Dimension numbers shared by gather and scatter, in gather's terms:
// scatter's update_window_dims are offset_dims, inserted_window_dims are
// collapsed_slice_dims, scatter_dims_to_operand_dims is start_index_map.
struct DimNumbers {
  std::vector<int64_t> offset_dims, collapsed, operand_batching, indices_batching, index_map;
  int64_t index_vector_dim = 0;
};

StatusOr<DimNumbers> ReadDimNumbers(const ir::Operation& op, std::string_view attr,
                                    bool scatter) {
  ir::Attribute a = op.attr(attr);
  if (!a || a.kind() != ir::Attribute::Kind::kStruct) {
    return OpError(op, "needs a struct attribute '" + std::string(attr) + "'");
  }
  auto ints = [&](const char* name) { return a.Get(name).AsInts(); };
  DimNumbers n;
  n.offset_dims = ints(scatter ? "update_window_dims" : "offset_dims");
  n.collapsed = ints(scatter ? "inserted_window_dims" : "collapsed_slice_dims");
  n.operand_batching = ints(scatter ? "input_batching_dims" : "operand_batching_dims");
  n.indices_batching =
      ints(scatter ? "scatter_indices_batching_dims" : "start_indices_batching_dims");
  n.index_map = ints(scatter ? "scatter_dims_to_operand_dims" : "start_index_map");
  ir::Attribute ivd = a.Get("index_vector_dim");
  n.index_vector_dim = ivd && ivd.kind() == ir::Attribute::Kind::kInt ? ivd.int_value() : 0;
  return n;
}

// The constraints gather (C1-C21) and scatter (C2, C7-C22) share, in
// gather's names. `operand` is gather's operand or scatter's inputs[0].
Status CheckDimNumbers(const ir::Operation& op, const DimNumbers& n, const ir::Type& operand,
                       const ir::Type& indices, int64_t offset_rank) {
  const int64_t rank = operand.rank();
  if (!ir::IsInteger(indices.element())) {
    return OpError(op, "indices must have an integer type, got " + indices.ToString());
  }
  if (rank != static_cast<int64_t>(n.offset_dims.size() + n.collapsed.size() +
                                    n.operand_batching.size())) {
    return OpError(op, "operand rank " + std::to_string(rank) +
                           " must equal the number of window, collapsed and batching dims");
  }
  if (n.index_vector_dim < 0 || n.index_vector_dim > indices.rank()) {
    return OpError(op, "index_vector_dim " + std::to_string(n.index_vector_dim) +
                           " is out of range for " + indices.ToString());
  }
  const int64_t count = n.index_vector_dim < indices.rank() ? indices.dim(n.index_vector_dim) : 1;
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "index map", n.index_map, count));
  TPUSIM_RETURN_IF_ERROR(CheckUnique(op, "offset/window dims", n.offset_dims));
  TPUSIM_RETURN_IF_ERROR(CheckSorted(op, "offset/window dims", n.offset_dims));
  TPUSIM_RETURN_IF_ERROR(CheckDimsInRange(op, "offset/window dims", n.offset_dims, offset_rank));
  std::vector<int64_t> both = n.collapsed;
  both.insert(both.end(), n.operand_batching.begin(), n.operand_batching.end());
  TPUSIM_RETURN_IF_ERROR(CheckUnique(op, "collapsed and operand batching dims", both));
  TPUSIM_RETURN_IF_ERROR(CheckSorted(op, "collapsed dims", n.collapsed));
  TPUSIM_RETURN_IF_ERROR(CheckSorted(op, "operand batching dims", n.operand_batching));
  TPUSIM_RETURN_IF_ERROR(CheckDimsInRange(op, "collapsed/batching dims", both, rank));
  TPUSIM_RETURN_IF_ERROR(CheckUnique(op, "indices batching dims", n.indices_batching));
  TPUSIM_RETURN_IF_ERROR(
      CheckDimsInRange(op, "indices batching dims", n.indices_batching, indices.rank()));
  if (Contains(n.indices_batching, n.index_vector_dim)) {
    return OpError(op, "index_vector_dim must not be an indices batching dim");
  }
  if (n.indices_batching.size() != n.operand_batching.size()) {
    return OpError(op, "needs as many indices batching dims as operand batching dims");
  }
  for (size_t i = 0; i < n.operand_batching.size(); ++i) {
    if (operand.dim(n.operand_batching[i]) != indices.dim(n.indices_batching[i])) {
      return OpError(op, "operand and indices batching dims have different sizes");
    }
  }
  std::vector<int64_t> mapped = n.index_map;
  mapped.insert(mapped.end(), n.operand_batching.begin(), n.operand_batching.end());
  TPUSIM_RETURN_IF_ERROR(CheckUnique(op, "index map and operand batching dims", mapped));
  return CheckDimsInRange(op, "index map", n.index_map, rank);
}

// Shape of the batch positions: the indices' shape without index_vector_dim.
ir::Shape BatchShape(const ir::Shape& indices, int64_t index_vector_dim) {
  ir::Shape s;
  for (int64_t d = 0; d < static_cast<int64_t>(indices.size()); ++d) {
    if (d != index_vector_dim) s.push_back(indices[d]);
  }
  return s;
}

// Operand dims that a slice keeps (neither collapsed nor batching), in order.
std::vector<int64_t> WindowOperandDims(const DimNumbers& n, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(n.collapsed, d) && !Contains(n.operand_batching, d)) out.push_back(d);
  }
  return out;
}

// ---- gather ----

// The shape of a gather's result; -1 where the dimension numbers do not
// account for a result dimension (CheckDimNumbers rejects those).
ir::Shape GatherShape(const DimNumbers& n, const ir::Type& operand, const ir::Type& indices,
                      const std::vector<int64_t>& slice_sizes) {
  const ir::Shape batch = BatchShape(indices.shape(), n.index_vector_dim);
  const std::vector<int64_t> window = WindowOperandDims(n, operand.rank());
  ir::Shape shape;
  size_t b = 0, o = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(batch.size() + window.size()); ++d) {
    if (Contains(n.offset_dims, d)) {
      shape.push_back(o < window.size() ? slice_sizes[window[o]] : -1);
      ++o;
    } else {
      shape.push_back(b < batch.size() ? batch[b] : -1);
      ++b;
    }
  }
  return shape;
}

// gather's shape rule (C1-C23) with `slice_sizes` from the attribute or,
// for dynamic_gather, from the operand's run-time value.
Status CheckGather(const ir::Operation& op, const DimNumbers& n,
                   const std::vector<int64_t>& slice_sizes) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& operand = op.operand(0).type();
  const ir::Type& indices = op.operand(1).type();
  const ir::Type& result = op.result(0).type();
  TPUSIM_RETURN_IF_ERROR(CheckDimNumbers(op, n, operand, indices, result.rank()));
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "slice_sizes", slice_sizes, operand.rank()));
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand.dim(d)) {
      return OpError(op, "slice_sizes " + FormatInts(slice_sizes) + " must be within " +
                             operand.ToString());
    }
    if ((Contains(n.collapsed, d) || Contains(n.operand_batching, d)) && slice_sizes[d] > 1) {
      return OpError(op, "slice size of collapsed or batching dim " + std::to_string(d) +
                             " must be at most 1");
    }
  }
  return ExpectResultType(
      op, 0, ir::Type::Tensor(operand.element(), GatherShape(n, operand, indices, slice_sizes)));
}

// gather's and dynamic_gather's result types, for refine-shapes: slice_sizes
// from the attribute or from the operand's value known before the run.
StatusOr<std::vector<ir::Type>> InferGather(const ir::Operation& op, Values values) {
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, 2));
  TPUSIM_ASSIGN_OR_RETURN(DimNumbers n, ReadDimNumbers(op, "dimension_numbers", false));
  std::vector<int64_t> sizes;
  if (op.name_str() == "stablehlo.dynamic_gather") {
    TPUSIM_ASSIGN_OR_RETURN(sizes, KnownShapeOperand(op, values, 2, "slice_sizes"));
  } else {
    TPUSIM_ASSIGN_OR_RETURN(sizes, GetInts(op, "slice_sizes"));
  }
  const ir::Type& operand = op.operand(0).type();
  const ir::Type& indices = op.operand(1).type();
  TPUSIM_RETURN_IF_ERROR(CheckDimNumbers(op, n, operand, indices, op.result(0).type().rank()));
  TPUSIM_RETURN_IF_ERROR(CheckSize(op, "slice_sizes", sizes, operand.rank()));
  return OneResult(op, GatherShape(n, operand, indices, sizes));
}

// gather's value. REQUIRES: CheckGather passed for these slice sizes.
StatusOr<Tensor> Gather(const Tensor& operand, const Tensor& indices, const DimNumbers& n,
                        const std::vector<int64_t>& slice_sizes, const ir::Type& type) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::AllocateUninitialized(type));
  if (r.num_elements() == 0) return r;
  if (operand.num_elements() == 0) {
    // Only a size-0 collapsed slice of an empty operand gets here; the
    // spec's operand index would be out of bounds.
    return InvalidArgument("'stablehlo.gather' reads elements of an empty operand " +
                           operand.type().ToString());
  }
  const std::vector<int64_t> op_strides = RowMajorStrides(operand.shape());
  const std::vector<int64_t> r_strides = RowMajorStrides(r.shape());
  const std::vector<int64_t> window = WindowOperandDims(n, operand.rank());
  ir::Shape slice_shape;
  std::vector<int64_t> src_strides, dst_strides, batch_dst_strides;
  for (int64_t d : window) {
    slice_shape.push_back(slice_sizes[d]);
    src_strides.push_back(op_strides[d]);
  }
  for (int64_t d = 0; d < r.rank(); ++d) {
    (Contains(n.offset_dims, d) ? dst_strides : batch_dst_strides).push_back(r_strides[d]);
  }
  const int w = ir::StorageBytes(r.element());
  const StridedCopier copy(w, slice_shape, src_strides, dst_strides);
  const IndexReader reader(indices, n.index_vector_dim);
  const ir::Shape batch_shape = BatchShape(indices.shape(), n.index_vector_dim);
  // Each batch position writes its own slice of the result: threads take
  // ranges of positions.
  const int64_t positions = ir::NumElements(batch_shape);
  const int64_t slice_bytes = std::max<int64_t>(1, copy.num_elements() * w);
  ParallelFor(positions, std::max<int64_t>(1, (int64_t{1} << 18) / slice_bytes),
              [&](int64_t begin, int64_t end) {
                std::vector<int64_t> batch(batch_shape.size(), 0), start;
                for (int64_t rest = begin, d = static_cast<int64_t>(batch.size()); d-- > 0;) {
                  batch[d] = rest % batch_shape[d];
                  rest /= batch_shape[d];
                }
                for (int64_t p = begin; p < end; ++p, NextIndex(batch, batch_shape)) {
                  reader.Read(batch, static_cast<int64_t>(n.index_map.size()), start);
                  int64_t src = 0;
                  for (size_t k = 0; k < n.index_map.size(); ++k) {
                    const int64_t d = n.index_map[k];
                    src += std::clamp<int64_t>(start[k], 0, operand.shape()[d] - slice_sizes[d]) *
                           op_strides[d];
                  }
                  for (size_t i = 0; i < n.operand_batching.size(); ++i) {
                    src += reader.BatchEntry(batch, n.indices_batching[i]) *
                           op_strides[n.operand_batching[i]];
                  }
                  copy.Run(operand.raw() + src * w,
                           r.mutable_raw() + FlatOffset(batch, batch_dst_strides) * w);
                }
              });
  return r;
}

Status VerifyGather(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 2));
  TPUSIM_ASSIGN_OR_RETURN(DimNumbers n, ReadDimNumbers(op, "dimension_numbers", false));
  TPUSIM_ASSIGN_OR_RETURN(auto slice_sizes, GetInts(op, "slice_sizes"));
  return CheckGather(op, n, slice_sizes);
}

StatusOr<std::vector<Tensor>> EvalGather(EvalContext&, const ir::Operation& op,
                                         std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(DimNumbers n, ReadDimNumbers(op, "dimension_numbers", false));
  TPUSIM_ASSIGN_OR_RETURN(auto slice_sizes, GetInts(op, "slice_sizes"));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Gather(in[0], in[1], n, slice_sizes, op.result(0).type()));
  return std::vector<Tensor>{std::move(r)};
}

// A gather result or scatter update as `count` slices of `elements` each:
// its offset (window) dims form a slice, the others index slices.
struct Slices {
  int64_t count = 1, elements = 1;
};

Slices SlicesOf(const ir::Type& windowed, const std::vector<int64_t>& offset_dims) {
  Slices s;
  for (int64_t d = 0; d < windowed.rank(); ++d) {
    (Contains(offset_dims, d) ? s.elements : s.count) *= windowed.dim(d);
  }
  return s;
}

// One DMA per gathered slice; the operand is never read whole.
Work GatherWork(const ir::Operation& op) {
  Work w;
  w.reads.push_back(op.operand(1).type());
  w.writes.push_back(op.result(0).type());
  auto n = ReadDimNumbers(op, "dimension_numbers", false);
  if (!n.ok()) return w;
  const ir::Type& result = op.result(0).type();
  const Slices slices = SlicesOf(result, n->offset_dims);
  w.random_accesses = slices.count;
  w.random_access_bytes = LogicalBytes(ir::Type::Tensor(result.element(), {slices.elements}));
  return w;
}

// Each index (an indices dimension but the index vector) may be split with
// the result dimension it fills, and with the operand's batching dimension
// it pairs with; a window dimension may be split with its result offset
// dimension where the window takes the operand's whole dimension and no
// index points into it.
std::optional<ShardingRule> GatherRule(const ir::Operation& op) {
  auto n = ReadDimNumbers(op, "dimension_numbers", false);
  auto sizes = GetInts(op, "slice_sizes");
  if (!n.ok() || !sizes.ok()) return std::nullopt;
  const ir::Type& operand = op.operand(0).type();
  const ir::Type& indices = op.operand(1).type();
  const ir::Type& result = op.result(0).type();
  ShardingRule rule;
  rule.operands = {std::vector<int>(operand.rank(), -1), std::vector<int>(indices.rank(), -1)};
  rule.results = {std::vector<int>(result.rank(), -1)};
  std::vector<int64_t> batch_positions;
  for (int64_t d = 0; d < result.rank(); ++d) {
    if (!Contains(n->offset_dims, d)) batch_positions.push_back(d);
  }
  size_t b = 0;
  for (int64_t d = 0; d < indices.rank() && b < batch_positions.size(); ++d) {
    if (d == n->index_vector_dim) continue;
    const int f = rule.Add(indices.dim(d));
    rule.operands[1][d] = rule.results[0][batch_positions[b++]] = f;
    for (size_t k = 0; k < n->indices_batching.size(); ++k) {
      if (n->indices_batching[k] == d) rule.operands[0][n->operand_batching[k]] = f;
    }
  }
  size_t o = 0;
  for (int64_t d = 0; d < operand.rank() && o < n->offset_dims.size(); ++d) {
    if (Contains(n->collapsed, d) || Contains(n->operand_batching, d)) continue;
    const bool whole = Contains(n->index_map, d) || (*sizes)[d] != operand.dim(d);
    rule.operands[0][d] = rule.results[0][n->offset_dims[o++]] = rule.Add(operand.dim(d), !whole);
  }
  rule.local_sizes = {"slice_sizes"};
  return rule;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.gather",
                    .verify = VerifyGather,
                    .infer = InferGather,
                    .eval = EvalGather,
                    .work = GatherWork,
                    .sharding_rule = GatherRule});

// dynamic_gather: slice_sizes is an operand, checked against the result
// type once its value is known.
Status VerifyDynamicGather(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 3));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& sizes = op.operand(2).type();
  if (sizes.rank() != 1 || !ir::IsInteger(sizes.element()) ||
      sizes.dim(0) != op.operand(0).type().rank()) {
    return OpError(op, "slice_sizes must be a 1-d integer tensor with one entry per operand dim");
  }
  return ReadDimNumbers(op, "dimension_numbers", false).status();
}

StatusOr<std::vector<Tensor>> EvalDynamicGather(EvalContext&, const ir::Operation& op,
                                                std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(DimNumbers n, ReadDimNumbers(op, "dimension_numbers", false));
  const std::vector<int64_t> slice_sizes = IndexValues(in[2]);
  TPUSIM_RETURN_IF_ERROR(CheckGather(op, n, slice_sizes));
  TPUSIM_ASSIGN_OR_RETURN(Tensor r, Gather(in[0], in[1], n, slice_sizes, op.result(0).type()));
  return std::vector<Tensor>{std::move(r)};
}

TPUSIM_REGISTER_OP({.name = "stablehlo.dynamic_gather",
                    .verify = VerifyDynamicGather,
                    .infer = InferGather,
                    .eval = EvalDynamicGather,
                    .work = GatherWork});

// ---- scatter ----

Status VerifyScatter(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const int n = (op.num_operands() - 1) / 2;
  if (n == 0 || op.num_operands() != 2 * n + 1) {
    return OpError(op, "needs inputs, scatter indices and as many updates as inputs");
  }
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, n));
  TPUSIM_ASSIGN_OR_RETURN(DimNumbers dn, ReadDimNumbers(op, "scatter_dimension_numbers", true));
  const ir::Type& input = op.operand(0).type();
  const ir::Type& indices = op.operand(n).type();
  const ir::Type& update = op.operand(n + 1).type();
  TPUSIM_RETURN_IF_ERROR(CheckDimNumbers(op, dn, input, indices, update.rank()));
  std::vector<ir::ElementType> elements;
  for (int i = 0; i < n; ++i) {
    const ir::Type& in_i = op.operand(i).type();
    const ir::Type& up_i = op.operand(n + 1 + i).type();
    if (in_i.shape() != input.shape() || up_i.shape() != update.shape() ||
        up_i.element() != in_i.element()) {
      return OpError(op, "inputs must share one shape, updates another, and input " +
                             std::to_string(i) + " and update " + std::to_string(i) +
                             " one element type");
    }
    if (op.result(i).type().shape() != input.shape()) {
      return OpError(op, "result " + std::to_string(i) + " must have the shape of the inputs");
    }
    elements.push_back(op.result(i).type().element());
  }
  const ir::Shape batch = BatchShape(indices.shape(), dn.index_vector_dim);
  const std::vector<int64_t> window = WindowOperandDims(dn, input.rank());
  if (update.rank() != static_cast<int64_t>(batch.size() + window.size())) {
    return OpError(op, "updates " + update.ToString() + " must have rank " +
                           std::to_string(batch.size() + window.size()));
  }
  size_t b = 0, o = 0;
  for (int64_t d = 0; d < update.rank(); ++d) {
    const bool ok = Contains(dn.offset_dims, d) ? update.dim(d) <= input.dim(window[o++])
                                               : update.dim(d) == batch[b++];
    if (!ok) {
      return OpError(op, "updates " + update.ToString() + " do not match the scatter indices " +
                             indices.ToString() + " and inputs " + input.ToString());
    }
  }
  std::vector<ir::ElementType> args = elements;
  args.insert(args.end(), elements.begin(), elements.end());
  return CheckScalarRegion(op, op.region(0), "update_computation", args, elements);
}

// Calls fn(result_offset, update_offset) (flat, in elements) for every
// update element whose target lies inside the inputs, in row-major order
// of the update's scatter dims, then its window dims. Stops at an error.
template <class Fn>
Status ForEachScatterTarget(const ir::Shape& input, const Tensor& indices, const ir::Shape& update,
                            const DimNumbers& dn, Fn&& fn) {
  const std::vector<int64_t> in_strides = RowMajorStrides(input);
  const std::vector<int64_t> up_strides = RowMajorStrides(update);
  const std::vector<int64_t> window = WindowOperandDims(dn, static_cast<int64_t>(input.size()));
  ir::Shape batch_shape, window_shape;
  std::vector<int64_t> batch_strides, window_strides;
  for (int64_t d = 0; d < static_cast<int64_t>(update.size()); ++d) {
    const bool is_window = Contains(dn.offset_dims, d);
    (is_window ? window_shape : batch_shape).push_back(update[d]);
    (is_window ? window_strides : batch_strides).push_back(up_strides[d]);
  }
  if (ir::NumElements(update) == 0) return Status::Ok();
  std::vector<int64_t> window_pos(input.size(), -1);  // input dim -> window index entry
  for (size_t k = 0; k < window.size(); ++k) window_pos[window[k]] = static_cast<int64_t>(k);
  const IndexReader reader(indices, dn.index_vector_dim);
  std::vector<int64_t> batch(batch_shape.size(), 0), start, base(input.size());
  std::vector<int64_t> wi(window_shape.size(), 0);
  do {
    reader.Read(batch, static_cast<int64_t>(dn.index_map.size()), start);
    std::fill(base.begin(), base.end(), 0);
    for (size_t k = 0; k < dn.index_map.size(); ++k) base[dn.index_map[k]] = start[k];
    for (size_t i = 0; i < dn.operand_batching.size(); ++i) {
      base[dn.operand_batching[i]] = reader.BatchEntry(batch, dn.indices_batching[i]);
    }
    const int64_t up_base = FlatOffset(batch, batch_strides);
    do {
      int64_t target = 0;
      bool inside = true;
      for (size_t d = 0; d < input.size() && inside; ++d) {
        const int64_t x = base[d] + (window_pos[d] >= 0 ? wi[window_pos[d]] : 0);
        inside = x >= 0 && x < input[d];
        target += x * in_strides[d];
      }
      if (inside) TPUSIM_RETURN_IF_ERROR(fn(target, up_base + FlatOffset(wi, window_strides)));
    } while (NextIndex(wi, window_shape));
  } while (NextIndex(batch, batch_shape));
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalScatter(EvalContext& ctx, const ir::Operation& op,
                                          std::span<const Tensor> operands) {
  const int n = op.num_results();
  for (int i = 0; i < n; ++i) {
    if (op.result(i).type().element() != operands[i].element()) {
      return Unimplemented("'stablehlo.scatter' with element promotion in update_computation");
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(DimNumbers dn, ReadDimNumbers(op, "scatter_dimension_numbers", true));
  // The inputs are updated in place when this was their last use.
  std::vector<Tensor> in = ctx.TakeOperands(operands);
  std::vector<Tensor> results;
  for (int i = 0; i < n; ++i) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor r, WritableCopy(in[i]));
    results.push_back(std::move(r));
  }
  const Tensor& indices = in[n];
  std::span<const Tensor> updates = std::span<const Tensor>(in).subspan(n + 1);
  const ir::Shape& input_shape = results[0].shape();
  const ir::Shape& update_shape = updates[0].shape();

  // Fast paths: "replace" and one elementwise op, single input.
  const ir::Region& body = op.region(0);
  std::optional<BinaryKind> kind = MatchBinaryRegion(body);
  if (n == 1 && MatchReturnOfArgument(body, 1)) {
    const int w = ir::StorageBytes(results[0].element());
    TPUSIM_RETURN_IF_ERROR(ForEachScatterTarget(
        input_shape, indices, update_shape, dn, [&](int64_t t, int64_t u) {
          std::memcpy(results[0].mutable_raw() + t * w, updates[0].raw() + u * w, w);
          return Status::Ok();
        }));
    return results;
  }
  Status fast_status;
  if (n == 1 && kind && WithBinaryKernel(results[0].element(), *kind, [&](auto f) {
        using S = typename decltype(f)::Storage;
        S* out = results[0].mutable_data<S>();
        const S* up = updates[0].data<S>();
        fast_status = ForEachScatterTarget(input_shape, indices, update_shape, dn,
                                           [&](int64_t t, int64_t u) {
                                             out[t] = f(out[t], up[u]);
                                             return Status::Ok();
                                           });
      })) {
    TPUSIM_RETURN_IF_ERROR(fast_status);
    return results;
  }

  std::vector<Tensor> args(2 * n);
  TPUSIM_RETURN_IF_ERROR(ForEachScatterTarget(
      input_shape, indices, update_shape, dn, [&](int64_t t, int64_t u) -> Status {
        for (int i = 0; i < n; ++i) {
          TPUSIM_ASSIGN_OR_RETURN(args[i], ScalarAt(results[i], t));
          TPUSIM_ASSIGN_OR_RETURN(args[n + i], ScalarAt(updates[i], u));
        }
        TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, ctx.RunRegion(body, args));
        for (int i = 0; i < n; ++i) {
          const int w = ir::StorageBytes(results[i].element());
          std::memcpy(results[i].mutable_raw() + t * w, out[i].raw(), w);
        }
        return Status::Ok();
      }));
  return results;
}

// In place: each update slice fetches its input rows by DMA (one per input),
// combines them with the update on the VPU and writes them back, so the
// bytes written are the updates' size.
Work ScatterWork(const ir::Operation& op) {
  Work w;
  const int n = op.num_results();
  for (int i = n; i < op.num_operands(); ++i) w.reads.push_back(op.operand(i).type());
  for (int i = n + 1; i < op.num_operands(); ++i) w.writes.push_back(op.operand(i).type());
  auto dn = ReadDimNumbers(op, "scatter_dimension_numbers", true);
  if (!dn.ok() || n == 0 || op.num_operands() != 2 * n + 1) return w;
  const ir::Type& update = op.operand(n + 1).type();
  const Slices slices = SlicesOf(update, dn->offset_dims);
  w.random_accesses = n * slices.count;
  w.random_access_bytes = LogicalBytes(ir::Type::Tensor(update.element(), {slices.elements}));
  if (op.num_regions() == 1) {
    AddRegionWork(w, op.region(0), update.num_elements(), IsFloatTensor(update));
  }
  return w;
}

// A window dimension that every update covers whole, and no index points
// into, may be split alike in the inputs, the updates and the results; the
// scattered dimensions stay whole (a device would miss updates aimed at
// another's part).
std::optional<ShardingRule> ScatterRule(const ir::Operation& op) {
  const int n = op.num_results();
  auto dn = ReadDimNumbers(op, "scatter_dimension_numbers", true);
  if (!dn.ok() || n == 0 || op.num_operands() != 2 * n + 1) return std::nullopt;
  const ir::Type& input = op.operand(0).type();
  const ir::Type& update = op.operand(n + 1).type();
  ShardingRule rule;
  std::vector<int> in(input.rank(), -1), up(update.rank(), -1);
  size_t w = 0;
  for (int64_t d = 0; d < input.rank() && w < dn->offset_dims.size(); ++d) {
    if (Contains(dn->collapsed, d) || Contains(dn->operand_batching, d)) continue;
    const int64_t u = dn->offset_dims[w++];
    if (Contains(dn->index_map, d) || update.dim(u) != input.dim(d)) continue;
    in[d] = up[u] = rule.Add(input.dim(d));
  }
  // Adding into zeros, each device may scatter its own updates: the
  // updates' scatter dimensions (and the indices' matching ones) are
  // reductions whose partial tables add up (an embedding's gradient).
  std::vector<int> indices(op.operand(n).type().rank(), -1);
  if (n == 1 && op.num_regions() == 1 && CombinerOf(op.region(0)) == "stablehlo.add" &&
      IsZeroConstant(op.operand(0))) {
    int64_t i = 0;
    for (int64_t u = 0; u < update.rank(); ++u, ++i) {
      if (Contains(dn->offset_dims, u)) {
        --i;
        continue;
      }
      if (i == dn->index_vector_dim) ++i;
      if (i >= static_cast<int64_t>(indices.size()) ||
          op.operand(n).type().dim(i) != update.dim(u)) {
        break;
      }
      indices[i] = up[u] = rule.Add(update.dim(u));
    }
    rule.combiner = "stablehlo.add";
  }
  rule.operands.assign(n, in);
  rule.operands.push_back(indices);
  for (int i = 0; i < n; ++i) rule.operands.push_back(up);
  rule.results.assign(n, in);
  return rule;
}

// Result i has input i's type (the inputs are the first half of the operands
// but for the indices).
StatusOr<std::vector<ir::Type>> InferScatter(const ir::Operation& op, Values) {
  std::vector<ir::Type> types;
  for (int i = 0; i < op.num_results() && i < op.num_operands(); ++i) {
    types.push_back(ir::Type::Tensor(op.result(i).type().element(), op.operand(i).type().shape()));
  }
  return types;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.scatter",
                    .verify = VerifyScatter,
                    .infer = InferScatter,
                    .eval = EvalScatter,
                    .work = ScatterWork,
                    .sharding_rule = ScatterRule});

}  // namespace
}  // namespace tpusim::ops
