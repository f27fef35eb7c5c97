// ONNX's reductions (Reduce*, ArgMax/ArgMin, CumSum) and the ops built on
// them: Softmax, LogSoftmax, Hardmax and the normalizations (Batch-,
// Instance-, Layer-, MeanVariance-, LRN). Axes come from the `axes`
// attribute, or from an input that must be known (ReduceSum from opset 13);
// none means all, unless noop_with_empty_axes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "frontend/onnx/node.h"
#include "frontend/onnx/ops/window.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::ElementType;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Dimension numbers of `axes` (sorted, each once); all of them when empty.
StatusOr<std::vector<int64_t>> ReduceDims(const Node& n, std::vector<int64_t> axes, int64_t rank) {
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (int64_t& a : axes) {
    TPUSIM_ASSIGN_OR_RETURN(a, n.Axis(a, rank));
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

// `r` (x reduced over `dims`) with those dimensions kept as 1s.
Value KeepDims(Builder& b, Value r, const Shape& x, const std::vector<int64_t>& dims) {
  Shape kept = x;
  for (int64_t d : dims) kept[d] = 1;
  return b.Reshape(r, kept);
}

// x reduced over `dims` by `body` from `init`, keeping them as 1s.
Value ReduceKeep(Builder& b, Value x, double init, const std::vector<int64_t>& dims,
                 std::string_view body) {
  return KeepDims(b, b.Reduce(x, b.ScalarLike(x, init), dims, body), Builder::ShapeOf(x), dims);
}

Value Broadcast(Builder& b, Value kept, Value like) {
  return b.BroadcastTo(kept, Builder::ShapeOf(like));
}

double Lowest(ElementType e) {
  if (ir::IsFloat(e)) return -kInf;
  if (ir::IsUnsignedInt(e)) return 0;
  return e == ElementType::kI1 ? 0 : std::ldexp(-1.0, ir::BitWidth(e) - 1);
}

double Highest(ElementType e) {
  if (ir::IsFloat(e)) return kInf;
  if (ir::IsUnsignedInt(e) || e == ElementType::kI1) return std::ldexp(1.0, ir::BitWidth(e)) - 1;
  return std::ldexp(1.0, ir::BitWidth(e) - 1) - 1;
}

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

Status Reduce(Node& n, Kind kind) {
  Builder& b = n.b();
  Value x = n.input(0);
  const int64_t rank = Builder::RankOf(x);
  std::vector<int64_t> axes;
  const bool axes_input = kind == Kind::kSum ? n.opset() >= 13 : n.opset() >= 18;
  if (axes_input) {
    if (n.has_input(1)) {
      TPUSIM_ASSIGN_OR_RETURN(axes, n.KnownInts(1, "axes"));
    }
  } else {
    axes = n.Ints("axes");
  }
  if (axes.empty() && n.Int("noop_with_empty_axes", 0) != 0) {
    n.SetOutput(0, x);
    return Status::Ok();
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReduceDims(n, axes, rank));
  const ElementType e = Builder::ElementOf(x);
  Value r;
  switch (kind) {
    case Kind::kSum:
    case Kind::kMean:
      r = b.Reduce(x, b.ScalarLike(x, 0), dims, "add");
      break;
    case Kind::kMax:
      r = b.Reduce(x, b.ScalarLike(x, Lowest(e)), dims, "maximum");
      break;
    case Kind::kMin:
      r = b.Reduce(x, b.ScalarLike(x, Highest(e)), dims, "minimum");
      break;
    case Kind::kProd:
      r = b.Reduce(x, b.ScalarLike(x, 1), dims, "multiply");
      break;
    case Kind::kL1:
      r = b.Reduce(b.Unary("abs", x), b.ScalarLike(x, 0), dims, "add");
      break;
    case Kind::kL2:
    case Kind::kSumSquare:
      r = b.Reduce(b.Mul(x, x), b.ScalarLike(x, 0), dims, "add");
      break;
    case Kind::kLogSum:
      r = b.Reduce(x, b.ScalarLike(x, 0), dims, "add");
      break;
    case Kind::kLogSumExp: {
      // max + log(sum(exp(x - max))), so that exp does not overflow.
      Value m = ReduceKeep(b, x, Lowest(e), dims, "maximum");
      Value finite = b.Select(b.Compare("EQ", m, b.ScalarLike(m, -kInf)), b.FullLike(m, 0), m);
      Value s = b.Reduce(b.Unary("exponential", b.Sub(x, Broadcast(b, finite, x))),
                         b.ScalarLike(x, 0), dims, "add");
      Value mr = b.Reshape(finite, Builder::ShapeOf(s));
      r = b.Add(b.Unary("log", s), mr);
      break;
    }
  }
  if (kind == Kind::kMean) {
    int64_t count = 1;
    for (int64_t d : dims) count *= Builder::ShapeOf(x)[d];
    r = b.Div(r, b.FullLike(r, static_cast<double>(count)));
  }
  if (kind == Kind::kL2) r = b.Unary("sqrt", r);
  if (kind == Kind::kLogSum) r = b.Unary("log", r);
  if (n.Int("keepdims", 1) != 0) r = KeepDims(b, r, Builder::ShapeOf(x), dims);
  n.SetOutput(0, r);
  return Status::Ok();
}

// The index of the first (or last) maximum or minimum along `axis`, as
// si64: a variadic reduce of (value, index) pairs.
Value ArgReduce(Builder& b, Value x, int64_t axis, bool max, bool last) {
  const Shape& xs = Builder::ShapeOf(x);
  const ElementType e = Builder::ElementOf(x);
  Value idx = b.Iota(xs, axis, ElementType::kSI64);
  Shape out = xs;
  out.erase(out.begin() + axis);
  ir::Operation* op = b.Emit(
      "stablehlo.reduce",
      {x, idx, b.ScalarLike(x, max ? Lowest(e) : Highest(e)), b.Scalar(ElementType::kSI64, 0)},
      {ir::Type::Tensor(e, out), ir::Type::Tensor(ElementType::kSI64, out)},
      {{"dimensions", I64Array({axis})}});
  const ir::Type sv = ir::Type::Tensor(e, {}), si = ir::Type::Tensor(ElementType::kSI64, {});
  b.AddRegion(op, {sv, si, sv, si}, [&](const std::vector<Value>& a) {
    // a wins when strictly better, or equal with the preferred index.
    Value better = b.Compare(max ? "GT" : "LT", a[0], a[2]);
    Value equal = b.Compare("EQ", a[0], a[2]);
    Value first = b.Compare(last ? "GT" : "LT", a[1], a[3]);
    Value take = b.Binary("or", better, b.Binary("and", equal, first));
    return std::vector<Value>{b.Select(take, a[0], a[2]), b.Select(take, a[1], a[3])};
  });
  return op->result(1);
}

Status Arg(Node& n, bool max) {
  Builder& b = n.b();
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), Builder::RankOf(x)));
  Value r = ArgReduce(b, x, axis, max, n.Int("select_last_index", 0) != 0);
  if (n.Int("keepdims", 1) != 0) r = KeepDims(b, r, Builder::ShapeOf(x), {axis});
  n.SetOutput(0, r);
  return Status::Ok();
}

