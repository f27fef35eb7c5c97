// ONNX's indexing ops: Gather, GatherElements, GatherND (stablehlo.gather),
// ScatterElements, Scatter and ScatterND (stablehlo.scatter), and TopK (a
// stable sort). Negative indices count from the end of their dimension, as
// ONNX allows from opset 11; indices out of range are clamped, as on a TPU.
#include <algorithm>

#include "frontend/onnx/node.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::Attribute;
using ir::ElementType;

// idx as si64, negative entries plus `dims` (a scalar or of idx's shape).
Value Normalize(Builder& b, Value idx, Value dims) {
  idx = b.Convert(idx, ElementType::kSI64);
  Value neg = b.Compare("LT", idx, b.Scalar(ElementType::kSI64, 0));
  return b.Select(neg, b.Add(idx, b.BroadcastTo(dims, Builder::ShapeOf(idx))), idx);
}

Value NormalizeFor(Builder& b, Value idx, int64_t dim) {
  return Normalize(b, idx, b.Scalar(ElementType::kSI64, static_cast<double>(dim)));
}

struct GatherDims {
  std::vector<int64_t> offset, collapsed, operand_batching, indices_batching, start_index_map;
  int64_t index_vector_dim;
  std::vector<int64_t> slice_sizes;
};

Value Gather(Builder& b, Value x, Value idx, const GatherDims& g, const Shape& out) {
  Attribute dnums = Attribute::Struct("stablehlo.gather",
                                      {{"offset_dims", IntList(g.offset)},
                                       {"collapsed_slice_dims", IntList(g.collapsed)},
                                       {"operand_batching_dims", IntList(g.operand_batching)},
                                       {"start_indices_batching_dims", IntList(g.indices_batching)},
                                       {"start_index_map", IntList(g.start_index_map)},
                                       {"index_vector_dim", Attribute::Int(g.index_vector_dim)}});
  return b
      .Emit("stablehlo.gather", {x, idx}, {ir::Type::Tensor(Builder::ElementOf(x), out)},
            {{"dimension_numbers", dnums},
             {"slice_sizes", I64Array(g.slice_sizes)},
             {"indices_are_sorted", Attribute::Bool(false)}})
      ->result(0);
}

Status GatherOp(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const Shape& xs = Builder::ShapeOf(x);
  const int64_t r = static_cast<int64_t>(xs.size());
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), r));
  Value idx = NormalizeFor(b, n.input(1), xs[axis]);
  const Shape& is = Builder::ShapeOf(idx);
  const int64_t q = static_cast<int64_t>(is.size());
  Shape out(xs.begin(), xs.begin() + axis);
  out.insert(out.end(), is.begin(), is.end());
  out.insert(out.end(), xs.begin() + axis + 1, xs.end());
  GatherDims g;
  g.offset = IndexRange(0, axis);
  for (int64_t d = axis + q; d < static_cast<int64_t>(out.size()); ++d) g.offset.push_back(d);
  g.collapsed = {axis};
  g.start_index_map = {axis};
  g.index_vector_dim = q;
  g.slice_sizes = xs;
  g.slice_sizes[axis] = 1;
  n.SetOutput(0, Gather(b, x, idx, g, out));
  return Status::Ok();
}

// The full index of each element of idx's shape: iotas, with `idx` itself
// along `axis`; [shape..., rank].
Value FullIndex(Builder& b, Value idx, int64_t axis) {
  const Shape& is = Builder::ShapeOf(idx);
  const int64_t r = static_cast<int64_t>(is.size());
  Shape one = is;
  one.push_back(1);
  std::vector<Value> parts;
  for (int64_t d = 0; d < r; ++d) {
    parts.push_back(b.Reshape(d == axis ? idx : b.Iota(is, d, ElementType::kSI64), one));
  }
  return b.Concat(parts, r);
}

