// ONNX's ops whose output size depends on their data: NonZero and Unique. A TPU
// program has static shapes, so the data must be known at import (a values
// run reads a small input then, and the program is specialized to it); its
// count fixes the output's shape, and the program still computes the
// values at run time, so that they are evaluated and priced as any op's.

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "frontend/onnx/node.h"
#include "frontend/onnx/ops/window.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::ElementType;

// How many elements of `t` are not zero (a complex one when either part is not).
int64_t CountNonZero(const Tensor& t) {
  const int bytes = ir::StorageBytes(t.element());
  const bool complex = ir::IsComplex(t.element());
  const ElementType part = complex ? ir::ComplexPartType(t.element()) : t.element();
  const int part_bytes = ir::StorageBytes(part);
  int64_t count = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const uint8_t* p = t.raw() + i * bytes;
    bool nonzero = numerics::LoadAsDouble(part, p) != 0;
    if (complex) nonzero = nonzero || numerics::LoadAsDouble(part, p + part_bytes) != 0;
    count += nonzero ? 1 : 0;
  }
  return count;
}

// The indices of x's non-zero elements, [rank, count] si64 in row-major
// order: a stable sort of the flat positions by zero-ness puts the non-zero
// ones first, in order; each is then split into its coordinates.
Status NonZero(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(Tensor known, n.Known(0, "its input"));
  const int64_t count = CountNonZero(known);
  const Shape& xs = Builder::ShapeOf(x);
  const int64_t rank = static_cast<int64_t>(xs.size()), size = x.type().num_elements();
  Value flat = b.Reshape(x, {size});
  Value zero = b.Convert(b.Compare("EQ", flat, b.ScalarLike(flat, 0)), ElementType::kSI32);
  Value pos = b.Iota({size}, 0, ElementType::kSI64);
  ir::Operation* sort = b.Emit("stablehlo.sort", {zero, pos}, {zero.type(), pos.type()},
                               {{"dimension", ir::Attribute::Int(0, ElementType::kSI64)},
                                {"is_stable", ir::Attribute::Bool(true)}});
  const ir::Type si32 = ir::Type::Tensor(ElementType::kSI32, {});
  const ir::Type si64 = ir::Type::Tensor(ElementType::kSI64, {});
  b.AddRegion(sort, {si32, si32, si64, si64}, [&](const std::vector<Value>& a) {
    return std::vector<Value>{b.Compare("LT", a[0], a[1])};
  });
  Value first = b.SliceDim(sort->result(1), 0, 0, count);
  // Coordinate d of a flat position: (position / stride_d) mod dim_d.
  std::vector<Value> rows;
  int64_t stride = size;
  for (int64_t d = 0; d < rank; ++d) {
    stride = xs[d] == 0 ? 1 : stride / xs[d];
    Value q = b.Div(first, b.FullLike(first, static_cast<double>(stride)));
    Value c = b.Binary("remainder", q, b.FullLike(q, static_cast<double>(xs[d])));
    rows.push_back(b.Reshape(c, {1, count}));
  }
  n.SetOutput(0, rank == 0 ? b.Splat(ElementType::kSI64, 0, {0, count}) : b.Concat(rows, 0));
  return Status::Ok();
}

// --- Unique

// `into` with `updates` [N, window...] written at rows `rows` [N] (si64),
// combined by stablehlo.<body>, or replacing without one.
Value ScatterRows(Builder& b, Value into, Value rows, Value updates, std::string_view body) {
  const int64_t n = Builder::ShapeOf(rows)[0];
  std::vector<int64_t> window;
  for (int64_t d = 1; d < Builder::RankOf(updates); ++d) window.push_back(d);
  ir::Attribute dnums =
      ir::Attribute::Struct("stablehlo.scatter", {{"update_window_dims", IntList(window)},
                                                  {"inserted_window_dims", IntList({0})},
                                                  {"input_batching_dims", IntList({})},
                                                  {"scatter_indices_batching_dims", IntList({})},
                                                  {"scatter_dims_to_operand_dims", IntList({0})},
                                                  {"index_vector_dim", ir::Attribute::Int(1)}});
  ir::Operation* op =
      b.Emit("stablehlo.scatter", {into, b.Reshape(rows, {n, 1}), updates}, {into.type()},
             {{"scatter_dimension_numbers", dnums},
              {"indices_are_sorted", ir::Attribute::Bool(false)},
              {"unique_indices", ir::Attribute::Bool(false)}});
  const ir::Type scalar = ir::Type::Tensor(Builder::ElementOf(into), {});
  b.AddRegion(op, {scalar, scalar}, [&](const std::vector<Value>& a) {
    return std::vector<Value>{body.empty() ? a[1] : b.Binary(body, a[0], a[1])};
  });
  return op->result(0);
}

