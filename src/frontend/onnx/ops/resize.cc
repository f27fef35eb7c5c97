// ONNX's Resize (opsets 10, 11, 13) and Upsample (opsets 7 to 9,
// deprecated: Resize-10's rule).
//
// A separable resize: each axis whose size or coordinates change is
// resampled on its own, as ONNX's reference does, by gathers of the input's
// rows at indices computed at import (in C++, from the known scales or
// sizes) and a weighted sum of those rows, weights computed at import too:
// one gather for nearest, two for linear, four for cubic, fewer where a
// neighbour's weight is 0 for every output row. Neighbours past the edge
// repeat the edge row (the reference pads by edge); exclude_outside gives
// them weight 0 and renormalizes.
//
// Opsets:
//  - Upsample-7 (scales attribute), Upsample-9 and Resize-10 (scales input):
//    modes nearest and linear, the asymmetric transform (x / scale); nearest
//    takes floor(x / scale), the row ONNX's Upsample example repeats.
//  - Resize-11 and 13: inputs X, roi, scales, sizes (roi used only by
//    tf_crop_and_resize; one of scales and sizes, the other absent or empty);
//    modes nearest / linear / cubic; coordinate_transformation_mode
//    half_pixel (default), pytorch_half_pixel, align_corners, asymmetric,
//    tf_crop_and_resize, and opset 11's tf_half_pixel_for_nn; nearest_mode
//    round_prefer_floor (default), round_prefer_ceil, floor, ceil;
//    cubic_coeff_a (default -0.75), exclude_outside (0),
//    extrapolation_value (0: tf_crop_and_resize's value where an axis's
//    coordinate falls outside [0, length - 1]).
// The output size is floor(length * scale) (times roi_end - roi_start for
// tf_crop_and_resize), or `sizes`. As ONNX's reference computes it, the
// resized length in align_corners, pytorch_half_pixel and
// tf_crop_and_resize is length * scale, not rounded.
// Scales and sizes fix the output's shape, so they must be known at import.
// Refused: linear and cubic resizes of integer tensors (ONNX leaves their
// rounding open).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx/node.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::Attribute;
using ir::ElementType;

