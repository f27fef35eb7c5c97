// ONNX's ops that make and move tensors without arithmetic: constants,
// Shape and Size (known at import), reshapes, transposes, slices, concat
// and split, expand and tile, padding, and the triangles and identities.
// Where ONNX takes a shape, axes or sizes as an input (Reshape, Slice,
// Squeeze from opset 13, ...), its value must be known at import.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "frontend/onnx/node.h"
#include "frontend/onnx/tensor_proto.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::ElementType;

Tensor I64Tensor(const std::vector<int64_t>& v, bool scalar = false) {
  Shape shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(v.size()));
  Tensor t = Tensor::Allocate(ir::Type::Tensor(ElementType::kSI64, shape)).value();
  if (!v.empty()) std::memcpy(t.mutable_raw(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

// Axes as dimension numbers of a rank-`rank` tensor, each once.
StatusOr<std::vector<int64_t>> Axes(const Node& n, std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes) {
    TPUSIM_ASSIGN_OR_RETURN(a, n.Axis(a, rank));
  }
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return n.Invalid("an axis is repeated");
  }
  return axes;
}

// Axes from the attribute before `input_since`, from input `input` after.
StatusOr<std::optional<std::vector<int64_t>>> AxesOperand(const Node& n, int input,
                                                          int input_since) {
  if (n.opset() < input_since) {
    if (!n.has_attr("axes")) return std::optional<std::vector<int64_t>>();
    return std::optional<std::vector<int64_t>>(n.Ints("axes"));
  }
  if (!n.has_input(input)) return std::optional<std::vector<int64_t>>();
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, n.KnownInts(input, "axes"));
  return std::optional<std::vector<int64_t>>(std::move(axes));
}

Status Constant(Node& n) {
  if (n.has_attr("value")) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor t, n.TensorAttr("value"));
    n.SetKnownOutput(0, t);
    return Status::Ok();
  }
  const onnx::AttributeProto* a = n.Attr("value_float");
  if (a == nullptr) a = n.Attr("value_floats");
  if (a != nullptr) {
    const bool scalar = a->name() == "value_float";
    std::vector<float> v = scalar ? std::vector<float>{a->f()} : n.Floats("value_floats");
    Shape shape;
    if (!scalar) shape.push_back(static_cast<int64_t>(v.size()));
    Tensor t = Tensor::Allocate(ir::Type::Tensor(ElementType::kF32, shape)).value();
    if (!v.empty()) std::memcpy(t.mutable_raw(), v.data(), v.size() * sizeof(float));
    n.SetKnownOutput(0, t);
    return Status::Ok();
  }
  if (n.has_attr("value_int")) {
    n.SetKnownOutput(0, I64Tensor({n.Int("value_int", 0)}, true));
    return Status::Ok();
  }
  if (n.has_attr("value_ints")) {
    n.SetKnownOutput(0, I64Tensor(n.Ints("value_ints")));
    return Status::Ok();
  }
  return n.Unsupported("a Constant that is not a dense numeric tensor (sparse or string)");
}

Status ConstantOfShape(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, n.KnownInts(0, "shape"));
  for (int64_t d : shape) {
    if (d < 0) return n.Invalid("a negative dimension in its shape");
  }
  ElementType element = ElementType::kF32;
  double value = 0;
  if (n.has_attr("value")) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor t, n.TensorAttr("value"));
    if (t.num_elements() != 1) return n.Invalid("value must hold one element");
    element = t.element();
    value = numerics::LoadAsDouble(element, t.raw());
  }
  n.SetOutput(0, n.b().Splat(element, value, shape));
  return Status::Ok();
}

