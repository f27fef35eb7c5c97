// ONNX's ops that read their input at computed positions: GridSample and
// RoiAlign (coordinates and interpolation weights computed by the program
// from the grid or the boxes, the pixels read by one stablehlo.gather at
// those run-time indices), MaxUnpool (stablehlo.scatter at the run-time
// indices), ReverseSequence (a gather at indices computed from the run-time
// sequence_lens) and Compress (its condition fixes the output's length, so
// it is read at import; the kept rows are gathered at run time).
//
// Refused: GridSample of other than 4-D inputs (opset 16 has only those)
// and its linear and cubic modes on integer inputs; RoiAlign's adaptive
// sampling (sampling_ratio 0) when its boxes are not known at import, since
// the number of samples per bin comes from them.
#include <algorithm>
#include <cmath>
#include <limits>

#include "frontend/onnx/node.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::Attribute;
using ir::ElementType;

// stablehlo.gather of x at `idx` [batch..., k] (index_vector_dim last):
// component j indexes dimension map[j], each collapsed; the other
// dimensions of x are whole slices, after the batch dimensions.
Value GatherAt(Builder& b, Value x, Value idx, const std::vector<int64_t>& map) {
  const Shape& xs = Builder::ShapeOf(x);
  const Shape& is = Builder::ShapeOf(idx);
  const int64_t batch = static_cast<int64_t>(is.size()) - 1;
  Shape out(is.begin(), is.end() - 1);
  std::vector<int64_t> sizes = xs, collapsed = map;
  for (int64_t d : map) sizes[d] = 1;
  std::sort(collapsed.begin(), collapsed.end());
  for (int64_t d = 0; d < static_cast<int64_t>(xs.size()); ++d) {
    if (std::find(map.begin(), map.end(), d) == map.end()) out.push_back(xs[d]);
  }
  Attribute dnums = Attribute::Struct(
      "stablehlo.gather",
      {{"offset_dims", IntList(IndexRange(batch, static_cast<int64_t>(out.size())))},
       {"collapsed_slice_dims", IntList(collapsed)},
       {"operand_batching_dims", IntList({})},
       {"start_indices_batching_dims", IntList({})},
       {"start_index_map", IntList(map)},
       {"index_vector_dim", Attribute::Int(batch)}});
  return b
      .Emit("stablehlo.gather", {x, idx}, {ir::Type::Tensor(Builder::ElementOf(x), out)},
            {{"dimension_numbers", dnums},
             {"slice_sizes", I64Array(sizes)},
             {"indices_are_sorted", Attribute::Bool(false)}})
      ->result(0);
}

// Values of one shape S stacked along a new last dimension: [S..., k].
Value Stack(Builder& b, const std::vector<Value>& parts) {
  Shape one = Builder::ShapeOf(parts[0]);
  one.push_back(1);
  std::vector<Value> r;
  for (Value v : parts) r.push_back(b.Reshape(v, one));
  return b.Concat(r, static_cast<int64_t>(one.size()) - 1);
}

// The pixels of NHWC `x` at (batch, row, column), si64 indices of one shape
// S: [S..., C]. Indices out of range are clamped, as stablehlo.gather's.
Value Pixels(Builder& b, Value nhwc, Value n, Value y, Value x) {
  return GatherAt(b, nhwc, Stack(b, {n, y, x}), {0, 1, 2});
}

Value Scalar(Builder& b, Value like, double v) { return b.ScalarLike(like, v); }

// Integer-valued float coordinates as in-range si64 indices, and whether
// they were in range [0, size).
struct Index {
  Value at, valid;
};

Index ToIndex(Builder& b, Value c, int64_t size) {
  Value valid = b.Binary("and", b.Compare("GE", c, Scalar(b, c, 0)),
                         b.Compare("LE", c, Scalar(b, c, static_cast<double>(size - 1))));
  Value clamped = b.Clamp(Scalar(b, c, 0), c, Scalar(b, c, static_cast<double>(size - 1)));
  return {b.Convert(clamped, ElementType::kSI64), valid};
}

