// ONNX's signal ops (opset 17): DFT and STFT (stablehlo.fft), the Hann,
// Hamming and Blackman windows, and MelWeightMatrix.
//
// Signals are real, [..., 1], or complex as (real, imaginary) pairs,
// [..., 2]; results are pairs, [..., 2]. The transform runs on complex<f32>
// (complex<f64> for f64 signals; f16 and bf16 widen to f32 and the result
// narrows back) over the signal axis moved last. inverse is IFFT, with its
// 1/n. onesided keeps bins [0, n/2] of the full transform, for complex
// signals too (as ONNX's reference). Lengths fix shapes, so they must be
// known at import: DFT's dft_length (default: the axis' size; a longer one
// zero-pads, a shorter one truncates), STFT's frame_step and frame_length
// (default: the window's length), the windows' size, MelWeightMatrix's
// num_mel_bins and dft_length. Everything else is computed by the program.
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "frontend/onnx/node.h"
#include "frontend/onnx/tensor_proto.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::Attribute;
using ir::ElementType;

// The real type a signal of `e` is transformed in.
ElementType WorkType(ElementType e) {
  return e == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32;
}

// A [..., 1] or [..., 2] signal as complex values of shape [...].
Value ToComplex(Builder& b, Value x) {
  const ElementType part = WorkType(Builder::ElementOf(x));
  const ElementType complex = part == ElementType::kF64 ? ElementType::kC128 : ElementType::kC64;
  const int64_t last = Builder::RankOf(x) - 1;
  Shape shape = Builder::ShapeOf(x);
  shape.pop_back();
  x = b.Convert(x, part);
  Value re = b.Reshape(b.SliceDim(x, last, 0, 1), shape);
  if (Builder::ShapeOf(x)[last] == 1) return b.Convert(re, complex);
  Value im = b.Reshape(b.SliceDim(x, last, 1, 2), shape);
  return b.Emit("stablehlo.complex", {re, im}, {ir::Type::Tensor(complex, shape)})->result(0);
}

// Complex values [...] as (real, imaginary) pairs [..., 2] of `element`.
Value ToPairs(Builder& b, Value z, ElementType element) {
  const ElementType part = ir::ComplexPartType(Builder::ElementOf(z));
  Shape pair = Builder::ShapeOf(z);
  pair.push_back(1);
  const ir::Type t = ir::Type::Tensor(part, Builder::ShapeOf(z));
  Value re = b.Reshape(b.Emit("stablehlo.real", {z}, {t})->result(0), pair);
  Value im = b.Reshape(b.Emit("stablehlo.imag", {z}, {t})->result(0), pair);
  return b.Convert(b.Concat({re, im}, Builder::RankOf(re) - 1), element);
}

// The DFT of length `len` along dimension `axis` of a [..., 1 or 2] signal
// (not its last), as [..., 2] pairs: zero-padded or truncated to `len`.
Value Transform(Builder& b, Value x, int64_t axis, int64_t len, bool inverse, bool onesided) {
  const int64_t have = Builder::ShapeOf(x)[axis];
  if (len < have) x = b.SliceDim(x, axis, 0, len);
  if (len > have) {
    std::vector<int64_t> low(Builder::RankOf(x), 0), high(Builder::RankOf(x), 0);
    high[axis] = len - have;
    x = b.Pad(x, b.ScalarLike(x, 0), low, high, low);
  }
  const ElementType element = Builder::ElementOf(x);
  Value z = ToComplex(b, x);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < Builder::RankOf(z); ++d) {
    if (d != axis) perm.push_back(d);
  }
  perm.push_back(axis);
  std::vector<int64_t> back(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) back[perm[i]] = static_cast<int64_t>(i);
  z = b.Transpose(z, perm);
  z = b.Emit("stablehlo.fft", {z}, {z.type()},
             {{"fft_type", Attribute::Enum("stablehlo.fft_type", inverse ? "IFFT" : "FFT")},
              {"fft_length", I64Array({len})}})
          ->result(0);
  z = b.Transpose(z, back);
  if (onesided) z = b.SliceDim(z, axis, 0, len / 2 + 1);
  return ToPairs(b, z, element);
}