struct Options {
  std::string mode = "nearest";          // nearest, linear, cubic
  std::string transform = "half_pixel";  // coordinate_transformation_mode
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

// One axis's resampling: output row j is sum_k weight[k][j] * input row
// index[k][j], or extrapolation where outside[j].
struct AxisPlan {
  std::vector<std::vector<int64_t>> index;
  std::vector<std::vector<double>> weight;
  std::vector<bool> outside;
};

// The input coordinate of output row x; false where tf_crop_and_resize
// falls outside the input.
bool SourceCoordinate(const Options& o, double x, int64_t in, double scale, double width,
                      float roi_start, float roi_end, double* out) {
  const std::string& t = o.transform;
  if (t == "half_pixel") {
    *out = (x + 0.5) / scale - 0.5;
  } else if (t == "pytorch_half_pixel") {
    *out = width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  } else if (t == "align_corners") {
    *out = width == 1 ? 0.0 : x * static_cast<double>(in - 1) / (width - 1);
  } else if (t == "asymmetric") {
    *out = x / scale;
  } else if (t == "tf_half_pixel_for_nn") {
    *out = (x + 0.5) / scale;
  } else {  // tf_crop_and_resize; the roi's arithmetic in f32, as the reference's
    const float extent = roi_end - roi_start;
    *out = width == 1 ? extent * static_cast<double>(in - 1) / 2
                      : x * extent * static_cast<double>(in - 1) / (width - 1);
    *out += static_cast<float>(roi_start * static_cast<float>(in - 1));
    return *out >= 0 && *out <= static_cast<double>(in - 1);
  }
  return true;
}

std::vector<double> CubicCoeffs(double r, double a) {
  const double s = 1 - r;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
          ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

// Neighbours and weights of input coordinate `x`: base is the neighbour
// left of x (x's own row counts as the right one when x is whole), r in
// (0, 1] the distance to it, as in ONNX's reference.
void Taps(const Options& o, double x, int64_t in, std::vector<int64_t>* idx,
          std::vector<double>* w) {
  const int64_t base = static_cast<int64_t>(std::ceil(x)) - 1;
  const double r = x - static_cast<double>(base);
  if (o.mode == "nearest") {
    bool right;
    if (r == 1 || o.nearest == "ceil") {
      right = true;
    } else if (o.nearest == "round_prefer_ceil") {
      right = r >= 0.5;
    } else if (o.nearest == "floor") {
      right = false;
    } else {
      right = r > 0.5;
    }
    *idx = {base + (right ? 1 : 0)};
    *w = {1.0};
  } else if (o.mode == "linear") {
    *idx = {base, base + 1};
    *w = {1 - r, r};
  } else {
    *idx = {base - 1, base, base + 1, base + 2};
    *w = CubicCoeffs(r, o.cubic_a);
  }
  if (o.exclude_outside && o.mode != "nearest") {
    double sum = 0;
    for (size_t k = 0; k < idx->size(); ++k) {
      if ((*idx)[k] < 0 || (*idx)[k] >= in) (*w)[k] = 0;
      sum += (*w)[k];
    }
    for (double& v : *w) v /= sum;
  }
  for (int64_t& i : *idx) i = std::clamp<int64_t>(i, 0, in - 1);
}

AxisPlan PlanAxis(const Options& o, int64_t in, int64_t out, double scale, double width,
                  float roi_start, float roi_end) {
  AxisPlan p;
  p.outside.assign(out, false);
  for (int64_t j = 0; j < out; ++j) {
    double x;
    std::vector<int64_t> idx;
    std::vector<double> w;
    if (!SourceCoordinate(o, static_cast<double>(j), in, scale, width, roi_start, roi_end, &x)) {
      p.outside[j] = true;
      x = 0;
    }
    Taps(o, x, in, &idx, &w);
    p.index.resize(idx.size());
    p.weight.resize(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) {
      p.index[k].push_back(idx[k]);
      p.weight[k].push_back(w[k]);
    }
  }
  return p;
}

// Whether the plan copies the axis unchanged: row j's weights sum to 1 on
// row j and are 0 elsewhere.
bool IsIdentity(const AxisPlan& p, int64_t in) {
  if (static_cast<int64_t>(p.outside.size()) != in) return false;
  for (int64_t j = 0; j < in; ++j) {
    if (p.outside[j]) return false;
    double own = 0;
    for (size_t k = 0; k < p.index.size(); ++k) {
      if (p.index[k][j] == j) {
        own += p.weight[k][j];
      } else if (p.weight[k][j] != 0) {
        return false;
      }
    }
    if (own != 1) return false;
  }
  return true;
}

// x's rows `index` along `axis` (stablehlo.gather of whole slices).
Value GatherRows(Builder& b, Value x, int64_t axis, const std::vector<int64_t>& index) {
  Shape out = Builder::ShapeOf(x);
  out[axis] = static_cast<int64_t>(index.size());
  std::vector<Attribute> offset;
  for (int64_t d = 0; d < static_cast<int64_t>(out.size()); ++d) {
    if (d != axis) offset.push_back(Attribute::Int(d));
  }
  Attribute dnums = Attribute::Struct(
      "stablehlo.gather", {{"offset_dims", Attribute::Array(std::move(offset))},
                           {"collapsed_slice_dims", Attribute::Array({Attribute::Int(axis)})},
                           {"operand_batching_dims", Attribute::Array({})},
                           {"start_indices_batching_dims", Attribute::Array({})},
                           {"start_index_map", Attribute::Array({Attribute::Int(axis)})},
                           {"index_vector_dim", Attribute::Int(1)}});
  Shape slice = Builder::ShapeOf(x);
  slice[axis] = 1;
  return b
      .Emit("stablehlo.gather", {x, b.I64s(index)}, {ir::Type::Tensor(Builder::ElementOf(x), out)},
            {{"dimension_numbers", dnums},
             {"slice_sizes", I64Array(slice)},
             {"indices_are_sorted", Attribute::Bool(false)}})
      ->result(0);
}

// A 1-D constant of x's element type along `axis` of `shape`.
Value AlongAxis(Builder& b, ElementType e, const std::vector<double>& v, const Shape& shape,
                int64_t axis) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(e, {static_cast<int64_t>(v.size())})).value();
  const int bytes = ir::StorageBytes(e);
  for (size_t i = 0; i < v.size(); ++i) numerics::StoreDouble(e, v[i], t.mutable_raw() + i * bytes);
  return b.BroadcastInDim(b.Constant(t), shape, {axis});
}