Status ShapeOp(Node& n) {
  const Shape& shape = Builder::ShapeOf(n.input(0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t start = n.Int("start", 0), end = n.Int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  n.SetKnownOutput(0, I64Tensor(std::vector<int64_t>(shape.begin() + start, shape.begin() + end)));
  return Status::Ok();
}

Status Size(Node& n) {
  n.SetKnownOutput(0, I64Tensor({n.input(0).type().num_elements()}, true));
  return Status::Ok();
}

Status Reshape(Node& n) {
  Value x = n.input(0);
  std::vector<int64_t> shape;
  if (n.opset() < 5) {
    shape = n.Ints("shape");
  } else {
    TPUSIM_ASSIGN_OR_RETURN(shape, n.KnownInts(1, "shape"));
  }
  const bool allowzero = n.Int("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (static_cast<int64_t>(i) >= Builder::RankOf(x)) return n.Invalid("0 copies no dimension");
      shape[i] = Builder::ShapeOf(x)[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) return n.Invalid("more than one -1 in its shape");
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      return n.Invalid("a negative dimension in its shape");
    } else {
      known *= shape[i];
    }
  }
  const int64_t total = x.type().num_elements();
  if (infer >= 0) {
    if (known == 0 || total % known != 0) return n.Invalid("cannot infer its -1 dimension");
    shape[infer] = total / known;
  } else if (known != total) {
    return n.Invalid("cannot reshape " + x.type().ToString() + " to " + std::to_string(known) +
                     " elements");
  }
  n.SetOutput(0, n.b().Reshape(x, shape));
  return Status::Ok();
}

Status Flatten(Node& n) {
  Value x = n.input(0);
  const int64_t rank = Builder::RankOf(x);
  int64_t axis = n.Int("axis", 1);
  if (axis < -rank || axis > rank) return n.Invalid("axis out of range");
  if (axis < 0) axis += rank;
  const Shape& s = Builder::ShapeOf(x);
  const int64_t outer =
      std::accumulate(s.begin(), s.begin() + axis, int64_t{1}, std::multiplies<>());
  const int64_t inner = std::accumulate(s.begin() + axis, s.end(), int64_t{1}, std::multiplies<>());
  n.SetOutput(0, n.b().Reshape(x, {outer, inner}));
  return Status::Ok();
}

Status Squeeze(Node& n) {
  Value x = n.input(0);
  const Shape& s = Builder::ShapeOf(x);
  TPUSIM_ASSIGN_OR_RETURN(auto given, AxesOperand(n, 1, 13));
  std::vector<int64_t> axes;
  if (given) {
    TPUSIM_ASSIGN_OR_RETURN(axes, Axes(n, *given, Builder::RankOf(x)));
  } else {
    for (int64_t d = 0; d < Builder::RankOf(x); ++d) {
      if (s[d] == 1) axes.push_back(d);
    }
  }
  Shape out;
  for (int64_t d = 0; d < Builder::RankOf(x); ++d) {
    const bool squeezed = std::count(axes.begin(), axes.end(), d) > 0;
    if (squeezed && s[d] != 1) return n.Invalid("dimension " + std::to_string(d) + " is not 1");
    if (!squeezed) out.push_back(s[d]);
  }
  n.SetOutput(0, n.b().Reshape(x, out));
  return Status::Ok();
}

Status Unsqueeze(Node& n) {
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(auto given, AxesOperand(n, 1, 13));
  if (!given) return n.Invalid("needs axes");
  const int64_t rank = Builder::RankOf(x) + static_cast<int64_t>(given->size());
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, Axes(n, *given, rank));
  Shape out(rank, 1);
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::count(axes.begin(), axes.end(), d) == 0) out[d] = Builder::ShapeOf(x)[next++];
  }
  n.SetOutput(0, n.b().Reshape(x, out));
  return Status::Ok();
}

Status Transpose(Node& n) {
  Value x = n.input(0);
  const int64_t rank = Builder::RankOf(x);
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  perm = n.Ints("perm", perm);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < static_cast<int64_t>(sorted.size()); ++i) {
    if (sorted.size() != static_cast<size_t>(rank) || sorted[i] != i) {
      return n.Invalid("perm is not a permutation of the input's dimensions");
    }
  }
  n.SetOutput(0, n.b().Transpose(x, perm));
  return Status::Ok();
}

Status Concat(Node& n) {
  std::vector<Value> xs;
  for (int i = 0; i < n.num_inputs(); ++i) {
    if (n.has_input(i)) xs.push_back(n.input(i));
  }
  const int64_t rank = Builder::RankOf(xs[0]);
  // Concat-1's axis defaulted to 1; it is required from opset 4.
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", n.opset() < 4 ? 1 : 0), rank));
  for (Value x : xs) {
    Shape a = Builder::ShapeOf(x), b = Builder::ShapeOf(xs[0]);
    if (a.size() != b.size()) return n.Invalid("inputs of different ranks");
    a[axis] = b[axis] = 0;
    if (a != b) return n.Invalid("inputs differ outside the axis");
  }
  n.SetOutput(0, n.b().Concat(xs, axis));
  return Status::Ok();
}