// A signal's checks: rank 2 or more, a last dimension of 1 or 2.
Status CheckSignal(const Node& n, Value x) {
  const Shape& s = Builder::ShapeOf(x);
  if (s.size() < 2 || (s.back() != 1 && s.back() != 2)) {
    return n.Invalid("the signal " + x.type().ToString() +
                     " must be [batch, ..., 1] (real) or [batch, ..., 2] (complex)");
  }
  if (!ir::IsFloat(Builder::ElementOf(x))) return n.Invalid("the signal must be floating-point");
  return Status::Ok();
}

// A scalar input needed at import (a length or a step), at least `min`.
StatusOr<int64_t> KnownLength(const Node& n, int i, std::string_view what, int64_t min) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> v, n.KnownInts(i, what));
  if (v.size() != 1) return n.Invalid(std::string(what) + " must be one value");
  if (v[0] < min)
    return n.Invalid(std::string(what) + " " + std::to_string(v[0]) + " is below " +
                     std::to_string(min));
  return v[0];
}

// axis: an attribute (default 1) to opset 19, then input 2 (default -2);
// negative counts from the back of the input's rank, and the last
// dimension (the pairs) is not an axis.
Status Dft(Node& n) {
  Value x = n.input(0);
  TPUSIM_RETURN_IF_ERROR(CheckSignal(n, x));
  const int64_t rank = Builder::RankOf(x);
  int64_t axis = n.Int("axis", 1);
  if (n.opset() >= 20) {
    axis = -2;
    if (n.has_input(2)) {
      TPUSIM_ASSIGN_OR_RETURN(axis, KnownLength(n, 2, "axis", -rank));
    }
  }
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank - 2) {
    return n.Invalid("axis " + std::to_string(axis) + " is not a signal dimension of " +
                     x.type().ToString());
  }
  int64_t len = Builder::ShapeOf(x)[axis];
  if (n.has_input(1)) {
    TPUSIM_ASSIGN_OR_RETURN(len, KnownLength(n, 1, "dft_length", 1));
  }
  n.SetOutput(0,
              Transform(n.b(), x, axis, len, n.Int("inverse", 0) != 0, n.Int("onesided", 0) != 0));
  return Status::Ok();
}

// Frames [batch, frames, frame_length, 1 or 2] of a [batch, length, 1 or 2]
// signal, frame f starting at f * step: one gather.
Value Frames(Builder& b, Value x, int64_t frames, int64_t step, int64_t frame_length) {
  const Shape& s = Builder::ShapeOf(x);
  std::vector<int64_t> starts;
  for (int64_t f = 0; f < frames; ++f) starts.push_back(f * step);
  Value idx = b.Reshape(b.I64s(starts), {frames, 1});
  Attribute dnums =
      Attribute::Struct("stablehlo.gather", {{"offset_dims", IntList({1, 2, 3})},
                                             {"collapsed_slice_dims", IntList({})},
                                             {"operand_batching_dims", IntList({})},
                                             {"start_indices_batching_dims", IntList({})},
                                             {"start_index_map", IntList({1})},
                                             {"index_vector_dim", Attribute::Int(1)}});
  const Shape out = {frames, s[0], frame_length, s[2]};
  Value g = b.Emit("stablehlo.gather", {x, idx}, {ir::Type::Tensor(Builder::ElementOf(x), out)},
                   {{"dimension_numbers", dnums},
                    {"slice_sizes", I64Array({s[0], frame_length, s[2]})},
                    {"indices_are_sorted", Attribute::Bool(true)}})
                ->result(0);
  return b.Transpose(g, {1, 0, 2, 3});
}

