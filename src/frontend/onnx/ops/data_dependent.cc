// ONNX's ops whose output size depends on their data: NonZero. A TPU
// program has static shapes, so the data must be known at import (a values
// run reads a small input then, and the program is specialized to it); its
// count fixes the output's shape, and the program still computes the
// values at run time, so that they are evaluated and priced as any op's.

#include "frontend/onnx/node.h"
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

TPUSIM_REGISTER_ONNX_OP({"NonZero", NonZero});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