Value ResampleAxis(Builder& b, Value x, int64_t axis, const AxisPlan& p) {
  std::optional<Value> sum;
  for (size_t k = 0; k < p.index.size(); ++k) {
    bool any = false, ones = true;
    for (double w : p.weight[k]) {
      any |= w != 0;
      ones &= w == 1;
    }
    if (!any) continue;
    Value rows = GatherRows(b, x, axis, p.index[k]);
    if (!ones) {
      rows = b.Mul(rows,
                   AlongAxis(b, Builder::ElementOf(x), p.weight[k], Builder::ShapeOf(rows), axis));
    }
    sum = sum ? b.Add(*sum, rows) : rows;
  }
  if (!sum) {  // every weight 0: exclude_outside of nothing
    Shape shape = Builder::ShapeOf(x);
    shape[axis] = static_cast<int64_t>(p.outside.size());
    return b.Splat(Builder::ElementOf(x), 0, shape);
  }
  return *sum;
}

// Resizes x to `out` with per-axis `scale`s; roi per axis (starts, ends).
Status Lower(Node& n, const Options& o, const Shape& out, const std::vector<double>& scale,
             bool from_scales, const std::vector<float>& roi) {
  Builder& b = n.b();
  Value x = n.input(0);
  const Shape in = Builder::ShapeOf(x);
  const int64_t rank = static_cast<int64_t>(in.size());
  const ElementType e = Builder::ElementOf(x);
  if (o.mode != "nearest" && !ir::IsFloat(e)) {
    return n.Unsupported("a " + o.mode + " resize of " + x.type().ToString());
  }
  std::optional<Value> outside;
  for (int64_t a = 0; a < rank; ++a) {
    if (in[a] == 0 || out[a] == 0) return n.Unsupported("resizing an empty dimension");
    // The reference's resized length: length * scale, in f32 for f32 scales.
    const double width =
        from_scales ? static_cast<double>(static_cast<float>(scale[a]) * static_cast<float>(in[a]))
                    : scale[a] * static_cast<double>(in[a]);
    const float start = roi.empty() ? 0.0f : roi[a], end = roi.empty() ? 1.0f : roi[rank + a];
    AxisPlan p = PlanAxis(o, in[a], out[a], scale[a], width, start, end);
    if (!IsIdentity(p, in[a])) x = ResampleAxis(b, x, a, p);
    bool any = false;
    std::vector<double> flags;
    for (bool f : p.outside) {
      any |= f;
      flags.push_back(f ? 1 : 0);
    }
    if (!any) continue;
    Value mask = b.Compare("NE", AlongAxis(b, ElementType::kF32, flags, out, a),
                           b.Splat(ElementType::kF32, 0, out));
    outside = outside ? b.Binary("or", *outside, mask) : mask;
  }
  if (outside) {
    x = b.Select(*outside, b.Splat(e, n.Float("extrapolation_value", 0.0f), out), x);
  }
  n.SetOutput(0, x);
  return Status::Ok();
}

Status CheckOptions(const Node& n, const Options& o) {
  if (o.mode != "nearest" && o.mode != "linear" &&
      (o.mode != "cubic" || n.op_type() != "Resize" || n.opset() < 11)) {
    return n.Unsupported("mode '" + o.mode + "'");
  }
  for (const char* t : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                        "tf_crop_and_resize", "tf_half_pixel_for_nn"}) {
    if (o.transform == t) {
      for (const char* m : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
        if (o.nearest == m) return Status::Ok();
      }
      return n.Unsupported("nearest_mode '" + o.nearest + "'");
    }
  }
  return n.Unsupported("coordinate_transformation_mode '" + o.transform + "'");
}

