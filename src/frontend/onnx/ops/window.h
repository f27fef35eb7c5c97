// Pieces the ONNX lowerings of matrix products and windowed ops share
// (nn.cc's MatMul, Conv and pools; quantize.cc's integer and quantized
// forms): numpy's matmul as one dot_general, the window attributes
// (kernel_shape, strides, dilations, pads, auto_pad) and an NC... x OI...
// stablehlo.convolution. Internal to src/frontend/onnx.
#ifndef TPUSIM_FRONTEND_ONNX_OPS_WINDOW_H_
#define TPUSIM_FRONTEND_ONNX_OPS_WINDOW_H_

#include <cstdint>
#include <vector>

#include "frontend/onnx/node.h"

namespace tpusim::frontend::onnx_import {

// numpy.matmul of x and y (a 1-D operand is a row or column that is dropped
// from the result; batch dimensions broadcast), one dot_general with a
// `result` element type. Invalid when they do not multiply.
StatusOr<Value> NumpyMatMul(Node& n, Value x, Value y, ElementType result);

// A window's geometry over the spatial dimensions of an NC... input.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, low, high;
};

// Reads kernel_shape (or `kernel`), strides, dilations, pads and auto_pad;
// with ceil_mode, the high padding also holds the last, partial window.
StatusOr<Window> ReadWindow(const Node& n, const Shape& input, std::vector<int64_t> kernel,
                            bool ceil_mode = false);

// The [spatial, 2] (low, high) padding attribute of convolution and
// reduce_window.
ir::Attribute Padding(const std::vector<int64_t>& low, const std::vector<int64_t>& high);

// stablehlo.convolution of NC... x with an OI... kernel, result of x's
// element type.
Value Convolution(Builder& b, Value x, Value w, const Window& win,
                  const std::vector<int64_t>& lhs_dilation, int64_t groups);

}  // namespace tpusim::frontend::onnx_import

#endif  // TPUSIM_FRONTEND_ONNX_OPS_WINDOW_H_