// The window, when given, multiplies each frame; its length is the frame
// length, which frame_length, when also given, must equal.
Status Stft(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  TPUSIM_RETURN_IF_ERROR(CheckSignal(n, x));
  if (Builder::RankOf(x) != 3) return n.Invalid("the signal must be [batch, length, 1 or 2]");
  TPUSIM_ASSIGN_OR_RETURN(int64_t step, KnownLength(n, 1, "frame_step", 1));
  int64_t frame_length = -1;
  if (n.has_input(3)) {
    TPUSIM_ASSIGN_OR_RETURN(frame_length, KnownLength(n, 3, "frame_length", 1));
  }
  if (n.has_input(2)) {
    Value w = n.input(2);
    if (Builder::RankOf(w) != 1 || (frame_length >= 0 && Builder::ShapeOf(w)[0] != frame_length)) {
      return n.Invalid("the window " + w.type().ToString() + " must be 1-D of frame_length");
    }
    frame_length = Builder::ShapeOf(w)[0];
  }
  if (frame_length < 1) return n.Invalid("needs a window or a frame_length");
  const int64_t length = Builder::ShapeOf(x)[1];
  if (frame_length > length) return n.Invalid("frame_length is longer than the signal");
  const int64_t frames = (length - frame_length) / step + 1;
  Value f = Frames(b, x, frames, step, frame_length);
  if (n.has_input(2)) {
    Value w = b.Convert(n.input(2), Builder::ElementOf(x));
    f = b.Mul(f, b.BroadcastInDim(w, Builder::ShapeOf(f), {2}));
  }
  n.SetOutput(0, Transform(b, f, 2, frame_length, false, n.Int("onesided", 1) != 0));
  return Status::Ok();
}

// ------------------------------------------------------------ windows

// A generalized cosine window a0 - a1 cos(t) + a2 cos(2t), t = 2 pi k / N
// for k in [0, size), N = size (periodic, the default) or size - 1
// (symmetric, N = 0 giving NaN as ONNX's function does): computed in f32
// as ONNX's function body, then cast to output_datatype (default float).
Status CosineWindow(Node& n, double a0, double a1, double a2) {
  Builder& b = n.b();
  TPUSIM_ASSIGN_OR_RETURN(int64_t size, KnownLength(n, 0, "size", 0));
  TPUSIM_ASSIGN_OR_RETURN(ElementType out,
                          ElementOfOnnx(static_cast<int32_t>(n.Int("output_datatype", 1))));
  const ElementType f32 = ElementType::kF32;
  const float period = static_cast<float>(n.Int("periodic", 1) != 0 ? size : size - 1);
  const float step = static_cast<float>(2 * std::numbers::pi) / period;
  Value t = b.Mul(b.Iota({size}, 0, f32), b.Splat(f32, step, {size}));
  Value w = b.Sub(b.Splat(f32, static_cast<float>(a0), {size}),
                  b.Mul(b.Splat(f32, static_cast<float>(a1), {size}), b.Unary("cosine", t)));
  if (a2 != 0) {
    Value t2 = b.Mul(t, b.Splat(f32, 2, {size}));
    w = b.Add(w, b.Mul(b.Splat(f32, static_cast<float>(a2), {size}), b.Unary("cosine", t2)));
  }
  n.SetOutput(0, b.Convert(w, out));
  return Status::Ok();
}

// ------------------------------------------------------------ MelWeightMatrix