Status Split(Node& n) {
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), Builder::RankOf(x)));
  const int64_t dim = Builder::ShapeOf(x)[axis];
  std::vector<int64_t> sizes;
  if (n.opset() < 13) {
    sizes = n.Ints("split");
  } else if (n.has_input(1)) {
    TPUSIM_ASSIGN_OR_RETURN(sizes, n.KnownInts(1, "split"));
  }
  const int64_t parts = n.num_outputs();
  if (sizes.empty()) {
    const int64_t each = (dim + parts - 1) / parts;  // the last part may be smaller
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::min(each, dim - i * each));
  }
  if (static_cast<int64_t>(sizes.size()) != parts ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != dim) {
    return n.Invalid("its split sizes do not add up to the axis's " + std::to_string(dim));
  }
  int64_t at = 0;
  for (int64_t i = 0; i < parts; ++i) {
    n.SetOutput(static_cast<int>(i), n.b().SliceDim(x, axis, at, at + sizes[i]));
    at += sizes[i];
  }
  return Status::Ok();
}

Status Slice(Node& n) {
  Value x = n.input(0);
  const int64_t rank = Builder::RankOf(x);
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset() < 10) {
    starts = n.Ints("starts");
    ends = n.Ints("ends");
    axes = n.Ints("axes");
  } else {
    TPUSIM_ASSIGN_OR_RETURN(starts, n.KnownInts(1, "starts"));
    TPUSIM_ASSIGN_OR_RETURN(ends, n.KnownInts(2, "ends"));
    if (n.has_input(3)) {
      TPUSIM_ASSIGN_OR_RETURN(axes, n.KnownInts(3, "axes"));
    }
    if (n.has_input(4)) {
      TPUSIM_ASSIGN_OR_RETURN(steps, n.KnownInts(4, "steps"));
    }
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return n.Invalid("starts, ends, axes and steps differ in length");
  }
  TPUSIM_ASSIGN_OR_RETURN(axes, Axes(n, axes, rank));
  const Shape& shape = Builder::ShapeOf(x);
  std::vector<int64_t> lo(rank, 0), hi = shape, stride(rank, 1), reversed;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i], dim = shape[a], step = steps[i];
    if (step == 0) return n.Invalid("a step of 0");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      lo[a] = s;
      hi[a] = std::max(s, e);
      stride[a] = step;
    } else {
      // Backwards: the same rows of the dimension reversed.
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      reversed.push_back(a);
      lo[a] = dim - 1 - s;
      hi[a] = std::max(lo[a], dim - 1 - e);
      stride[a] = -step;
    }
  }
  if (!reversed.empty()) x = n.b().Reverse(x, reversed);
  n.SetOutput(0, n.b().Slice(x, lo, hi, stride));
  return Status::Ok();
}

Status Expand(Node& n) {
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, n.KnownInts(1, "shape"));
  Shape out;
  if (!BroadcastShapes(Builder::ShapeOf(x), shape, &out)) {
    return n.Invalid(x.type().ToString() + " does not broadcast to the shape given");
  }
  n.SetOutput(0, n.b().BroadcastTo(x, out));
  return Status::Ok();
}

Status Tile(Node& n) {
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, n.KnownInts(1, "repeats"));
  const int64_t rank = Builder::RankOf(x);
  if (static_cast<int64_t>(repeats.size()) != rank)
    return n.Invalid("repeats must be one per dimension");
  Shape wide, out;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (repeats[d] < 0) return n.Invalid("a negative repeat");
    wide.push_back(repeats[d]);
    wide.push_back(Builder::ShapeOf(x)[d]);
    dims.push_back(2 * d + 1);
    out.push_back(repeats[d] * Builder::ShapeOf(x)[d]);
  }
  n.SetOutput(0, n.b().Reshape(n.b().BroadcastInDim(x, wide, dims), out));
  return Status::Ok();
}

Status Range(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<double> start, n.KnownDoubles(0, "start"));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<double> limit, n.KnownDoubles(1, "limit"));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<double> delta, n.KnownDoubles(2, "delta"));
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1) {
    return n.Invalid("start, limit and delta must be scalars");
  }
  if (delta[0] == 0) return n.Invalid("a delta of 0");
  const int64_t count =
      std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit[0] - start[0]) / delta[0])));
  Builder& b = n.b();
  const ElementType e = Builder::ElementOf(n.input(0));
  // start + i * delta, in the inputs' type.
  Value i = b.Iota({count}, 0, e);
  Value d = b.BroadcastTo(n.input(2), {count});
  n.SetOutput(0, b.Add(b.BroadcastTo(n.input(0), {count}), b.Mul(i, d)));
  return Status::Ok();
}

