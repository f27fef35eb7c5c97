// ONNX's matrix products and windowed ops: MatMul and Gemm (dot_general,
// DEFAULT precision: the TPU's bf16 passes under TPU numerics), Conv and
// ConvTranspose (convolution), and the pools (reduce_window). Layouts are
// ONNX's: NCHW activations, OIHW kernels.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "frontend/onnx/node.h"
#include "frontend/onnx/ops/window.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::Attribute;
using ir::ElementType;

Status MatMul(Node& n) {
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(Value r, NumpyMatMul(n, x, n.input(1), Builder::ElementOf(x)));
  n.SetOutput(0, r);
  return Status::Ok();
}

Status Gemm(Node& n) {
  Builder& b = n.b();
  Value a = n.input(0), w = n.input(1);
  if (Builder::RankOf(a) != 2 || Builder::RankOf(w) != 2) return n.Invalid("needs 2-D A and B");
  const bool ta = n.Int("transA", 0) != 0, tb = n.Int("transB", 0) != 0;
  if (Builder::ShapeOf(a)[ta ? 0 : 1] != Builder::ShapeOf(w)[tb ? 1 : 0]) {
    return n.Invalid("A and B do not multiply");
  }
  Value y = b.DotGeneral(a, w, {}, {}, {ta ? 0 : 1}, {tb ? 1 : 0}, Builder::ElementOf(a));
  const double alpha = n.Float("alpha", 1.0f), beta = n.Float("beta", 1.0f);
  if (alpha != 1) y = b.Mul(y, b.FullLike(y, alpha));
  if (n.has_input(2) && beta != 0) {
    Value c = n.input(2);
    Shape out;
    if (!BroadcastShapes(Builder::ShapeOf(c), Builder::ShapeOf(y), &out) ||
        out != Builder::ShapeOf(y)) {
      return n.Invalid("C does not broadcast to the product's shape");
    }
    c = b.BroadcastTo(c, Builder::ShapeOf(y));
    if (beta != 1) c = b.Mul(c, b.FullLike(c, beta));
    y = b.Add(y, c);
  }
  n.SetOutput(0, y);
  return Status::Ok();
}

// Adds bias B [M] along dimension 1.
Value AddChannelBias(Builder& b, Value y, Value bias) {
  return b.Add(y, b.BroadcastInDim(bias, Builder::ShapeOf(y), {1}));
}

Status Conv(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0), w = n.input(1);
  const Shape& xs = Builder::ShapeOf(x);
  const Shape& ws = Builder::ShapeOf(w);
  if (xs.size() < 3 || ws.size() != xs.size())
    return n.Invalid("X and W must be N x C x spatial...");
  const int64_t groups = n.Int("group", 1);
  if (groups < 1 || xs[1] % groups != 0 || ws[0] % groups != 0 || ws[1] * groups != xs[1]) {
    return n.Invalid("W's channels do not match X's in " + std::to_string(groups) + " groups");
  }
  TPUSIM_ASSIGN_OR_RETURN(Window win, ReadWindow(n, xs, Shape(ws.begin() + 2, ws.end())));
  Value y = Convolution(b, x, w, win, std::vector<int64_t>(xs.size() - 2, 1), groups);
  if (n.has_input(2)) y = AddChannelBias(b, y, n.input(2));
  n.SetOutput(0, y);
  return Status::Ok();
}