// ---- GridSample (opset 16) ----
//
// PyTorch's grid_sample, which ONNX's cases come from: grid [N, Ho, Wo, 2]
// holds (x, y) in [-1, 1]; align_corners maps -1 and 1 to the corner
// pixels' centers, otherwise to the image's edges. padding_mode border
// clamps a coordinate into the image, reflection mirrors it at the borders
// (the edges, or the corner centers with align_corners) and then clamps;
// zeros reads 0 outside. bilinear and nearest (half to even) pad the
// coordinate, bicubic (A = -0.75) pads each of its 4 taps.

struct Taps {
  std::vector<Value> coords, weights;  // float coordinates, each of grid's shape
};

// v mirrored at twice_low / 2 and twice_high / 2 (PyTorch's
// reflect_coordinates).
Value Reflect(Builder& b, Value v, double twice_low, double twice_high) {
  if (twice_low == twice_high) return b.FullLike(v, 0);
  const double min = twice_low / 2, span = (twice_high - twice_low) / 2;
  Value in = b.Unary("abs", b.Sub(v, b.FullLike(v, min)));
  Value extra = b.Binary("remainder", in, b.FullLike(v, span));
  Value flips = b.Unary("floor", b.Div(in, b.FullLike(v, span)));
  Value even = b.Compare("EQ", b.Binary("remainder", flips, b.FullLike(v, 2)), b.FullLike(v, 0));
  return b.Select(even, b.Add(extra, b.FullLike(v, min)),
                  b.Add(b.Sub(b.FullLike(v, span), extra), b.FullLike(v, min)));
}

Value PadCoord(Builder& b, Value v, int64_t size, const std::string& padding, bool align) {
  const double hi = static_cast<double>(size - 1);
  if (padding == "zeros") return v;
  if (padding == "reflection") {
    v = align ? Reflect(b, v, 0, 2 * hi) : Reflect(b, v, -1, 2.0 * size - 1);
  }
  return b.Clamp(Scalar(b, v, 0), v, Scalar(b, v, hi));
}

// The cubic convolution weights of taps floor-1 .. floor+2 at fraction t.
std::vector<Value> CubicWeights(Builder& b, Value t) {
  constexpr double kA = -0.75;
  auto k = [&](double v) { return b.FullLike(t, v); };
  auto near = [&](Value x) {  // |x| <= 1
    return b.Add(b.Mul(b.Mul(b.Sub(b.Mul(k(kA + 2), x), k(kA + 3)), x), x), k(1));
  };
  auto far = [&](Value x) {  // 1 < |x| < 2
    Value r = b.Sub(b.Mul(k(kA), x), k(5 * kA));
    r = b.Add(b.Mul(r, x), k(8 * kA));
    return b.Sub(b.Mul(r, x), k(4 * kA));
  };
  Value u = b.Sub(k(1), t);
  return {far(b.Add(t, k(1))), near(t), near(u), far(b.Add(u, k(1)))};
}

Taps AxisTaps(Builder& b, Value g, int64_t size, const std::string& mode,
              const std::string& padding, bool align) {
  auto k = [&](double v) { return b.FullLike(g, v); };
  const double s = static_cast<double>(size);
  Value one = k(1);
  Value u = align ? b.Mul(b.Div(b.Add(g, one), k(2)), k(s - 1))
                  : b.Div(b.Sub(b.Mul(b.Add(g, one), k(s)), one), k(2));
  if (mode == "nearest") {
    return {{b.Unary("round_nearest_even", PadCoord(b, u, size, padding, align))}, {one}};
  }
  if (mode == "bilinear") {
    Value p = PadCoord(b, u, size, padding, align);
    Value f = b.Unary("floor", p);
    Value t = b.Sub(p, f);
    return {{f, b.Add(f, one)}, {b.Sub(one, t), t}};
  }
  Value f = b.Unary("floor", u);
  Taps taps{{}, CubicWeights(b, b.Sub(u, f))};
  for (int i = -1; i <= 2; ++i)
    taps.coords.push_back(PadCoord(b, b.Add(f, k(i)), size, padding, align));
  return taps;
}