Status GatherElements(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const Shape& xs = Builder::ShapeOf(x);
  const int64_t r = static_cast<int64_t>(xs.size());
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), r));
  Value idx = NormalizeFor(b, n.input(1), xs[axis]);
  if (Builder::RankOf(idx) != r) return n.Invalid("indices must have the data's rank");
  GatherDims g;
  g.collapsed = IndexRange(0, r);
  g.start_index_map = IndexRange(0, r);
  g.index_vector_dim = r;
  g.slice_sizes.assign(r, 1);
  n.SetOutput(0, Gather(b, x, FullIndex(b, idx, axis), g, Builder::ShapeOf(idx)));
  return Status::Ok();
}

Status GatherND(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  Value idx = b.Convert(n.input(1), ElementType::kSI64);
  const Shape xs = Builder::ShapeOf(x);
  const Shape is = Builder::ShapeOf(idx);
  const int64_t r = static_cast<int64_t>(xs.size()), q = static_cast<int64_t>(is.size());
  const int64_t bd = n.Int("batch_dims", 0);
  if (q < 1) return n.Invalid("indices must have rank 1 or more");
  const int64_t k = is[q - 1];
  if (bd < 0 || bd + k > r || bd >= q) return n.Invalid("indices do not fit the data");
  // Negative indices: plus the size of the dimension each component indexes.
  Shape ks = {k};
  std::vector<int64_t> sizes(xs.begin() + bd, xs.begin() + bd + k);
  Value dims = b.BroadcastInDim(b.I64s(sizes), is, {q - 1});
  idx = Normalize(b, idx, dims);
  Shape out(is.begin(), is.end() - 1);
  out.insert(out.end(), xs.begin() + bd + k, xs.end());
  GatherDims g;
  g.offset = IndexRange(q - 1, static_cast<int64_t>(out.size()));
  g.collapsed = IndexRange(bd, bd + k);
  g.operand_batching = IndexRange(0, bd);
  g.indices_batching = IndexRange(0, bd);
  g.start_index_map = IndexRange(bd, bd + k);
  g.index_vector_dim = q - 1;
  g.slice_sizes = xs;
  for (int64_t d = 0; d < bd + k; ++d) g.slice_sizes[d] = 1;
  n.SetOutput(0, Gather(b, x, idx, g, out));
  return Status::Ok();
}

// stablehlo.scatter of `updates` into x; the body combines by `reduction`
// (none: the update replaces).
StatusOr<Value> Scatter(Node& n, Value x, Value idx, Value updates, std::vector<int64_t> window,
                        std::vector<int64_t> inserted, std::vector<int64_t> to_operand,
                        int64_t index_vector_dim) {
  Builder& b = n.b();
  const std::string reduction = n.String("reduction", "none");
  std::string body;
  if (reduction == "add") {
    body = "add";
  } else if (reduction == "mul") {
    body = "multiply";
  } else if (reduction == "max") {
    body = "maximum";
  } else if (reduction == "min") {
    body = "minimum";
  } else if (reduction != "none") {
    return n.Unsupported("reduction '" + reduction + "'");
  }
  Attribute dnums = Attribute::Struct("stablehlo.scatter",
                                      {{"update_window_dims", IntList(window)},
                                       {"inserted_window_dims", IntList(inserted)},
                                       {"input_batching_dims", IntList({})},
                                       {"scatter_indices_batching_dims", IntList({})},
                                       {"scatter_dims_to_operand_dims", IntList(to_operand)},
                                       {"index_vector_dim", Attribute::Int(index_vector_dim)}});
  ir::Operation* op = b.Emit("stablehlo.scatter", {x, idx, updates}, {x.type()},
                             {{"scatter_dimension_numbers", dnums},
                              {"indices_are_sorted", Attribute::Bool(false)},
                              {"unique_indices", Attribute::Bool(false)}});
  const ir::Type scalar = ir::Type::Tensor(Builder::ElementOf(x), {});
  b.AddRegion(op, {scalar, scalar}, [&](const std::vector<Value>& a) {
    return std::vector<Value>{body.empty() ? a[1] : b.Binary(body, a[0], a[1])};
  });
  return op->result(0);
}