Status ConvTranspose(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0), w = n.input(1);
  const Shape& xs = Builder::ShapeOf(x);
  const Shape ws = Builder::ShapeOf(w);
  const int64_t s = static_cast<int64_t>(xs.size()) - 2;
  const int64_t groups = n.Int("group", 1);
  if (s < 1 || ws.size() != xs.size() || groups < 1 || ws[0] != xs[1] || xs[1] % groups != 0) {
    return n.Invalid("W must be C x M/group x kernel... for X's C channels");
  }
  const std::vector<int64_t> kernel = n.Ints("kernel_shape", Shape(ws.begin() + 2, ws.end()));
  const std::vector<int64_t> strides = n.Ints("strides", std::vector<int64_t>(s, 1));
  const std::vector<int64_t> dil = n.Ints("dilations", std::vector<int64_t>(s, 1));
  const std::vector<int64_t> out_pad = n.Ints("output_padding", std::vector<int64_t>(s, 0));
  std::vector<int64_t> pads = n.Ints("pads", std::vector<int64_t>(2 * s, 0));
  const std::vector<int64_t> out_shape = n.Ints("output_shape");
  const std::string auto_pad = n.String("auto_pad", "NOTSET");
  if (static_cast<int64_t>(strides.size()) != s || static_cast<int64_t>(dil.size()) != s ||
      static_cast<int64_t>(out_pad.size()) != s || static_cast<int64_t>(pads.size()) != 2 * s) {
    return n.Invalid(
        "strides, dilations, output_padding and pads must cover the spatial dimensions");
  }
  for (int64_t i = 0; i < s; ++i) {
    const int64_t span = (kernel[i] - 1) * dil[i] + 1;
    const int64_t full = strides[i] * (xs[2 + i] - 1) + out_pad[i] + span;
    int64_t want = -1;
    if (!out_shape.empty()) {
      want = out_shape[out_shape.size() - s + i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      want = xs[2 + i] * strides[i];
    }
    if (want >= 0) {
      // Negative when output_shape asks for more than the stride gives: the
      // extra rows come from padding the end (floor division, as ONNX's).
      const int64_t total = full - want;
      const int64_t small = total >= 0 ? total / 2 : -((-total + 1) / 2);
      pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[s + i] = total - pads[i];
    } else if (auto_pad == "VALID") {
      pads[i] = pads[s + i] = 0;
    }
  }
  // The kernel [C, M/g, k...] as a forward convolution's [M, C/g, k...],
  // flipped in space.
  const int64_t c = ws[0], m = ws[1] * groups;
  Shape grouped = {groups, c / groups, ws[1]};
  grouped.insert(grouped.end(), ws.begin() + 2, ws.end());
  std::vector<int64_t> perm = {0, 2, 1};
  for (int64_t i = 0; i < s; ++i) perm.push_back(3 + i);
  Value k = b.Transpose(b.Reshape(w, grouped), perm);
  Shape forward = {m, c / groups};
  forward.insert(forward.end(), ws.begin() + 2, ws.end());
  k = b.Reverse(b.Reshape(k, forward), IndexRange(2, 2 + s));
  Window win{kernel, std::vector<int64_t>(s, 1), dil, {}, {}};
  for (int64_t i = 0; i < s; ++i) {
    const int64_t edge = (kernel[i] - 1) * dil[i];
    win.low.push_back(edge - pads[i]);
    win.high.push_back(edge - pads[s + i] + out_pad[i]);
  }
  for (int64_t i = 0; i < s; ++i) {
    if (win.low[i] < 0 || win.high[i] < 0) return n.Unsupported("pads larger than the kernel");
  }
  Value y = Convolution(b, x, k, win, strides, groups);
  if (n.has_input(2)) y = AddChannelBias(b, y, n.input(2));
  n.SetOutput(0, y);
  return Status::Ok();
}

// A reduce_window's attributes for `w` over the spatial dimensions of an
// NC... input of shape `xs`, and its result's shape.
struct WindowOp {
  Shape out;
  std::vector<ir::NamedAttribute> attrs;
};

WindowOp WindowOf(const Shape& xs, const Window& w) {
  const int64_t s = static_cast<int64_t>(xs.size()) - 2;
  std::vector<int64_t> dims = {1, 1}, strides = {1, 1}, dil = {1, 1}, low = {0, 0}, high = {0, 0};
  Shape out = {xs[0], xs[1]};
  for (int64_t i = 0; i < s; ++i) {
    dims.push_back(w.kernel[i]);
    strides.push_back(w.strides[i]);
    dil.push_back(w.dilations[i]);
    low.push_back(w.low[i]);
    high.push_back(w.high[i]);
    const int64_t in = xs[2 + i] + w.low[i] + w.high[i];
    const int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    out.push_back(in < span ? 0 : (in - span) / w.strides[i] + 1);
  }
  return {out,
          {{"window_dimensions", I64Array(dims)},
           {"window_strides", I64Array(strides)},
           {"base_dilations", I64Array(std::vector<int64_t>(s + 2, 1))},
           {"window_dilations", I64Array(dil)},
           {"padding", Padding(low, high)}}};
}