Status GridSample(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0), grid = n.input(1);
  const Shape xs = Builder::ShapeOf(x), gs = Builder::ShapeOf(grid);
  if (xs.size() != 4) return n.Unsupported("GridSample of other than 4-D inputs");
  if (gs.size() != 4 || gs[0] != xs[0] || gs[3] != 2) {
    return n.Invalid("grid must be N x H_out x W_out x 2 for X's N");
  }
  std::string mode = n.String("mode", "bilinear");
  if (mode == "linear") mode = "bilinear";  // opset 20's names
  if (mode == "cubic") mode = "bicubic";
  const std::string padding = n.String("padding_mode", "zeros");
  const bool align = n.Int("align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
    return n.Unsupported("mode '" + mode + "'");
  }
  if (padding != "zeros" && padding != "border" && padding != "reflection") {
    return n.Unsupported("padding_mode '" + padding + "'");
  }
  const ElementType e = Builder::ElementOf(x);
  if (mode != "nearest" && !ir::IsFloat(e)) return n.Unsupported(mode + " sampling of integers");
  const Shape out = {gs[0], gs[1], gs[2]};
  Value gx = b.Reshape(b.SliceDim(grid, 3, 0, 1), out);
  Value gy = b.Reshape(b.SliceDim(grid, 3, 1, 2), out);
  Taps tx = AxisTaps(b, gx, xs[3], mode, padding, align);
  Taps ty = AxisTaps(b, gy, xs[2], mode, padding, align);
  std::vector<Value> ns, rows, cols, valid, weights;
  Value batch = b.Iota(out, 0, ElementType::kSI64);
  for (size_t i = 0; i < ty.coords.size(); ++i) {
    Index row = ToIndex(b, ty.coords[i], xs[2]);
    for (size_t j = 0; j < tx.coords.size(); ++j) {
      Index col = ToIndex(b, tx.coords[j], xs[3]);
      ns.push_back(batch);
      rows.push_back(row.at);
      cols.push_back(col.at);
      valid.push_back(b.Binary("and", row.valid, col.valid));
      weights.push_back(b.Mul(ty.weights[i], tx.weights[j]));
    }
  }
  // [N, Ho, Wo, taps, C]: zero outside the image, weighted, summed.
  Value nhwc = b.Transpose(x, {0, 2, 3, 1});
  Value v = Pixels(b, nhwc, Stack(b, ns), Stack(b, rows), Stack(b, cols));
  const Shape& vs = Builder::ShapeOf(v);
  v = b.Select(b.BroadcastInDim(Stack(b, valid), vs, {0, 1, 2, 3}), v, b.ScalarLike(v, 0));
  if (mode != "nearest") {
    Value w = b.Convert(Stack(b, weights), e);
    v = b.Mul(v, b.BroadcastInDim(w, vs, {0, 1, 2, 3}));
  }
  Value y = b.Reduce(v, b.ScalarLike(v, 0), {3}, "add");
  n.SetOutput(0, b.Transpose(y, {0, 3, 1, 2}));
  return Status::Ok();
}

// ---- RoiAlign (opsets 10, 16) ----
//
// As ONNX's reference (onnxruntime's, from Caffe2): each box
// (x1, y1, x2, y2) * spatial_scale, less 0.5 under half_pixel (opset 16's
// default; opset 10 is output_half_pixel), split into output_height x
// output_width bins of sampling_ratio^2 samples (0: ceil(bin size) per
// axis and box, the counts read from the boxes at import). A sample
// bilinearly interpolates X, clamped into the image, and counts 0 when more
// than a pixel outside it. avg averages a bin's samples; max takes the
// largest of the samples' four weighted corner values.

// One axis of the samples: for each box, bin and sample, the two pixels
// around it and their weights, and whether it lies outside the image.
struct SampleAxis {
  Value low, high, w_low, w_high, outside;  // [R, bins, samples]
};

