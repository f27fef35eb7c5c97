// ONNX's linear quantization: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, and the integer and quantized matrix products
// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv.
//
// Quantizing is y = saturate(round(x / scale) + zero_point), rounding half
// to even and saturating to the zero point's type, computed in f32 as ONNX's
// reference and onnxruntime do; dequantizing is (x - zero_point) * scale in
// f32. Integer products are exact: the 8-bit operands are widened to i32,
// their zero points subtracted there, and dot_general / convolution run on
// i32 with an i32 result (wrapping past 2^31, as ONNX allows). The quantized
// products then requantize the i32 accumulator with the f32 multiplier
// a_scale * b_scale / y_scale.
//
// Scales and zero points: one element (any shape) is per tensor. Otherwise
// Quantize/DequantizeLinear take a 1-D one along `axis` (opset 13; default
// 1, negative from the back; opset 10 has scalars only, and a 1-D one there
// is read as opset 13 reads it); the matmuls take a's per row ([M] or
// [..., M, 1]) and b's per column ([N] or [..., 1, N]), broadcast by numpy's
// rule; the convolutions take w's per output channel ([M]). Zero points
// absent are 0 (QuantizeLinear's output then uint8).
//
// Refused: blocked quantization (block_size, opset 21), outputs other than
// 8- and 16-bit integers (float8 and int4 from opsets 19 and 21).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "frontend/onnx/node.h"
#include "frontend/onnx/ops/window.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::ElementType;

constexpr ElementType kF32 = ElementType::kF32;
constexpr ElementType kI32 = ElementType::kSI32;

// The range a quantized type saturates to.
struct Limits {
  double lo, hi;
};

StatusOr<Limits> LimitsOf(const Node& n, ElementType e) {
  const int bits = ir::BitWidth(e);
  if (!ir::IsInteger(e) || (bits != 8 && bits != 16)) {
    return n.Unsupported("quantizing to " + std::string(ir::ElementTypeName(e)));
  }
  if (ir::IsUnsignedInt(e)) return Limits{0, static_cast<double>((int64_t{1} << bits) - 1)};
  return Limits{-static_cast<double>(int64_t{1} << (bits - 1)),
                static_cast<double>((int64_t{1} << (bits - 1)) - 1)};
}

// saturate(round_half_even(v) + zp) as `out`; v and zp f32 of one shape.
Value Saturate(Builder& b, Value v, Value zp, Limits lim, ElementType out) {
  Value r = b.Add(b.Unary("round_nearest_even", v), zp);
  r = b.Clamp(b.ScalarLike(r, lim.lo), r, b.ScalarLike(r, lim.hi));
  return b.Convert(r, out);
}

// Input i (a scale or zero point) as `element`, broadcast to `shape`: one
// element is per tensor, else 1-D of shape[axis] elements along `axis`.
StatusOr<Value> AlongAxis(Node& n, int i, const Shape& shape, int64_t axis, ElementType element) {
  Builder& b = n.b();
  Value q = b.Convert(n.input(i), element);
  if (q.type().num_elements() == 1) return b.BroadcastTo(b.Reshape(q, {}), shape);
  const int64_t rank = static_cast<int64_t>(shape.size());
  TPUSIM_ASSIGN_OR_RETURN(int64_t d, n.Axis(axis, rank));
  if (Builder::RankOf(q) != 1 || Builder::ShapeOf(q)[0] != shape[d]) {
    return n.Invalid("input " + std::to_string(i) + " " + q.type().ToString() +
                     " is neither one value nor 1-D along axis " + std::to_string(d) + " of " +
                     std::to_string(shape[d]));
  }
  return b.BroadcastInDim(q, shape, {d});
}

// Zero point input i as f32, per tensor or along `axis`; 0 when absent.
StatusOr<Value> ZeroPointAlong(Node& n, int i, const Shape& shape, int64_t axis) {
  if (!n.has_input(i)) return n.b().Splat(kF32, 0, shape);
  return AlongAxis(n, i, shape, axis, kF32);
}