// Output sizes floor(length * scale [* roi extent]).
Shape SizesOf(const Shape& in, const std::vector<double>& scale, const std::vector<float>& roi) {
  Shape out;
  const size_t rank = in.size();
  for (size_t a = 0; a < rank; ++a) {
    double extent = roi.empty() ? 1.0 : static_cast<double>(roi[rank + a] - roi[a]);
    out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(in[a]) * extent * scale[a])));
  }
  return out;
}

// Upsample-7/9 and Resize-10: asymmetric, nearest rows by floor.
Status LowerScalesOnly(Node& n, std::vector<double> scales) {
  Options o;
  o.mode = n.String("mode", "nearest");
  o.transform = "asymmetric";
  o.nearest = "floor";
  TPUSIM_RETURN_IF_ERROR(CheckOptions(n, o));
  const Shape& in = Builder::ShapeOf(n.input(0));
  if (scales.size() != in.size()) return n.Invalid("scales must have one value per dimension");
  for (double s : scales) {
    if (!(s > 0)) return n.Invalid("scales must be positive");
  }
  return Lower(n, o, SizesOf(in, scales, {}), scales, true, {});
}

Status Upsample(Node& n) {
  if (n.opset() < 9) {
    std::vector<double> scales;
    for (float s : n.Floats("scales")) scales.push_back(s);
    return LowerScalesOnly(n, scales);
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<double> scales, n.KnownDoubles(1, "scales"));
  return LowerScalesOnly(n, scales);
}

Status Resize(Node& n) {
  if (n.opset() < 11) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<double> scales, n.KnownDoubles(1, "scales"));
    return LowerScalesOnly(n, scales);
  }
  Options o;
  o.mode = n.String("mode", "nearest");
  o.transform = n.String("coordinate_transformation_mode", "half_pixel");
  o.nearest = n.String("nearest_mode", "round_prefer_floor");
  o.cubic_a = n.Float("cubic_coeff_a", -0.75f);
  o.exclude_outside = n.Int("exclude_outside", 0) != 0;
  TPUSIM_RETURN_IF_ERROR(CheckOptions(n, o));
  if (o.transform == "tf_half_pixel_for_nn" && n.opset() >= 13) {
    return n.Unsupported("coordinate_transformation_mode 'tf_half_pixel_for_nn' after opset 11");
  }
  const Shape& in = Builder::ShapeOf(n.input(0));
  const size_t rank = in.size();
  std::vector<float> roi;
  if (o.transform == "tf_crop_and_resize") {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<double> r, n.KnownDoubles(1, "roi"));
    if (r.size() != 2 * rank) return n.Invalid("roi must have two values per dimension");
    for (double v : r) roi.push_back(static_cast<float>(v));
  }
  std::vector<double> scales;
  if (n.has_input(2)) {
    TPUSIM_ASSIGN_OR_RETURN(scales, n.KnownDoubles(2, "scales"));
  }
  if (!scales.empty()) {
    if (n.has_input(3)) return n.Invalid("has both scales and sizes");
    if (scales.size() != rank) return n.Invalid("scales must have one value per dimension");
    for (double s : scales) {
      if (!(s > 0)) return n.Invalid("scales must be positive");
    }
    return Lower(n, o, SizesOf(in, scales, roi), scales, true, roi);
  }
  if (!n.has_input(3)) return n.Invalid("needs scales or sizes");
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, n.KnownInts(3, "sizes"));
  if (sizes.size() != rank) return n.Invalid("sizes must have one value per dimension");
  for (size_t a = 0; a < rank; ++a) {
    if (sizes[a] < 1) return n.Invalid("sizes must be positive");
    scales.push_back(static_cast<double>(sizes[a]) / static_cast<double>(in[a]));
  }
  return Lower(n, o, Shape(sizes.begin(), sizes.end()), scales, false, roi);
}

TPUSIM_REGISTER_ONNX_OP({"Resize", Resize});
TPUSIM_REGISTER_ONNX_OP({"Upsample", Upsample});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