SampleAxis AxisSamples(Builder& b, Value start, Value bin, Value grid, int64_t bins,
                       int64_t samples, int64_t size) {
  const int64_t r = Builder::ShapeOf(start)[0];
  const Shape s = {r, bins, samples};
  const ElementType e = Builder::ElementOf(start);
  auto per_box = [&](Value v) { return b.BroadcastInDim(v, s, {0}); };
  auto k = [&](double v) { return b.Splat(e, v, s); };
  Value p = b.Iota(s, 1, e), i = b.Iota(s, 2, e);
  Value bin_s = per_box(bin);
  Value c = b.Add(b.Add(per_box(start), b.Mul(p, bin_s)),
                  b.Div(b.Mul(b.Add(i, k(0.5)), bin_s), per_box(grid)));
  const double last = static_cast<double>(size - 1);
  SampleAxis a;
  a.outside =
      b.Binary("or", b.Compare("LT", c, k(-1)), b.Compare("GT", c, k(static_cast<double>(size))));
  c = b.Max(c, k(0));
  Value low = b.Unary("floor", c);
  Value edge = b.Compare("GE", low, k(last));
  low = b.Select(edge, k(last), low);
  Value high = b.Select(edge, k(last), b.Add(low, k(1)));
  c = b.Select(edge, k(last), c);
  a.w_high = b.Sub(c, low);
  a.w_low = b.Sub(k(1), a.w_high);
  a.low = b.Convert(low, ElementType::kSI64);
  a.high = b.Convert(high, ElementType::kSI64);
  return a;
}

// The samples per bin of each box along one axis when sampling_ratio is 0:
// ceil(the box's extent / bins), computed as the reference does.
std::vector<int64_t> AdaptiveGrid(const std::vector<double>& rois, int axis, int64_t bins,
                                  double scale, bool half_pixel) {
  std::vector<int64_t> g;
  for (size_t r = 0; r + 3 < rois.size(); r += 4) {
    const double off = half_pixel ? 0.5 : 0;
    double extent = (rois[r + 2 + axis] * scale - off) - (rois[r + axis] * scale - off);
    if (!half_pixel) extent = std::max(extent, 1.0);
    g.push_back(static_cast<int64_t>(std::ceil(extent / static_cast<double>(bins))));
  }
  return g;
}