Status QuantizeLinear(Node& n) {
  if (n.Int("block_size", 0) != 0) return n.Unsupported("blocked quantization (block_size)");
  Builder& b = n.b();
  Value x = b.Convert(n.input(0), kF32);
  const Shape shape = Builder::ShapeOf(x);
  const int64_t axis = n.Int("axis", 1);
  const ElementType out = n.has_input(2) ? Builder::ElementOf(n.input(2)) : ElementType::kUI8;
  TPUSIM_ASSIGN_OR_RETURN(Limits lim, LimitsOf(n, out));
  TPUSIM_ASSIGN_OR_RETURN(Value scale, AlongAxis(n, 1, shape, axis, kF32));
  TPUSIM_ASSIGN_OR_RETURN(Value zp, ZeroPointAlong(n, 2, shape, axis));
  n.SetOutput(0, Saturate(b, b.Div(x, scale), zp, lim, out));
  return Status::Ok();
}

Status DequantizeLinear(Node& n) {
  if (n.Int("block_size", 0) != 0) return n.Unsupported("blocked quantization (block_size)");
  Builder& b = n.b();
  Value x = b.Convert(n.input(0), kF32);
  const Shape shape = Builder::ShapeOf(x);
  const int64_t axis = n.Int("axis", 1);
  TPUSIM_ASSIGN_OR_RETURN(Value scale, AlongAxis(n, 1, shape, axis, kF32));
  TPUSIM_ASSIGN_OR_RETURN(Value zp, ZeroPointAlong(n, 2, shape, axis));
  // The result has the scale's type (f16 and bf16 scales from opset 19).
  n.SetOutput(0, b.Convert(b.Mul(b.Sub(x, zp), scale), Builder::ElementOf(n.input(1))));
  return Status::Ok();
}

// uint8 only (ONNX's sole form): the range [min(x), max(x)] widened to hold
// 0, split in 255 steps; an all-zero x divides by a zero scale, as ONNX's
// function does.
Status DynamicQuantizeLinear(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  if (Builder::ElementOf(x) != kF32) return n.Invalid("takes float32");
  std::vector<int64_t> all;
  for (int64_t d = 0; d < Builder::RankOf(x); ++d) all.push_back(d);
  const double inf = std::numeric_limits<double>::infinity();
  Value zero = b.Scalar(kF32, 0);
  Value lo = b.Min(b.Reduce(x, b.Scalar(kF32, inf), all, "minimum"), zero);
  Value hi = b.Max(b.Reduce(x, b.Scalar(kF32, -inf), all, "maximum"), zero);
  Value scale = b.Div(b.Sub(hi, lo), b.Scalar(kF32, 255));
  const Limits lim{0, 255};
  Value zp = Saturate(b, b.Sub(zero, b.Div(lo, scale)), zero, lim, ElementType::kUI8);
  Value zp_f = b.BroadcastTo(b.Convert(zp, kF32), Builder::ShapeOf(x));
  Value y = Saturate(b, b.Div(x, b.BroadcastTo(scale, Builder::ShapeOf(x))), zp_f, lim,
                     ElementType::kUI8);
  n.SetOutput(0, y);
  n.SetOutput(1, scale);
  n.SetOutput(2, zp);
  return Status::Ok();
}

// ------------------------------------------------------------ matrix products

// A matmul operand's scale or zero point as a value that numpy-broadcasts
// against the operand (`rows` for a's per-row [M], which becomes [M, 1];
// b's per-column [N] broadcasts as it is).
StatusOr<Value> MatrixParam(Node& n, int i, Value operand, bool rows, ElementType element) {
  Builder& b = n.b();
  Value q = b.Convert(n.input(i), element);
  if (q.type().num_elements() == 1) return b.Reshape(q, {});
  const Shape& s = Builder::ShapeOf(operand);
  if (rows && Builder::RankOf(q) == 1 && s.size() >= 2 &&
      Builder::ShapeOf(q)[0] == s[s.size() - 2]) {
    q = b.Reshape(q, {Builder::ShapeOf(q)[0], 1});
  }
  Shape out;
  if (!BroadcastShapes(Builder::ShapeOf(q), s, &out) || out != s) {
    return n.Invalid("input " + std::to_string(i) + " " + q.type().ToString() + " does not fit " +
                     operand.type().ToString() + (rows ? " per row" : " per column"));
  }
  return q;
}