// Rows `rows` [N] (si64) of x [M, window...].
Value GatherRows(Builder& b, Value x, Value rows) {
  const int64_t n = Builder::ShapeOf(rows)[0];
  Shape sizes = Builder::ShapeOf(x), out = Builder::ShapeOf(x);
  sizes[0] = 1;
  out[0] = n;
  std::vector<int64_t> offset;
  for (int64_t d = 1; d < Builder::RankOf(x); ++d) offset.push_back(d);
  ir::Attribute dnums =
      ir::Attribute::Struct("stablehlo.gather", {{"offset_dims", IntList(offset)},
                                                 {"collapsed_slice_dims", IntList({0})},
                                                 {"operand_batching_dims", IntList({})},
                                                 {"start_indices_batching_dims", IntList({})},
                                                 {"start_index_map", IntList({0})},
                                                 {"index_vector_dim", ir::Attribute::Int(1)}});
  return b
      .Emit("stablehlo.gather", {x, b.Reshape(rows, {n, 1})},
            {ir::Type::Tensor(Builder::ElementOf(x), out)},
            {{"dimension_numbers", dnums},
             {"slice_sizes", I64Array(sizes)},
             {"indices_are_sorted", ir::Attribute::Bool(false)}})
      ->result(0);
}

// The running sum of v [N] (si64), each element included.
Value RunningSum(Builder& b, Value v) {
  const int64_t n = Builder::ShapeOf(v)[0];
  ir::Operation* op = b.Emit("stablehlo.reduce_window", {v, b.ScalarLike(v, 0)}, {v.type()},
                             {{"window_dimensions", I64Array({std::max<int64_t>(n, 1)})},
                              {"window_strides", I64Array({1})},
                              {"base_dilations", I64Array({1})},
                              {"window_dilations", I64Array({1})},
                              {"padding", Padding({std::max<int64_t>(n - 1, 0)}, {0})}});
  b.AddScalarBody(op, ElementType::kSI64, "add");
  return op->result(0);
}

// How many distinct rows the known input has: its elements, or its slices
// along `axis` (-1: none), compared by value.
int64_t CountDistinct(const Tensor& t, int64_t axis) {
  const Shape& s = t.shape();
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t d_count = axis < 0 ? t.num_elements() : s[axis];
  const int64_t r_count = d_count == 0 ? 0 : t.num_elements() / d_count;
  const std::vector<int64_t> strides = RowMajorStrides(s);
  const int bytes = ir::StorageBytes(t.element());
  std::set<std::vector<double>> rows;
  for (int64_t d = 0; d < d_count; ++d) {
    std::vector<double> row;
    for (int64_t r = 0; r < r_count; ++r) {
      // Element r of slice d: r's coordinates over the other dimensions.
      int64_t offset = axis < 0 ? d : d * strides[axis], rest = r;
      for (int64_t k = rank - 1; axis >= 0 && k >= 0; --k) {
        if (k == axis) continue;
        offset += (rest % s[k]) * strides[k];
        rest /= s[k];
      }
      row.push_back(numerics::LoadAsDouble(t.element(), t.raw() + offset * bytes));
    }
    rows.insert(std::move(row));
  }
  return static_cast<int64_t>(rows.size());
}