Status RoiAlign(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0), rois = n.input(1), batch_idx = n.input(2);
  const Shape xs = Builder::ShapeOf(x);
  const ElementType e = Builder::ElementOf(x);
  if (xs.size() != 4 || !ir::IsFloat(e)) return n.Invalid("X must be N x C x H x W floats");
  const Shape rs = Builder::ShapeOf(rois);
  if (rs.size() != 2 || rs[1] != 4 || Builder::ShapeOf(batch_idx) != Shape{rs[0]}) {
    return n.Invalid("rois must be num_rois x 4 and batch_indices num_rois");
  }
  const int64_t nr = rs[0], ph = n.Int("output_height", 1), pw = n.Int("output_width", 1);
  const int64_t ratio = n.Int("sampling_ratio", 0);
  const double scale = n.Float("spatial_scale", 1.0f);
  const std::string mode = n.String("mode", "avg");
  const std::string ctm = n.String("coordinate_transformation_mode",
                                   n.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (mode != "avg" && mode != "max") return n.Unsupported("mode '" + mode + "'");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") {
    return n.Unsupported("coordinate_transformation_mode '" + ctm + "'");
  }
  if (ph < 1 || pw < 1) return n.Invalid("output_height and output_width must be positive");
  const bool half = ctm == "half_pixel";
  std::vector<int64_t> gh(nr, ratio), gw(nr, ratio);
  if (ratio <= 0) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<double> known,
                            n.KnownDoubles(1, "rois (their sample counts, with sampling_ratio 0)"));
    gh = AdaptiveGrid(known, 1, ph, scale, half);
    gw = AdaptiveGrid(known, 0, pw, scale, half);
  }
  const int64_t mh = std::max<int64_t>(1, *std::max_element(gh.begin(), gh.end()));
  const int64_t mw = std::max<int64_t>(1, *std::max_element(gw.begin(), gw.end()));
  // Per box: the start and bin size of each axis, and its sample counts.
  Value box = b.Convert(rois, e);
  auto col = [&](int64_t c) {
    Value v = b.Reshape(b.SliceDim(box, 1, c, c + 1), {nr});
    v = b.Mul(v, b.FullLike(v, scale));
    return half ? b.Sub(v, b.FullLike(v, 0.5)) : v;
  };
  Value x1 = col(0), y1 = col(1), x2 = col(2), y2 = col(3);
  Value rw = b.Sub(x2, x1), rh = b.Sub(y2, y1);
  if (!half) {
    rw = b.Max(rw, b.FullLike(rw, 1));
    rh = b.Max(rh, b.FullLike(rh, 1));
  }
  auto counts = [&](const std::vector<int64_t>& g, ElementType t) {
    return b.Convert(b.I64s(g), t);
  };
  Value gh_f = counts(gh, e), gw_f = counts(gw, e);
  SampleAxis ay = AxisSamples(b, y1, b.Div(rh, b.FullLike(rh, ph)), gh_f, ph, mh, xs[2]);
  SampleAxis ax = AxisSamples(b, x1, b.Div(rw, b.FullLike(rw, pw)), gw_f, pw, mw, xs[3]);
  // Samples [R, ph, mh, pw, mw], each with 4 corners.
  const Shape s = {nr, ph, mh, pw, mw};
  auto y_of = [&](Value v) { return b.BroadcastInDim(v, s, {0, 1, 2}); };
  auto x_of = [&](Value v) { return b.BroadcastInDim(v, s, {0, 3, 4}); };
  Value in_grid = b.Binary("and",
                           b.Compare("LT", b.Iota(s, 2, ElementType::kSI64),
                                     b.BroadcastInDim(counts(gh, ElementType::kSI64), s, {0})),
                           b.Compare("LT", b.Iota(s, 4, ElementType::kSI64),
                                     b.BroadcastInDim(counts(gw, ElementType::kSI64), s, {0})));
  Value outside = b.Binary("or", y_of(ay.outside), x_of(ax.outside));
  Value n_idx = b.BroadcastInDim(b.Convert(batch_idx, ElementType::kSI64), s, {0});
  std::vector<Value> ns, rows, cols, weights;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      ns.push_back(n_idx);
      rows.push_back(y_of(i == 0 ? ay.low : ay.high));
      cols.push_back(x_of(j == 0 ? ax.low : ax.high));
      Value w = b.Mul(y_of(i == 0 ? ay.w_low : ay.w_high), x_of(j == 0 ? ax.w_low : ax.w_high));
      weights.push_back(b.Select(outside, b.FullLike(w, 0), w));
    }
  }
  Value v = Pixels(b, b.Transpose(x, {0, 2, 3, 1}), Stack(b, ns), Stack(b, rows), Stack(b, cols));
  const Shape& vs = Builder::ShapeOf(v);  // [R, ph, mh, pw, mw, 4, C]
  const std::vector<int64_t> to_v = {0, 1, 2, 3, 4, 5};
  v = b.Mul(v, b.BroadcastInDim(Stack(b, weights), vs, to_v));
  Value in_grid_v = b.BroadcastInDim(in_grid, vs, {0, 1, 2, 3, 4});
  Value y;
  if (mode == "avg") {
    v = b.Select(in_grid_v, v, b.ScalarLike(v, 0));
    y = b.Reduce(v, b.ScalarLike(v, 0), {2, 4, 5}, "add");  // [R, ph, pw, C]
    Value count = b.Max(b.Mul(gh_f, gw_f), b.FullLike(gh_f, 1));
    y = b.Div(y, b.BroadcastInDim(count, Builder::ShapeOf(y), {0}));
  } else {
    const double lowest = -std::numeric_limits<double>::infinity();
    v = b.Select(in_grid_v, v, b.ScalarLike(v, lowest));
    y = b.Reduce(v, b.ScalarLike(v, lowest), {2, 4, 5}, "maximum");
    // A box without samples gives 0.
    Value some = b.Binary("and", b.Compare("GT", gh_f, b.FullLike(gh_f, 0)),
                          b.Compare("GT", gw_f, b.FullLike(gw_f, 0)));
    y = b.Select(b.BroadcastInDim(some, Builder::ShapeOf(y), {0}), y, b.ScalarLike(y, 0));
  }
  n.SetOutput(0, b.Transpose(y, {0, 3, 1, 2}));
  return Status::Ok();
}