Status Pad(Node& n) {
  Value x = n.input(0);
  const int64_t rank = Builder::RankOf(x);
  const std::string mode = n.String("mode", "constant");
  std::vector<int64_t> pads;
  Value value = n.b().ScalarLike(x, n.Float("value", 0.0f));
  if (n.opset() < 11) {
    pads = n.Ints(n.opset() < 2 ? "paddings" : "pads");
  } else {
    TPUSIM_ASSIGN_OR_RETURN(pads, n.KnownInts(1, "pads"));
    if (n.has_input(2)) value = n.b().Reshape(n.input(2), {});
  }
  std::vector<int64_t> axes;
  if (n.has_input(3)) {
    TPUSIM_ASSIGN_OR_RETURN(axes, n.KnownInts(3, "axes"));
    TPUSIM_ASSIGN_OR_RETURN(axes, Axes(n, axes, rank));
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const int64_t k = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * k) return n.Invalid("pads must be two per axis");
  std::vector<int64_t> low(rank, 0), high(rank, 0);
  for (int64_t i = 0; i < k; ++i) {
    low[axes[i]] = pads[i];
    high[axes[i]] = pads[k + i];
  }
  Builder& b = n.b();
  if (mode == "constant") {
    n.SetOutput(0, b.Pad(x, value, low, high, std::vector<int64_t>(rank, 0)));
    return Status::Ok();
  }
  if (mode != "reflect" && mode != "edge") return n.Unsupported("Pad mode '" + mode + "'");
  // Edge and reflect: each dimension in turn, its rows concatenated.
  for (int64_t d = 0; d < rank; ++d) {
    if (low[d] < 0 || high[d] < 0) return n.Unsupported("negative pads with mode '" + mode + "'");
    const int64_t dim = Builder::ShapeOf(x)[d];
    if (low[d] == 0 && high[d] == 0) continue;
    if (mode == "reflect" && (low[d] >= dim || high[d] >= dim)) {
      return n.Invalid("reflect pads must be smaller than the dimension");
    }
    std::vector<Value> parts;
    for (int64_t i = low[d]; i >= 1; --i) {
      const int64_t row = mode == "edge" ? 0 : i;
      parts.push_back(b.SliceDim(x, d, row, row + 1));
    }
    parts.push_back(x);
    for (int64_t i = 1; i <= high[d]; ++i) {
      const int64_t row = mode == "edge" ? dim - 1 : dim - 1 - i;
      parts.push_back(b.SliceDim(x, d, row, row + 1));
    }
    x = b.Concat(parts, d);
  }
  n.SetOutput(0, x);
  return Status::Ok();
}

// Row - column >= k (upper) or <= k (lower), for the last two dimensions.
Value TriangleMask(Builder& b, const Shape& shape, int64_t k, bool upper) {
  const int64_t r = static_cast<int64_t>(shape.size());
  Value rows = b.Iota(shape, r - 2, ElementType::kSI64);
  Value cols = b.Iota(shape, r - 1, ElementType::kSI64);
  Value diff = b.Sub(cols, rows);
  return b.Compare(upper ? "GE" : "LE", diff, b.Scalar(ElementType::kSI64, static_cast<double>(k)));
}

Status Trilu(Node& n) {
  Value x = n.input(0);
  if (Builder::RankOf(x) < 2) return n.Invalid("needs rank 2 or more");
  int64_t k = 0;
  if (n.has_input(1)) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> v, n.KnownInts(1, "k"));
    if (v.size() != 1) return n.Invalid("k must be one value");
    k = v[0];
  }
  Builder& b = n.b();
  Value mask = TriangleMask(b, Builder::ShapeOf(x), k, n.Int("upper", 1) != 0);
  n.SetOutput(0, b.Select(mask, x, b.FullLike(x, 0)));
  return Status::Ok();
}

Status EyeLike(Node& n) {
  Value x = n.input(0);
  if (Builder::RankOf(x) != 2) return n.Invalid("needs a 2-D input");
  ElementType e = Builder::ElementOf(x);
  if (n.has_attr("dtype")) {
    TPUSIM_ASSIGN_OR_RETURN(e, ElementOfOnnx(static_cast<int32_t>(n.Int("dtype", 1))));
  }
  Builder& b = n.b();
  const Shape& s = Builder::ShapeOf(x);
  Value diff = b.Sub(b.Iota(s, 1, ElementType::kSI64), b.Iota(s, 0, ElementType::kSI64));
  Value on =
      b.Compare("EQ", diff, b.Scalar(ElementType::kSI64, static_cast<double>(n.Int("k", 0))));
  n.SetOutput(0, b.Select(on, b.Splat(e, 1, s), b.Splat(e, 0, s)));
  return Status::Ok();
}