// The softmax axis: from opset 13 one dimension; before, x flattened to 2-D
// at `axis` (default 1) and normalized over the second part.
struct SoftmaxAxes {
  Shape flat;  // the shape computed in
  int64_t axis;
};

StatusOr<SoftmaxAxes> SoftmaxShape(const Node& n, Value x) {
  const Shape& xs = Builder::ShapeOf(x);
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (n.opset() >= 13) {
    TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", -1), rank));
    return SoftmaxAxes{xs, axis};
  }
  int64_t axis = n.Int("axis", 1);
  if (axis < -rank || axis > rank) return n.Invalid("axis out of range");
  if (axis < 0) axis += rank;
  const int64_t outer =
      std::accumulate(xs.begin(), xs.begin() + axis, int64_t{1}, std::multiplies<>());
  const int64_t inner =
      std::accumulate(xs.begin() + axis, xs.end(), int64_t{1}, std::multiplies<>());
  return SoftmaxAxes{{outer, inner}, 1};
}

enum class Soft { kSoftmax, kLogSoftmax, kHardmax };

Status Softmax(Node& n, Soft kind) {
  Builder& b = n.b();
  Value in = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(SoftmaxAxes s, SoftmaxShape(n, in));
  Value x = b.Reshape(in, s.flat);
  Value y;
  if (kind == Soft::kHardmax) {
    Value arg = KeepDims(b, ArgReduce(b, x, s.axis, true, false), s.flat, {s.axis});
    Value hot = b.Compare("EQ", b.Iota(s.flat, s.axis, ElementType::kSI64), Broadcast(b, arg, x));
    y = b.Select(hot, b.FullLike(x, 1), b.FullLike(x, 0));
  } else {
    Value m = ReduceKeep(b, x, -kInf, {s.axis}, "maximum");
    Value shifted = b.Sub(x, Broadcast(b, m, x));
    Value e = b.Unary("exponential", shifted);
    Value sum = Broadcast(b, ReduceKeep(b, e, 0, {s.axis}, "add"), x);
    y = kind == Soft::kSoftmax ? b.Div(e, sum) : b.Sub(shifted, b.Unary("log", sum));
  }
  n.SetOutput(0, b.Reshape(y, Builder::ShapeOf(in)));
  return Status::Ok();
}