// ---- MaxUnpool (opsets 9, 11) ----
//
// Y's flat elements at I (flat indices into the unpooled shape, N and C
// included, as MaxPool's Indices) take X's values, the others are 0. The
// unpooled shape is (in - 1) * stride - pads + kernel per spatial axis; an
// output_shape input (known at import) may be larger: as ONNX's reference,
// the unpooled tensor then fills its leading corner and the rest is 0.
Status MaxUnpool(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0), idx = n.input(1);
  const Shape xs = Builder::ShapeOf(x);
  const int64_t s = static_cast<int64_t>(xs.size()) - 2;
  if (s < 1 || Builder::ShapeOf(idx) != xs)
    return n.Invalid("X and I must be one N x C x ... shape");
  const std::vector<int64_t> kernel = n.Ints("kernel_shape");
  const std::vector<int64_t> strides = n.Ints("strides", std::vector<int64_t>(s, 1));
  const std::vector<int64_t> pads = n.Ints("pads", std::vector<int64_t>(2 * s, 0));
  if (static_cast<int64_t>(kernel.size()) != s || static_cast<int64_t>(strides.size()) != s ||
      static_cast<int64_t>(pads.size()) != 2 * s) {
    return n.Invalid("kernel_shape, strides and pads must cover the spatial dimensions");
  }
  Shape unpooled = {xs[0], xs[1]};
  for (int64_t i = 0; i < s; ++i) {
    unpooled.push_back((xs[2 + i] - 1) * strides[i] - pads[i] - pads[s + i] + kernel[i]);
    if (unpooled.back() < 0) return n.Invalid("the unpooled shape is negative");
  }
  Shape out = unpooled;
  if (n.has_input(2)) {
    TPUSIM_ASSIGN_OR_RETURN(out, n.KnownInts(2, "output_shape"));
    if (out.size() != xs.size()) return n.Invalid("output_shape must have X's rank");
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] < unpooled[d] || (d < 2 && out[d] != unpooled[d])) {
        return n.Invalid("output_shape is smaller than the unpooled shape");
      }
    }
  }
  int64_t total = 1;
  for (int64_t d : unpooled) total *= d;
  const int64_t m = x.type().num_elements();
  Value flat = b.Splat(Builder::ElementOf(x), 0, {total});
  Value at = b.Reshape(b.Convert(idx, ElementType::kSI64), {m, 1});
  Attribute dnums =
      Attribute::Struct("stablehlo.scatter", {{"update_window_dims", IntList({})},
                                              {"inserted_window_dims", IntList({0})},
                                              {"input_batching_dims", IntList({})},
                                              {"scatter_indices_batching_dims", IntList({})},
                                              {"scatter_dims_to_operand_dims", IntList({0})},
                                              {"index_vector_dim", Attribute::Int(1)}});
  ir::Operation* op = b.Emit("stablehlo.scatter", {flat, at, b.Reshape(x, {m})}, {flat.type()},
                             {{"scatter_dimension_numbers", dnums},
                              {"indices_are_sorted", Attribute::Bool(false)},
                              {"unique_indices", Attribute::Bool(false)}});
  const ir::Type scalar = ir::Type::Tensor(Builder::ElementOf(x), {});
  b.AddRegion(op, {scalar, scalar},
              [](const std::vector<Value>& a) { return std::vector<Value>{a[1]}; });
  Value y = b.Reshape(op->result(0), unpooled);
  std::vector<int64_t> high;
  for (size_t d = 0; d < out.size(); ++d) high.push_back(out[d] - unpooled[d]);
  if (out != unpooled) {
    y = b.Pad(y, b.ScalarLike(y, 0), std::vector<int64_t>(out.size(), 0), high,
              std::vector<int64_t>(out.size(), 0));
  }
  n.SetOutput(0, y);
  return Status::Ok();
}

