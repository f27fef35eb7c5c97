// The window walk behind stablehlo.reduce_window and the
// stablehlo.dynamic_reduce_window custom call. Internal to src/ops.
#ifndef TPUSIM_OPS_REDUCE_WINDOW_H_
#define TPUSIM_OPS_REDUCE_WINDOW_H_

#include <functional>
#include <span>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

// The window geometry of one reduction, every parameter filled in.
struct Window {
  ir::Shape input;  // operand shape
  std::vector<int64_t> dims, strides, base_dilations, window_dilations, pad_low, pad_high;

  int64_t rank() const { return static_cast<int64_t>(input.size()); }

  // Flat input offset of window element `w` of output position `out`, or -1
  // where it falls on padding or between dilated input elements.
  int64_t InputOffset(std::span<const int64_t> out, std::span<const int64_t> w,
                      std::span<const int64_t> input_strides) const;

  // Number of windows along each dimension (the spec's num_windows).
  ir::Shape OutputShape() const;
};

// The window over `input`, `padding` flat as [rank, 2] (low, high); an
// error names the parameter that has the wrong length or a value <= 0.
StatusOr<Window> MakeWindow(ir::Shape input, std::vector<int64_t> dims,
                            std::vector<int64_t> strides, std::vector<int64_t> base_dilations,
                            std::vector<int64_t> window_dilations,
                            const std::vector<int64_t>& padding);

// Folds (accumulators..., elements...) into new accumulators.
using WindowReducer = std::function<StatusOr<std::vector<Tensor>>(std::span<const Tensor> args)>;

// reduce_window's values: `in` is N inputs then N scalar inits, `results` N
// allocated arrays of the window's output shape. Each window is folded left
// from the inits in ascending lexicographic order, padding and dilation
// holes reading as the init value.
StatusOr<std::vector<Tensor>> ReduceWindows(const Window& w, std::span<const Tensor> in,
                                            std::vector<Tensor> results,
                                            const WindowReducer& reduce);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_REDUCE_WINDOW_H_