// (x - mean) / sqrt(var + eps) over `dims`, and the mean and 1/sqrt(var + eps).
struct Normalized {
  Value y, mean, inv_std;
};

Normalized Normalize(Builder& b, Value x, const std::vector<int64_t>& dims, double eps) {
  int64_t count = 1;
  for (int64_t d : dims) count *= Builder::ShapeOf(x)[d];
  Value sum = ReduceKeep(b, x, 0, dims, "add");
  Value mean = b.Div(sum, b.FullLike(sum, static_cast<double>(count)));
  Value centered = b.Sub(x, Broadcast(b, mean, x));
  Value var = ReduceKeep(b, b.Mul(centered, centered), 0, dims, "add");
  var = b.Div(var, b.FullLike(var, static_cast<double>(count)));
  Value inv = b.Unary("rsqrt", b.Add(var, b.FullLike(var, eps)));
  return {b.Mul(centered, Broadcast(b, inv, x)), mean, inv};
}

// v [C] along dimension 1 of `like`.
Value PerChannel(Builder& b, Value v, Value like) {
  return b.BroadcastInDim(v, Builder::ShapeOf(like), {1});
}

// training_mode=1 (opset 14): Y normalized by the batch's statistics over
// every dimension but 1 (the population variance, as ONNX's reference), and
// the running statistics moved toward them by `momentum`:
// running = input * momentum + batch * (1 - momentum).
Status BatchNormTraining(Node& n, double eps) {
  Builder& b = n.b();
  Value x = n.input(0);
  const Shape& xs = Builder::ShapeOf(x);
  std::vector<int64_t> dims = {0};
  for (int64_t d = 2; d < static_cast<int64_t>(xs.size()); ++d) dims.push_back(d);
  const double count = static_cast<double>(x.type().num_elements() / xs[1]);
  Value mean = ReduceKeep(b, x, 0, dims, "add");
  mean = b.Div(mean, b.FullLike(mean, count));
  Value centered = b.Sub(x, Broadcast(b, mean, x));
  Value var = ReduceKeep(b, b.Mul(centered, centered), 0, dims, "add");
  var = b.Div(var, b.FullLike(var, count));
  Value inv = b.Unary("rsqrt", b.Add(var, b.FullLike(var, eps)));
  Value scale = b.Convert(n.input(1), Builder::ElementOf(x));
  Value bias = b.Convert(n.input(2), Builder::ElementOf(x));
  Value y = b.Mul(centered, Broadcast(b, inv, x));
  n.SetOutput(0, b.Add(b.Mul(y, PerChannel(b, scale, x)), PerChannel(b, bias, x)));
  const double momentum = n.Float("momentum", 0.9f);
  const Value batch[2] = {mean, var};
  for (int i : {1, 2}) {
    if (!n.wants_output(i)) continue;
    Value running = n.input(2 + i);
    Value now = b.Convert(b.Reshape(batch[i - 1], {xs[1]}), Builder::ElementOf(running));
    n.SetOutput(i, b.Add(b.Mul(running, b.FullLike(running, momentum)),
                         b.Mul(now, b.FullLike(now, 1 - momentum))));
  }
  return Status::Ok();
}