// ---- ReverseSequence (opset 10) ----
//
// Along time_axis (default 0), the first sequence_lens[b] elements of
// batch b (along batch_axis, default 1) reversed, the rest kept: element t
// reads t' = len - 1 - t when t < len. The two axes are 0 and 1.
Status ReverseSequence(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const Shape xs = Builder::ShapeOf(x);
  const int64_t time = n.Int("time_axis", 0), batch = n.Int("batch_axis", 1);
  if (xs.size() < 2 || time < 0 || time > 1 || batch < 0 || batch > 1 || time == batch) {
    return n.Invalid("time_axis and batch_axis must be 0 and 1 of an input of rank 2 or more");
  }
  Value lens = b.Convert(n.input(1), ElementType::kSI64);
  if (Builder::ShapeOf(lens) != Shape{xs[batch]})
    return n.Invalid("sequence_lens must have the batch's length");
  const Shape s = {xs[0], xs[1]};
  Value t = b.Iota(s, time, ElementType::kSI64);
  Value len = b.BroadcastInDim(lens, s, {batch});
  Value from = b.Select(b.Compare("LT", t, len), b.Sub(b.Sub(len, b.FullLike(len, 1)), t), t);
  Value other = b.Iota(s, batch, ElementType::kSI64);
  Value idx = time == 0 ? Stack(b, {from, other}) : Stack(b, {other, from});
  n.SetOutput(0, GatherAt(b, x, idx, {0, 1}));
  return Status::Ok();
}

// ---- Compress (opsets 9, 11) ----
//
// The slices along `axis` (X flattened when absent) whose condition is
// true; the condition may be shorter than the axis (the rest dropped), as
// numpy.compress. Its values fix the output's length: known at import.
Status Compress(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> cond, n.KnownInts(1, "condition"));
  int64_t axis = 0;
  if (n.has_attr("axis")) {
    TPUSIM_ASSIGN_OR_RETURN(axis, n.Axis(n.Int("axis", 0), Builder::RankOf(x)));
  } else {
    x = b.Reshape(x, {x.type().num_elements()});
  }
  const int64_t dim = Builder::ShapeOf(x)[axis];
  std::vector<int64_t> kept;
  for (size_t i = 0; i < cond.size(); ++i) {
    if (cond[i] == 0) continue;
    if (static_cast<int64_t>(i) >= dim) return n.Invalid("condition selects past the axis's end");
    kept.push_back(static_cast<int64_t>(i));
  }
  if (kept.empty()) {
    n.SetOutput(0, b.SliceDim(x, axis, 0, 0));
    return Status::Ok();
  }
  const int64_t k = static_cast<int64_t>(kept.size());
  Value rows = GatherAt(b, x, b.Reshape(b.I64s(kept), {k, 1}), {axis});  // [k, rest...]
  // The kept rows back at `axis`.
  std::vector<int64_t> perm;
  for (int64_t d = 1; d <= axis; ++d) perm.push_back(d);
  perm.push_back(0);
  for (int64_t d = axis + 1; d < Builder::RankOf(rows); ++d) perm.push_back(d);
  n.SetOutput(0, b.Transpose(rows, perm));
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"GridSample", GridSample});
TPUSIM_REGISTER_ONNX_OP({"RoiAlign", RoiAlign});
TPUSIM_REGISTER_ONNX_OP({"MaxUnpool", MaxUnpool});
TPUSIM_REGISTER_ONNX_OP({"ReverseSequence", ReverseSequence});
TPUSIM_REGISTER_ONNX_OP({"Compress", Compress});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