// DepthToSpace (DCR or CRD) and SpaceToDepth on NCHW.
Status DepthToSpace(Node& n) {
  Value x = n.input(0);
  if (Builder::RankOf(x) != 4) return n.Invalid("needs a 4-D input");
  const int64_t bs = n.Int("blocksize", 0);
  const Shape& s = Builder::ShapeOf(x);
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  if (bs <= 0 || C % (bs * bs) != 0) return n.Invalid("channels must divide by blocksize^2");
  const int64_t c = C / (bs * bs);
  Builder& b = n.b();
  Value y;
  if (n.String("mode", "DCR") == "DCR") {
    y = b.Transpose(b.Reshape(x, {N, bs, bs, c, H, W}), {0, 3, 4, 1, 5, 2});
  } else {
    y = b.Transpose(b.Reshape(x, {N, c, bs, bs, H, W}), {0, 1, 4, 2, 5, 3});
  }
  n.SetOutput(0, b.Reshape(y, {N, c, H * bs, W * bs}));
  return Status::Ok();
}

Status SpaceToDepth(Node& n) {
  Value x = n.input(0);
  if (Builder::RankOf(x) != 4) return n.Invalid("needs a 4-D input");
  const int64_t bs = n.Int("blocksize", 0);
  const Shape& s = Builder::ShapeOf(x);
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  if (bs <= 0 || H % bs != 0 || W % bs != 0) return n.Invalid("H and W must divide by blocksize");
  Builder& b = n.b();
  Value y = b.Transpose(b.Reshape(x, {N, C, H / bs, bs, W / bs, bs}), {0, 3, 5, 1, 2, 4});
  n.SetOutput(0, b.Reshape(y, {N, C * bs * bs, H / bs, W / bs}));
  return Status::Ok();
}

Status OneHot(Node& n) {
  Value indices = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<double> depth_v, n.KnownDoubles(1, "depth"));
  if (depth_v.size() != 1 || depth_v[0] < 1) return n.Invalid("depth must be one positive value");
  const int64_t depth = static_cast<int64_t>(depth_v[0]);
  Value values = n.input(2);
  if (values.type().num_elements() != 2) return n.Invalid("values must hold [off, on]");
  const int64_t rank = Builder::RankOf(indices) + 1;
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", -1), rank));
  Builder& b = n.b();
  Shape out = Builder::ShapeOf(indices);
  out.insert(out.begin() + axis, depth);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) dims.push_back(d);
  }
  // Negative indices count from the end.
  Value idx = b.Convert(indices, ElementType::kSI64);
  Value neg = b.Compare("LT", idx, b.Scalar(ElementType::kSI64, 0));
  idx = b.Select(neg, b.Add(idx, b.FullLike(idx, static_cast<double>(depth))), idx);
  Value hot =
      b.Compare("EQ", b.BroadcastInDim(idx, out, dims), b.Iota(out, axis, ElementType::kSI64));
  Value v = b.Reshape(values, {2});
  Value off = b.Reshape(b.SliceDim(v, 0, 0, 1), {}), on = b.Reshape(b.SliceDim(v, 0, 1, 2), {});
  n.SetOutput(0, b.Select(hot, b.BroadcastTo(on, out), b.BroadcastTo(off, out)));
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"Constant", Constant});
TPUSIM_REGISTER_ONNX_OP({"ConstantOfShape", ConstantOfShape});
TPUSIM_REGISTER_ONNX_OP({"Shape", ShapeOp});
TPUSIM_REGISTER_ONNX_OP({"Size", Size});
TPUSIM_REGISTER_ONNX_OP({"Reshape", Reshape});
TPUSIM_REGISTER_ONNX_OP({"Flatten", Flatten});
TPUSIM_REGISTER_ONNX_OP({"Squeeze", Squeeze});
TPUSIM_REGISTER_ONNX_OP({"Unsqueeze", Unsqueeze});
TPUSIM_REGISTER_ONNX_OP({"Transpose", Transpose});
TPUSIM_REGISTER_ONNX_OP({"Concat", Concat});
TPUSIM_REGISTER_ONNX_OP({"Split", Split});
TPUSIM_REGISTER_ONNX_OP({"Slice", Slice});
TPUSIM_REGISTER_ONNX_OP({"Expand", Expand});
TPUSIM_REGISTER_ONNX_OP({"Tile", Tile});
TPUSIM_REGISTER_ONNX_OP({"Range", Range});
TPUSIM_REGISTER_ONNX_OP({"Pad", Pad});
TPUSIM_REGISTER_ONNX_OP({"Trilu", Trilu});
TPUSIM_REGISTER_ONNX_OP({"EyeLike", EyeLike});
TPUSIM_REGISTER_ONNX_OP({"DepthToSpace", DepthToSpace});
TPUSIM_REGISTER_ONNX_OP({"SpaceToDepth", SpaceToDepth});
TPUSIM_REGISTER_ONNX_OP({"OneHot", OneHot});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