Status BatchNormalization(Node& n) {
  const bool training = n.opset() >= 14 && n.Int("training_mode", 0) != 0;
  if (!training && (n.wants_output(1) || n.wants_output(2))) {
    // Before opset 14 the extra outputs (mean, var, saved_mean, saved_var)
    // asked for training; from 14 they need training_mode.
    return n.Unsupported("BatchNormalization in training mode before opset 14");
  }
  Builder& b = n.b();
  Value x = n.input(0);
  if (Builder::RankOf(x) < 2) return n.Invalid("needs an N x C x ... input");
  const double eps = n.Float("epsilon", 1e-5f);
  if (training) return BatchNormTraining(n, eps);
  Value inv = b.Unary("rsqrt", b.Add(n.input(4), b.FullLike(n.input(4), eps)));
  Value scale = b.Mul(n.input(1), inv);                       // gamma / std
  Value shift = b.Sub(n.input(2), b.Mul(n.input(3), scale));  // beta - mean * that
  n.SetOutput(0, b.Add(b.Mul(x, PerChannel(b, scale, x)), PerChannel(b, shift, x)));
  return Status::Ok();
}

Status InstanceNormalization(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const int64_t rank = Builder::RankOf(x);
  if (rank < 3) return n.Invalid("needs an N x C x spatial... input");
  std::vector<int64_t> dims;
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  Normalized z = Normalize(b, x, dims, n.Float("epsilon", 1e-5f));
  n.SetOutput(0, b.Add(b.Mul(z.y, PerChannel(b, n.input(1), x)), PerChannel(b, n.input(2), x)));
  return Status::Ok();
}

Status LayerNormalization(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const int64_t rank = Builder::RankOf(x);
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", -1), rank));
  std::vector<int64_t> dims;
  for (int64_t d = axis; d < rank; ++d) dims.push_back(d);
  // stash_type 1 (the default): statistics in f32.
  const ElementType e = Builder::ElementOf(x);
  const bool stash = n.Int("stash_type", 1) == 1 && e != ElementType::kF64;
  Value xs = stash ? b.Convert(x, ElementType::kF32) : x;
  Normalized z = Normalize(b, xs, dims, n.Float("epsilon", 1e-5f));
  Value y = b.Convert(z.y, e);
  for (int i : {1, 2}) {
    if (!n.has_input(i)) continue;
    Shape out;
    if (!BroadcastShapes(Builder::ShapeOf(n.input(i)), Builder::ShapeOf(x), &out) ||
        out != Builder::ShapeOf(x)) {
      return n.Invalid(i == 1 ? "Scale does not broadcast to X" : "B does not broadcast to X");
    }
    y = i == 1 ? b.Mul(y, b.BroadcastTo(n.input(1), out))
               : b.Add(y, b.BroadcastTo(n.input(2), out));
  }
  n.SetOutput(0, y);
  n.SetOutput(1, z.mean);
  n.SetOutput(2, z.inv_std);
  return Status::Ok();
}

Status MeanVarianceNormalization(Node& n) {
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                          ReduceDims(n, n.Ints("axes", {0, 2, 3}), Builder::RankOf(x)));
  n.SetOutput(0, Normalize(n.b(), x, dims, 1e-9).y);
  return Status::Ok();
}

Status Lrn(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const Shape& xs = Builder::ShapeOf(x);
  if (xs.size() < 3) return n.Invalid("needs an N x C x spatial... input");
  const int64_t size = n.Int("size", 0);
  if (size < 1) return n.Invalid("size must be positive");
  const double alpha = n.Float("alpha", 1e-4f), beta = n.Float("beta", 0.75f),
               bias = n.Float("bias", 1.0f);
  const int64_t r = static_cast<int64_t>(xs.size());
  std::vector<int64_t> window(r, 1), ones(r, 1);
  window[1] = size;
  // The channel window centred, its larger half after.
  std::vector<int64_t> low(r, 0), high(r, 0);
  low[1] = (size - 1) / 2;
  high[1] = size - 1 - low[1];
  ir::Attribute padding = Padding(low, high);
  Value sq = b.Mul(x, x);
  ir::Operation* op = b.Emit("stablehlo.reduce_window", {sq, b.ScalarLike(x, 0)}, {sq.type()},
                             {{"window_dimensions", I64Array(window)},
                              {"window_strides", I64Array(ones)},
                              {"base_dilations", I64Array(ones)},
                              {"window_dilations", I64Array(ones)},
                              {"padding", padding}});
  b.AddScalarBody(op, Builder::ElementOf(x), "add");
  Value sum = op->result(0);
  Value d =
      b.Add(b.FullLike(x, bias), b.Mul(sum, b.FullLike(x, alpha / static_cast<double>(size))));
  n.SetOutput(0, b.Div(x, b.Binary("power", d, b.FullLike(x, beta))));
  return Status::Ok();
}