Status ScatterElements(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const Shape& xs = Builder::ShapeOf(x);
  const int64_t r = static_cast<int64_t>(xs.size());
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), r));
  Value idx = NormalizeFor(b, n.input(1), xs[axis]);
  Value updates = n.input(2);
  if (Builder::ShapeOf(idx) != Builder::ShapeOf(updates) || Builder::RankOf(idx) != r) {
    return n.Invalid("indices and updates must have one shape of the data's rank");
  }
  TPUSIM_ASSIGN_OR_RETURN(Value y, Scatter(n, x, FullIndex(b, idx, axis), updates, {},
                                           IndexRange(0, r), IndexRange(0, r), r));
  n.SetOutput(0, y);
  return Status::Ok();
}

Status ScatterND(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  Value idx = b.Convert(n.input(1), ElementType::kSI64);
  Value updates = n.input(2);
  const Shape xs = Builder::ShapeOf(x), is = Builder::ShapeOf(idx);
  const int64_t q = static_cast<int64_t>(is.size());
  if (q < 1 || is[q - 1] > static_cast<int64_t>(xs.size()))
    return n.Invalid("indices do not fit the data");
  const int64_t k = is[q - 1];
  Shape want(is.begin(), is.end() - 1);
  want.insert(want.end(), xs.begin() + k, xs.end());
  if (Builder::ShapeOf(updates) != want) return n.Invalid("updates have the wrong shape");
  std::vector<int64_t> sizes(xs.begin(), xs.begin() + k);
  idx = Normalize(b, idx, b.BroadcastInDim(b.I64s(sizes), is, {q - 1}));
  TPUSIM_ASSIGN_OR_RETURN(
      Value y, Scatter(n, x, idx, updates, IndexRange(q - 1, static_cast<int64_t>(want.size())),
                       IndexRange(0, k), IndexRange(0, k), q - 1));
  n.SetOutput(0, y);
  return Status::Ok();
}

Status TopK(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const Shape& xs = Builder::ShapeOf(x);
  int64_t k = n.Int("k", -1);
  if (n.opset() >= 10) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> kv, n.KnownInts(1, "K"));
    if (kv.size() != 1) return n.Invalid("K must be one value");
    k = kv[0];
  }
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", -1), Builder::RankOf(x)));
  if (k < 0 || k > xs[axis]) return n.Invalid("K is out of range for the axis");
  const bool largest = n.Int("largest", 1) != 0;
  // A stable sort keeps equal values in index order, as ONNX asks.
  Value idx = b.Iota(xs, axis, ElementType::kSI64);
  ir::Operation* op = b.Emit("stablehlo.sort", {x, idx}, {x.type(), idx.type()},
                             {{"dimension", Attribute::Int(axis, ElementType::kSI64)},
                              {"is_stable", Attribute::Bool(true)}});
  const ir::Type sv = ir::Type::Tensor(Builder::ElementOf(x), {});
  const ir::Type si = ir::Type::Tensor(ElementType::kSI64, {});
  b.AddRegion(op, {sv, sv, si, si}, [&](const std::vector<Value>& a) {
    return std::vector<Value>{b.Compare(largest ? "GT" : "LT", a[0], a[1])};
  });
  n.SetOutput(0, b.SliceDim(op->result(0), axis, 0, k));
  n.SetOutput(1, b.SliceDim(op->result(1), axis, 0, k));
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"Gather", GatherOp});
TPUSIM_REGISTER_ONNX_OP({"GatherElements", GatherElements});
TPUSIM_REGISTER_ONNX_OP({"GatherND", GatherND});
TPUSIM_REGISTER_ONNX_OP({"ScatterElements", ScatterElements});
TPUSIM_REGISTER_ONNX_OP({"Scatter", ScatterElements});
TPUSIM_REGISTER_ONNX_OP({"ScatterND", ScatterND});
TPUSIM_REGISTER_ONNX_OP({"TopK", TopK});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