// Output [dft_length / 2 + 1, num_mel_bins]: triangles between
// num_mel_bins + 2 edges equally spaced in mel(f) = 2595 log10(1 + f / 700)
// from lower_edge_hertz to upper_edge_hertz, each edge's spectrogram bin
// floor((dft_length + 1) f / sample_rate); filter i rises from edge i to 1
// at edge i + 1 and falls to 0 at edge i + 2. In f64, as ONNX's reference.
Status MelWeightMatrix(Node& n) {
  Builder& b = n.b();
  TPUSIM_ASSIGN_OR_RETURN(int64_t mels, KnownLength(n, 0, "num_mel_bins", 1));
  TPUSIM_ASSIGN_OR_RETURN(int64_t dft_length, KnownLength(n, 1, "dft_length", 1));
  TPUSIM_ASSIGN_OR_RETURN(ElementType out,
                          ElementOfOnnx(static_cast<int32_t>(n.Int("output_datatype", 1))));
  for (int i : {2, 3, 4}) {
    if (n.input(i).type().num_elements() != 1)
      return n.Invalid("sample_rate and the edges must be scalars");
  }
  const ElementType f64 = ElementType::kF64;
  auto scalar = [&](int i) { return b.Reshape(b.Convert(n.input(i), f64), {}); };
  auto c = [&](double v) { return b.Scalar(f64, v); };
  auto mel = [&](Value hz) {
    Value log10 = b.Div(b.Unary("log", b.Add(c(1), b.Div(hz, c(700)))), c(std::log(10.0)));
    return b.Mul(c(2595), log10);
  };
  Value lo = mel(scalar(3)), hi = mel(scalar(4));
  const int64_t edges = mels + 2;
  Value step = b.Div(b.Sub(hi, lo), c(static_cast<double>(edges)));
  Value m = b.Add(b.Mul(b.Iota({edges}, 0, f64), b.BroadcastTo(step, {edges})),
                  b.BroadcastTo(lo, {edges}));
  Value hz = b.Mul(
      b.FullLike(m, 700),
      b.Sub(b.Binary("power", b.FullLike(m, 10), b.Div(m, b.FullLike(m, 2595))), b.FullLike(m, 1)));
  Value bins =
      b.Unary("floor", b.Div(b.Mul(b.FullLike(hz, static_cast<double>(dft_length + 1)), hz),
                             b.BroadcastTo(scalar(2), {edges})));
  // Edge i, i + 1 and i + 2 of filter i, along the output's columns.
  const int64_t rows = dft_length / 2 + 1;
  const Shape shape = {rows, mels};
  auto edge = [&](int64_t k) {
    return b.BroadcastInDim(b.SliceDim(bins, 0, k, k + mels), shape, {1});
  };
  Value left = edge(0), center = edge(1), right = edge(2);
  Value j = b.Iota(shape, 0, f64);
  Value zero = b.FullLike(j, 0), one = b.FullLike(j, 1);
  auto in = [&](Value from, std::string_view below, Value to) {
    return b.Binary("and", b.Compare("GE", j, from), b.Compare(below, j, to));
  };
  Value rise = b.Select(in(left, "LE", center), b.Div(b.Sub(j, left), b.Sub(center, left)), zero);
  rise = b.Select(b.Compare("EQ", left, center), b.Select(b.Compare("EQ", j, center), one, zero),
                  rise);
  Value w = b.Select(in(center, "LT", right), b.Div(b.Sub(right, j), b.Sub(right, center)), rise);
  n.SetOutput(0, b.Convert(w, out));
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"DFT", Dft});
TPUSIM_REGISTER_ONNX_OP({"STFT", Stft});
TPUSIM_REGISTER_ONNX_OP({"HannWindow", [](Node& n) { return CosineWindow(n, 0.5, 0.5, 0); }});
TPUSIM_REGISTER_ONNX_OP({"HammingWindow",
                         [](Node& n) { return CosineWindow(n, 25.0 / 46, 21.0 / 46, 0); }});
TPUSIM_REGISTER_ONNX_OP({"BlackmanWindow",
                         [](Node& n) { return CosineWindow(n, 0.42, 0.5, 0.08); }});
TPUSIM_REGISTER_ONNX_OP({"MelWeightMatrix", MelWeightMatrix});

}  // namespace
}  // namespace tpusim::frontend::onnx_import
