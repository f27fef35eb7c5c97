// ONNX's linear algebra: Det.
//
// Det of [..., M, M] is the LU factorization with partial pivoting that
// JAX's CPU exports call, the custom call lapack_{s,d}getrf_ffi (jaxlib's
// typed FFI, api_version 4; run by LAPACK, docs/custom-calls.md), then
// stablehlo ops: the product of U's diagonal, negated for each row swap
// (1-based pivot k not k + 1). f32 and f64 factor in their own type; f16
// (and bf16) widen to f32 and the result narrows back. A singular matrix
// gives a zero on U's diagonal, so 0; an empty one (M = 0) gives 1.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "frontend/onnx/node.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::Attribute;
using ir::ElementType;

// stablehlo.custom_call @lapack_<t>getrf_ffi of [..., M, M] a: LU packed in
// one matrix, and the pivots [..., M] (i32, 1-based).
std::pair<Value, Value> Getrf(Builder& b, Value a) {
  const ElementType e = Builder::ElementOf(a);
  Shape pivots = Builder::ShapeOf(a), info = pivots;
  pivots.pop_back();
  info.resize(info.size() - 2);
  const std::string target =
      std::string("lapack_") + (e == ElementType::kF64 ? "d" : "s") + "getrf_ffi";
  ir::Operation* op = b.Emit("stablehlo.custom_call", {a},
                             {a.type(), ir::Type::Tensor(ElementType::kSI32, pivots),
                              ir::Type::Tensor(ElementType::kSI32, info)},
                             {{"call_target_name", Attribute::String(target)},
                              {"api_version", Attribute::Int(4, ElementType::kSI32)}});
  return {op->result(0), op->result(1)};
}

Status Det(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const Shape& xs = Builder::ShapeOf(x);
  const int64_t r = Builder::RankOf(x);
  if (r < 2 || xs[r - 1] != xs[r - 2]) {
    return n.Invalid("needs [..., M, M] square matrices, not " + x.type().ToString());
  }
  const ElementType out = Builder::ElementOf(x);
  if (!ir::IsFloat(out)) return n.Invalid("takes floating-point matrices");
  const ElementType work = out == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32;
  const Shape batch(xs.begin(), xs.end() - 2);
  if (xs[r - 1] == 0) {
    n.SetOutput(0, b.Splat(out, 1, batch));
    return Status::Ok();
  }
  auto [lu, pivots] = Getrf(b, b.Convert(x, work));
  // U's diagonal: the off-diagonal entries selected away (not multiplied
  // by 0, which would spread infinities), each row summed.
  Value on_diagonal =
      b.Compare("EQ", b.Iota(xs, r - 2, ElementType::kSI32), b.Iota(xs, r - 1, ElementType::kSI32));
  Value diagonal =
      b.Reduce(b.Select(on_diagonal, lu, b.FullLike(lu, 0)), b.Scalar(work, 0), {r - 1}, "add");
  // Row k was swapped when its pivot is not k + 1.
  const Shape& ps = Builder::ShapeOf(pivots);
  Value kept =
      b.Compare("EQ", pivots,
                b.Add(b.Iota(ps, r - 2, ElementType::kSI32), b.Splat(ElementType::kSI32, 1, ps)));
  Value signs = b.Select(kept, b.Splat(work, 1, ps), b.Splat(work, -1, ps));
  Value det = b.Reduce(b.Mul(diagonal, signs), b.Scalar(work, 1), {r - 2}, "multiply");
  n.SetOutput(0, b.Convert(det, out));
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"Det", Det});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