// stablehlo.reduce_window over the spatial dimensions of NC... x.
Value ReduceWindow(Builder& b, Value x, Value init, const Window& w, std::string_view body) {
  const Shape& xs = Builder::ShapeOf(x);
  const WindowOp win = WindowOf(xs, w);
  ir::Operation* op = b.Emit("stablehlo.reduce_window", {x, init},
                             {ir::Type::Tensor(Builder::ElementOf(x), win.out)}, win.attrs);
  b.AddScalarBody(op, Builder::ElementOf(x), body);
  return op->result(0);
}

// Each window's maximum of NC... x and its flat row-major index into x, the
// first in row-major order on ties (as onnxruntime's loops): a
// stablehlo.reduce_window of (value, iota index) pairs. Padding reads
// (lowest, x's size), an index no element has.
std::pair<Value, Value> MaxAndIndex(Builder& b, Value x, double lowest, const Window& w) {
  const Shape& xs = Builder::ShapeOf(x);
  const int64_t size = x.type().num_elements();
  Value idx = b.Reshape(b.Iota({size}, 0, ElementType::kSI64), xs);
  const WindowOp win = WindowOf(xs, w);
  const ElementType e = Builder::ElementOf(x);
  ir::Operation* op = b.Emit(
      "stablehlo.reduce_window",
      {x, idx, b.ScalarLike(x, lowest), b.Scalar(ElementType::kSI64, static_cast<double>(size))},
      {ir::Type::Tensor(e, win.out), ir::Type::Tensor(ElementType::kSI64, win.out)}, win.attrs);
  const ir::Type sv = ir::Type::Tensor(e, {}), si = ir::Type::Tensor(ElementType::kSI64, {});
  b.AddRegion(op, {sv, si, sv, si}, [&](const std::vector<Value>& a) {
    Value larger = b.Compare("GT", a[0], a[2]);
    Value earlier = b.Binary("and", b.Compare("EQ", a[0], a[2]), b.Compare("LT", a[1], a[3]));
    Value take = b.Binary("or", larger, earlier);
    return std::vector<Value>{b.Select(take, a[0], a[2]), b.Select(take, a[1], a[3])};
  });
  return {op->result(0), op->result(1)};
}

// A flat row-major index into NC... `xs` with its spatial part renumbered
// column-major (storage_order 1); N and C stay row-major.
Value ColumnMajor(Builder& b, Value idx, const Shape& xs) {
  int64_t plane = 1;
  for (size_t d = 2; d < xs.size(); ++d) plane *= xs[d];
  auto k = [&](int64_t v) { return b.FullLike(idx, static_cast<double>(v)); };
  Value p = b.Binary("remainder", idx, k(plane));
  Value result = b.Sub(idx, p);
  int64_t col_stride = plane;
  for (size_t d = xs.size() - 1; d >= 2; --d) {
    // Row-major, the last dimension varies fastest; column-major, the first.
    col_stride /= xs[d];
    result = b.Add(result, b.Mul(b.Binary("remainder", p, k(xs[d])), k(col_stride)));
    p = b.Div(p, k(xs[d]));
  }
  return result;
}