// Input `x` widened to i32, minus zero point input `zp` (absent: 0).
StatusOr<Value> Shifted(Node& n, int x, int zp, bool rows) {
  Builder& b = n.b();
  Value v = b.Convert(n.input(x), kI32);
  if (!n.has_input(zp)) return v;
  TPUSIM_ASSIGN_OR_RETURN(Value z, MatrixParam(n, zp, v, rows, kI32));
  return b.BinaryBroadcast("subtract", v, z);
}

Status MatMulInteger(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(Value a, Shifted(n, 0, 2, true));
  TPUSIM_ASSIGN_OR_RETURN(Value b, Shifted(n, 1, 3, false));
  TPUSIM_ASSIGN_OR_RETURN(Value y, NumpyMatMul(n, a, b, kI32));
  n.SetOutput(0, y);
  return Status::Ok();
}

// The i32 accumulator `acc` requantized: acc * multiplier (f32, broadcast to
// acc's shape) rounded, plus y's zero point (input `zp_input`, per tensor).
Status Requantize(Node& n, Value acc, Value multiplier, int zp_input) {
  Builder& b = n.b();
  const Shape& shape = Builder::ShapeOf(acc);
  const ElementType out = Builder::ElementOf(n.input(zp_input));
  TPUSIM_ASSIGN_OR_RETURN(Limits lim, LimitsOf(n, out));
  if (n.input(zp_input).type().num_elements() != 1)
    return n.Invalid("y_zero_point must be one value");
  Value zp = b.BroadcastTo(b.Reshape(b.Convert(n.input(zp_input), kF32), {}), shape);
  n.SetOutput(0, Saturate(b, b.Mul(b.Convert(acc, kF32), multiplier), zp, lim, out));
  return Status::Ok();
}

// A matmul scale (from MatrixParam) broadcast to the product's shape: a 1-D
// b drops the product's column dimension, and with it a's [.., M, 1] last;
// a 1-D a drops its row dimension, and with it b's [.., 1, N] second last.
StatusOr<Value> ScaleOfProduct(Node& n, Value s, const Shape& product, int64_t drop_from_end) {
  Builder& b = n.b();
  Shape ss = Builder::ShapeOf(s);
  if (!ss.empty() && drop_from_end > 0 && static_cast<int64_t>(ss.size()) >= drop_from_end) {
    ss.erase(ss.end() - drop_from_end);
    s = b.Reshape(s, ss);
  }
  Shape out;
  if (!BroadcastShapes(ss, product, &out) || out != product) {
    return n.Invalid("a scale " + s.type().ToString() + " does not fit the product");
  }
  return b.BroadcastTo(s, product);
}

Status QLinearMatMul(Node& n) {
  Builder& b = n.b();
  TPUSIM_ASSIGN_OR_RETURN(Value a, Shifted(n, 0, 2, true));
  TPUSIM_ASSIGN_OR_RETURN(Value w, Shifted(n, 3, 5, false));
  TPUSIM_ASSIGN_OR_RETURN(Value acc, NumpyMatMul(n, a, w, kI32));
  const Shape& shape = Builder::ShapeOf(acc);
  const bool a_vec = Builder::RankOf(a) == 1, b_vec = Builder::RankOf(w) == 1;
  TPUSIM_ASSIGN_OR_RETURN(Value a_scale, MatrixParam(n, 1, a, true, kF32));
  TPUSIM_ASSIGN_OR_RETURN(Value b_scale, MatrixParam(n, 4, w, false, kF32));
  if ((a_vec && Builder::RankOf(a_scale) != 0) || (b_vec && Builder::RankOf(b_scale) != 0)) {
    return n.Invalid("a 1-D a or b needs a per-tensor scale");
  }
  TPUSIM_ASSIGN_OR_RETURN(a_scale, ScaleOfProduct(n, a_scale, shape, b_vec ? 1 : 0));
  TPUSIM_ASSIGN_OR_RETURN(b_scale, ScaleOfProduct(n, b_scale, shape, a_vec ? 2 : 0));
  if (n.input(6).type().num_elements() != 1) return n.Invalid("y_scale must be one value");
  Value y_scale = b.BroadcastTo(b.Reshape(b.Convert(n.input(6), kF32), {}), shape);
  return Requantize(n, acc, b.Div(b.Mul(a_scale, b_scale), y_scale), 7);
}

