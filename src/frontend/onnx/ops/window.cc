#include "frontend/onnx/ops/window.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace tpusim::frontend::onnx_import {
namespace {

using ir::Attribute;

Attribute ConvNumbers(int64_t spatial) {
  const std::vector<int64_t> dims = IndexRange(2, 2 + spatial);
  return Attribute::Struct("stablehlo.conv",
                           {{"input_batch_dimension", Attribute::Int(0)},
                            {"input_feature_dimension", Attribute::Int(1)},
                            {"input_spatial_dimensions", IntList(dims)},
                            {"kernel_input_feature_dimension", Attribute::Int(1)},
                            {"kernel_output_feature_dimension", Attribute::Int(0)},
                            {"kernel_spatial_dimensions", IntList(dims)},
                            {"output_batch_dimension", Attribute::Int(0)},
                            {"output_feature_dimension", Attribute::Int(1)},
                            {"output_spatial_dimensions", IntList(dims)}});
}

}  // namespace

StatusOr<Value> NumpyMatMul(Node& n, Value x, Value y, ElementType result) {
  Builder& b = n.b();
  const bool x_vec = Builder::RankOf(x) == 1, y_vec = Builder::RankOf(y) == 1;
  if (Builder::RankOf(x) == 0 || Builder::RankOf(y) == 0) return n.Invalid("scalar operands");
  if (x_vec) x = b.Reshape(x, {1, Builder::ShapeOf(x)[0]});
  if (y_vec) y = b.Reshape(y, {Builder::ShapeOf(y)[0], 1});
  const Shape& xs = Builder::ShapeOf(x);
  const Shape& ys = Builder::ShapeOf(y);
  const int64_t xr = static_cast<int64_t>(xs.size()), yr = static_cast<int64_t>(ys.size());
  if (xs[xr - 1] != ys[yr - 2]) {
    return n.Invalid("contracts " + x.type().ToString() + " with " + y.type().ToString());
  }
  Shape batch;
  if (!BroadcastShapes(Shape(xs.begin(), xs.end() - 2), Shape(ys.begin(), ys.end() - 2), &batch)) {
    return n.Invalid("batch dimensions do not broadcast");
  }
  const int64_t nb = static_cast<int64_t>(batch.size());
  Shape xb = batch, yb = batch;
  xb.insert(xb.end(), xs.end() - 2, xs.end());
  yb.insert(yb.end(), ys.end() - 2, ys.end());
  x = b.BroadcastTo(x, xb);
  y = b.BroadcastTo(y, yb);
  Value r = b.DotGeneral(x, y, IndexRange(0, nb), IndexRange(0, nb), {nb + 1}, {nb}, result);
  Shape out = batch;
  if (!x_vec) out.push_back(xs[xr - 2]);
  if (!y_vec) out.push_back(ys[yr - 1]);
  return b.Reshape(r, out);
}

StatusOr<Window> ReadWindow(const Node& n, const Shape& input, std::vector<int64_t> kernel,
                            bool ceil_mode) {
  const int64_t s = static_cast<int64_t>(input.size()) - 2;
  if (s < 1) return n.Invalid("needs an N x C x spatial... input");
  Window w;
  w.kernel = n.Ints("kernel_shape", kernel);
  w.strides = n.Ints("strides", std::vector<int64_t>(s, 1));
  w.dilations = n.Ints("dilations", std::vector<int64_t>(s, 1));
  std::vector<int64_t> pads = n.Ints("pads", std::vector<int64_t>(2 * s, 0));
  if (static_cast<int64_t>(w.kernel.size()) != s || static_cast<int64_t>(w.strides.size()) != s ||
      static_cast<int64_t>(w.dilations.size()) != s || static_cast<int64_t>(pads.size()) != 2 * s) {
    return n.Invalid("kernel_shape, strides, dilations and pads must cover the " +
                     std::to_string(s) + " spatial dimensions");
  }
  for (int64_t i = 0; i < s; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1) {
      return n.Invalid("kernel sizes, strides and dilations must be positive");
    }
  }
  w.low.assign(pads.begin(), pads.begin() + s);
  w.high.assign(pads.begin() + s, pads.end());
  const std::string auto_pad = n.String("auto_pad", "NOTSET");
  for (int64_t i = 0; i < s; ++i) {
    const int64_t in = input[2 + i], span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + span - in);
      const int64_t small = total / 2;
      w.low[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.high[i] = total - w.low[i];
    } else if (auto_pad == "VALID") {
      w.low[i] = w.high[i] = 0;
    } else if (auto_pad != "NOTSET") {
      return n.Invalid("auto_pad '" + auto_pad + "'");
    }
    if (ceil_mode) {
      // Room for the last, partial window: ceil instead of floor.
      const int64_t padded = in + w.low[i] + w.high[i];
      const int64_t out = (padded - span + w.strides[i] - 1) / w.strides[i] + 1;
      // A window that would start in the high padding alone is dropped.
      const int64_t last = (out - 1) * w.strides[i] >= in + w.low[i] ? out - 1 : out;
      w.high[i] += std::max<int64_t>(0, (last - 1) * w.strides[i] + span - padded);
    }
  }
  return w;
}

Attribute Padding(const std::vector<int64_t>& low, const std::vector<int64_t>& high) {
  std::vector<uint8_t> bytes(low.size() * 2 * sizeof(int64_t));
  std::vector<int64_t> flat;
  for (size_t i = 0; i < low.size(); ++i) {
    flat.push_back(low[i]);
    flat.push_back(high[i]);
  }
  if (!flat.empty()) std::memcpy(bytes.data(), flat.data(), bytes.size());
  return Attribute::DenseElements(
      ir::Type::Tensor(ElementType::kSI64, {static_cast<int64_t>(low.size()), 2}),
      std::move(bytes));
}

Value Convolution(Builder& b, Value x, Value w, const Window& win,
                  const std::vector<int64_t>& lhs_dilation, int64_t groups) {
  const Shape& xs = Builder::ShapeOf(x);
  const int64_t s = static_cast<int64_t>(xs.size()) - 2;
  Shape out = {xs[0], Builder::ShapeOf(w)[0]};
  for (int64_t i = 0; i < s; ++i) {
    const int64_t in = (xs[2 + i] - 1) * lhs_dilation[i] + 1 + win.low[i] + win.high[i];
    const int64_t span = (win.kernel[i] - 1) * win.dilations[i] + 1;
    out.push_back(in < span ? 0 : (in - span) / win.strides[i] + 1);
  }
  Attribute precision = Attribute::Array({Attribute::Enum("stablehlo.precision", "DEFAULT"),
                                          Attribute::Enum("stablehlo.precision", "DEFAULT")});
  return b
      .Emit("stablehlo.convolution", {x, w}, {ir::Type::Tensor(Builder::ElementOf(x), out)},
            {{"window_strides", I64Array(win.strides)},
             {"padding", Padding(win.low, win.high)},
             {"lhs_dilation", I64Array(lhs_dilation)},
             {"rhs_dilation", I64Array(win.dilations)},
             {"dimension_numbers", ConvNumbers(s)},
             {"feature_group_count", Attribute::Int(groups, ElementType::kSI64)},
             {"batch_group_count", Attribute::Int(1, ElementType::kSI64)},
             {"precision_config", precision}})
      ->result(0);
}

}  // namespace tpusim::frontend::onnx_import