Status MaxPool(Node& n) {
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(Window w,
                          ReadWindow(n, Builder::ShapeOf(x), {}, n.Int("ceil_mode", 0) != 0));
  const double lowest = ir::IsFloat(Builder::ElementOf(x))
                            ? -std::numeric_limits<double>::infinity()
                            : std::numeric_limits<int64_t>::min();
  const double init = ir::IsUnsignedInt(Builder::ElementOf(x)) ? 0 : lowest;
  if (!n.wants_output(1)) {
    n.SetOutput(0, ReduceWindow(n.b(), x, n.b().ScalarLike(x, init), w, "maximum"));
    return Status::Ok();
  }
  // Indices (opset 8): flat indices into X, counting N and C; storage_order
  // 1 numbers the spatial dimensions column-major.
  auto [y, idx] = MaxAndIndex(n.b(), x, init, w);
  if (n.Int("storage_order", 0) != 0) idx = ColumnMajor(n.b(), idx, Builder::ShapeOf(x));
  n.SetOutput(0, y);
  n.SetOutput(1, idx);
  return Status::Ok();
}

Status AveragePool(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const bool ceil_mode = n.Int("ceil_mode", 0) != 0;
  TPUSIM_ASSIGN_OR_RETURN(Window w, ReadWindow(n, Builder::ShapeOf(x), {}, ceil_mode));
  Value sum = ReduceWindow(b, x, b.ScalarLike(x, 0), w, "add");
  Value count;
  if (n.Int("count_include_pad", 0) != 0) {
    // The pads count, the ceil-mode overhang does not: count over ones
    // padded with ones, the overhang added as zeros by the window.
    TPUSIM_ASSIGN_OR_RETURN(Window pads, ReadWindow(n, Builder::ShapeOf(x), {}, false));
    const Shape& xs = Builder::ShapeOf(x);
    std::vector<int64_t> low = {0, 0}, high = {0, 0};
    Window overhang = w;
    for (size_t i = 0; i < w.kernel.size(); ++i) {
      low.push_back(pads.low[i]);
      high.push_back(pads.high[i]);
      overhang.low[i] = 0;
      overhang.high[i] = w.high[i] - pads.high[i];
    }
    Value ones =
        b.Pad(b.FullLike(x, 1), b.ScalarLike(x, 1), low, high, std::vector<int64_t>(xs.size(), 0));
    count = ReduceWindow(b, ones, b.ScalarLike(x, 0), overhang, "add");
  } else {
    count = ReduceWindow(b, b.FullLike(x, 1), b.ScalarLike(x, 0), w, "add");
  }
  n.SetOutput(0, b.Div(sum, count));
  return Status::Ok();
}

Status GlobalPool(Node& n, std::string_view body, bool mean) {
  Builder& b = n.b();
  Value x = n.input(0);
  const Shape& xs = Builder::ShapeOf(x);
  if (xs.size() < 3) return n.Invalid("needs an N x C x spatial... input");
  const double lowest = -std::numeric_limits<double>::infinity();
  Value init = b.ScalarLike(x, mean ? 0 : lowest);
  Value r = b.Reduce(x, init, IndexRange(2, static_cast<int64_t>(xs.size())), body);
  if (mean) {
    const int64_t count = x.type().num_elements() / (xs[0] * xs[1]);
    r = b.Div(r, b.FullLike(r, static_cast<double>(count)));
  }
  Shape out = {xs[0], xs[1]};
  out.resize(xs.size(), 1);
  n.SetOutput(0, b.Reshape(r, out));
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"MatMul", MatMul});
TPUSIM_REGISTER_ONNX_OP({"Gemm", Gemm});
TPUSIM_REGISTER_ONNX_OP({"Conv", Conv});
TPUSIM_REGISTER_ONNX_OP({"ConvTranspose", ConvTranspose});
TPUSIM_REGISTER_ONNX_OP({"MaxPool", MaxPool});
TPUSIM_REGISTER_ONNX_OP({"AveragePool", AveragePool});
TPUSIM_REGISTER_ONNX_OP({"GlobalAveragePool", [](Node& n) { return GlobalPool(n, "add", true); }});
TPUSIM_REGISTER_ONNX_OP({"GlobalMaxPool", [](Node& n) { return GlobalPool(n, "maximum", false); }});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