// ------------------------------------------------------------ convolutions

// Conv's checks of X [N, C, ...] and W [M, C/group, ...]; the window.
StatusOr<Window> ConvWindow(const Node& n, Value x, Value w, int64_t groups) {
  const Shape& xs = Builder::ShapeOf(x);
  const Shape& ws = Builder::ShapeOf(w);
  if (xs.size() < 3 || ws.size() != xs.size())
    return n.Invalid("X and W must be N x C x spatial...");
  if (groups < 1 || xs[1] % groups != 0 || ws[0] % groups != 0 || ws[1] * groups != xs[1]) {
    return n.Invalid("W's channels do not match X's in " + std::to_string(groups) + " groups");
  }
  return ReadWindow(n, xs, Shape(ws.begin() + 2, ws.end()));
}

// x (input `xi`) minus its per-tensor zero point and w (input `wi`) minus
// its per-tensor or per-output-channel one, in i32, convolved.
StatusOr<Value> IntegerConv(Node& n, int xi, int x_zp, int wi, int w_zp) {
  Builder& b = n.b();
  Value x = b.Convert(n.input(xi), kI32), w = b.Convert(n.input(wi), kI32);
  const int64_t groups = n.Int("group", 1);
  TPUSIM_ASSIGN_OR_RETURN(Window win, ConvWindow(n, x, w, groups));
  if (n.has_input(x_zp)) {
    if (n.input(x_zp).type().num_elements() != 1)
      return n.Invalid("x_zero_point must be one value");
    x = b.Sub(x, b.BroadcastTo(b.Reshape(b.Convert(n.input(x_zp), kI32), {}), Builder::ShapeOf(x)));
  }
  if (n.has_input(w_zp)) {
    TPUSIM_ASSIGN_OR_RETURN(Value z, AlongAxis(n, w_zp, Builder::ShapeOf(w), 0, kI32));
    w = b.Sub(w, z);
  }
  return Convolution(b, x, w, win, std::vector<int64_t>(Builder::RankOf(x) - 2, 1), groups);
}

Status ConvInteger(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(Value y, IntegerConv(n, 0, 2, 1, 3));
  n.SetOutput(0, y);
  return Status::Ok();
}

// Bias B is i32 at scale x_scale * w_scale, added to the accumulator.
Status QLinearConv(Node& n) {
  Builder& b = n.b();
  TPUSIM_ASSIGN_OR_RETURN(Value acc, IntegerConv(n, 0, 2, 3, 5));
  const Shape& shape = Builder::ShapeOf(acc);
  if (n.has_input(8)) {
    Value bias = b.Convert(n.input(8), kI32);
    if (Builder::RankOf(bias) != 1 || Builder::ShapeOf(bias)[0] != shape[1]) {
      return n.Invalid("B must be 1-D of the " + std::to_string(shape[1]) + " output channels");
    }
    acc = b.Add(acc, b.BroadcastInDim(bias, shape, {1}));
  }
  for (int i : {1, 6}) {
    if (n.input(i).type().num_elements() != 1)
      return n.Invalid("x_scale and y_scale must be one value");
  }
  auto scalar = [&](int i) {
    return b.BroadcastTo(b.Reshape(b.Convert(n.input(i), kF32), {}), shape);
  };
  TPUSIM_ASSIGN_OR_RETURN(Value w_scale, AlongAxis(n, 4, shape, 1, kF32));
  return Requantize(n, acc, b.Div(b.Mul(scalar(1), w_scale), scalar(6)), 7);
}

TPUSIM_REGISTER_ONNX_OP({"QuantizeLinear", QuantizeLinear});
TPUSIM_REGISTER_ONNX_OP({"DequantizeLinear", DequantizeLinear});
TPUSIM_REGISTER_ONNX_OP({"DynamicQuantizeLinear", DynamicQuantizeLinear});
TPUSIM_REGISTER_ONNX_OP({"MatMulInteger", MatMulInteger});
TPUSIM_REGISTER_ONNX_OP({"QLinearMatMul", QLinearMatMul});
TPUSIM_REGISTER_ONNX_OP({"ConvInteger", ConvInteger});
TPUSIM_REGISTER_ONNX_OP({"QLinearConv", QLinearConv});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