// The distinct rows of x (its elements, or its slices along `axis`): a
// stable lexicographic sort of the rows with their positions marks where
// each run of equal rows starts; the runs' numbers place each row's value,
// first position and count, and give each position its run.
Status Unique(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(Tensor known, n.Known(0, "its input"));
  const Shape xs = Builder::ShapeOf(x);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const bool has_axis = n.has_attr("axis");
  int64_t axis = -1;
  if (has_axis) {
    TPUSIM_ASSIGN_OR_RETURN(axis, n.Axis(n.Int("axis", 0), rank));
  }
  if (ir::IsComplex(Builder::ElementOf(x))) return n.Unsupported("Unique of complex values");
  const int64_t k = CountDistinct(known, axis);
  // x as rows [D, R], the axis first.
  std::vector<int64_t> perm;
  if (has_axis) {
    perm.push_back(axis);
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis) perm.push_back(d);
    }
  }
  Value moved = has_axis ? b.Transpose(x, perm) : x;
  const Shape ms = Builder::ShapeOf(moved);
  const int64_t d_count = has_axis ? ms[0] : x.type().num_elements();
  const int64_t r_count = d_count == 0 ? 0 : x.type().num_elements() / d_count;
  if (d_count == 0 || r_count == 0) return n.Unsupported("Unique of an empty input");
  Value rows = b.Reshape(moved, {d_count, r_count});
  std::vector<Value> operands;
  for (int64_t j = 0; j < r_count; ++j) {
    operands.push_back(b.Reshape(b.SliceDim(rows, 1, j, j + 1), {d_count}));
  }
  operands.push_back(b.Iota({d_count}, 0, ElementType::kSI64));
  std::vector<ir::Type> types, args;
  for (Value v : operands) {
    types.push_back(v.type());
    args.push_back(ir::Type::Tensor(Builder::ElementOf(v), {}));
    args.push_back(args.back());
  }
  ir::Operation* sort = b.Emit("stablehlo.sort", operands, types,
                               {{"dimension", ir::Attribute::Int(0, ElementType::kSI64)},
                                {"is_stable", ir::Attribute::Bool(true)}});
  b.AddRegion(sort, args, [&](const std::vector<Value>& a) {
    // Row a before row b: lexicographic over the columns, the last first.
    Value less = b.Compare("LT", a[2 * (r_count - 1)], a[2 * (r_count - 1) + 1]);
    for (int64_t j = r_count - 2; j >= 0; --j) {
      Value lt = b.Compare("LT", a[2 * j], a[2 * j + 1]);
      Value eq = b.Compare("EQ", a[2 * j], a[2 * j + 1]);
      less = b.Binary("or", lt, b.Binary("and", eq, less));
    }
    return std::vector<Value>{less};
  });
  Value positions = sort->result(static_cast<int>(r_count));
  // Where runs start: the first row, and each row unlike the one before.
  Value starts = b.Splat(ElementType::kI1, 1, {1});
  if (d_count > 1) {
    Value differ;
    for (int64_t j = 0; j < r_count; ++j) {
      Value c = sort->result(static_cast<int>(j));
      Value ne = b.Compare("NE", b.SliceDim(c, 0, 1, d_count), b.SliceDim(c, 0, 0, d_count - 1));
      differ = j == 0 ? ne : b.Binary("or", differ, ne);
    }
    starts = b.Concat({starts, differ}, 0);
  }
  Value one = b.Splat(ElementType::kSI64, 1, {d_count});
  Value run = b.Sub(RunningSum(b, b.Convert(starts, ElementType::kSI64)), one);
  std::vector<Value> columns;
  for (int64_t j = 0; j < r_count; ++j) {
    columns.push_back(b.Reshape(sort->result(static_cast<int>(j)), {d_count, 1}));
  }
  const ElementType e = Builder::ElementOf(x);
  Value y = ScatterRows(b, b.Splat(e, 0, {k, r_count}), run, b.Concat(columns, 1), "");
  Value first = ScatterRows(b, b.Splat(ElementType::kSI64, std::ldexp(1.0, 62), {k}), run,
                            positions, "minimum");
  Value counts = ScatterRows(b, b.Splat(ElementType::kSI64, 0, {k}), run, one, "add");
  Value inverse = ScatterRows(b, b.Splat(ElementType::kSI64, 0, {d_count}), positions, run, "");
  if (n.Int("sorted", 1) == 0) {
    // In order of first occurrence: the runs sorted by their first position.
    Value ids = b.Iota({k}, 0, ElementType::kSI64);
    ir::Operation* by_first = b.Emit("stablehlo.sort", {first, ids}, {first.type(), ids.type()},
                                     {{"dimension", ir::Attribute::Int(0, ElementType::kSI64)},
                                      {"is_stable", ir::Attribute::Bool(true)}});
    const ir::Type si64 = ir::Type::Tensor(ElementType::kSI64, {});
    b.AddRegion(by_first, {si64, si64, si64, si64}, [&](const std::vector<Value>& a) {
      return std::vector<Value>{b.Compare("LT", a[0], a[1])};
    });
    Value order = by_first->result(1);
    first = by_first->result(0);
    y = GatherRows(b, y, order);
    counts = GatherRows(b, counts, order);
    Value renumber = ScatterRows(b, b.Splat(ElementType::kSI64, 0, {k}), order, ids, "");
    inverse = GatherRows(b, renumber, inverse);
  }
  if (has_axis) {
    Shape shape = ms;
    shape[0] = k;
    std::vector<int64_t> back(rank);
    for (int64_t d = 0; d < rank; ++d) back[perm[d]] = d;
    y = b.Transpose(b.Reshape(y, shape), back);
  } else {
    y = b.Reshape(y, {k});
  }
  n.SetOutput(0, y);
  n.SetOutput(1, first);
  n.SetOutput(2, inverse);
  n.SetOutput(3, counts);
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"NonZero", NonZero});
TPUSIM_REGISTER_ONNX_OP({"Unique", Unique});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