Status CumSum(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, n.KnownInts(1, "axis"));
  if (axis_v.size() != 1) return n.Invalid("axis must be one value");
  const int64_t rank = Builder::RankOf(x);
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(axis_v[0], rank));
  const bool exclusive = n.Int("exclusive", 0) != 0, reverse = n.Int("reverse", 0) != 0;
  if (reverse) x = b.Reverse(x, {axis});
  // A running sum: a window of the whole axis ending at each element.
  const int64_t len = Builder::ShapeOf(x)[axis];
  std::vector<int64_t> window(rank, 1), ones(rank, 1), low(rank, 0);
  window[axis] = std::max<int64_t>(len, 1);
  low[axis] = std::max<int64_t>(len - 1, 0);
  ir::Attribute padding = Padding(low, std::vector<int64_t>(rank, 0));
  ir::Operation* op = b.Emit("stablehlo.reduce_window", {x, b.ScalarLike(x, 0)}, {x.type()},
                             {{"window_dimensions", I64Array(window)},
                              {"window_strides", I64Array(ones)},
                              {"base_dilations", I64Array(ones)},
                              {"window_dilations", I64Array(ones)},
                              {"padding", padding}});
  b.AddScalarBody(op, Builder::ElementOf(x), "add");
  Value y = op->result(0);
  if (exclusive) y = b.Sub(y, x);
  if (reverse) y = b.Reverse(y, {axis});
  n.SetOutput(0, y);
  return Status::Ok();
}

#define REDUCE(onnx, kind) \
  TPUSIM_REGISTER_ONNX_OP({onnx, [](Node& n) { return Reduce(n, Kind::kind); }})
REDUCE("ReduceSum", kSum);
REDUCE("ReduceMean", kMean);
REDUCE("ReduceMax", kMax);
REDUCE("ReduceMin", kMin);
REDUCE("ReduceProd", kProd);
REDUCE("ReduceL1", kL1);
REDUCE("ReduceL2", kL2);
REDUCE("ReduceLogSum", kLogSum);
REDUCE("ReduceLogSumExp", kLogSumExp);
REDUCE("ReduceSumSquare", kSumSquare);
TPUSIM_REGISTER_ONNX_OP({"ArgMax", [](Node& n) { return Arg(n, true); }});
TPUSIM_REGISTER_ONNX_OP({"ArgMin", [](Node& n) { return Arg(n, false); }});
TPUSIM_REGISTER_ONNX_OP({"Softmax", [](Node& n) { return Softmax(n, Soft::kSoftmax); }});
TPUSIM_REGISTER_ONNX_OP({"LogSoftmax", [](Node& n) { return Softmax(n, Soft::kLogSoftmax); }});
TPUSIM_REGISTER_ONNX_OP({"Hardmax", [](Node& n) { return Softmax(n, Soft::kHardmax); }});
TPUSIM_REGISTER_ONNX_OP({"BatchNormalization", BatchNormalization});
TPUSIM_REGISTER_ONNX_OP({"InstanceNormalization", InstanceNormalization});
TPUSIM_REGISTER_ONNX_OP({"LayerNormalization", LayerNormalization});
TPUSIM_REGISTER_ONNX_OP({"MeanVarianceNormalization", MeanVarianceNormalization});
TPUSIM_REGISTER_ONNX_OP({"LRN", Lrn});
TPUSIM_REGISTER_ONNX_OP({"CumSum", CumSum});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
