// Quantized matmuls, each operand scaled per tensor by its absolute maximum
// (current scaling) so that it spans its format:
// - fp8: divided by its maximum over the format's largest finite value; the
//   MXU accumulates in f32 and rounds to the activations' type, and the
//   product is scaled back there (so partial sums over a split contraction
//   combine in that type, as in the unquantized step).
// - int8, as AQT's symmetric int8 in MaxText's quantization=int8: divided by
//   its maximum over 127 and rounded to the nearest integer; the MXU
//   accumulates in i32, and the product is scaled back in f32.
#include "model/step_builder.h"

namespace tpusim::model {

Val StepBuilder::Matmul(const Val& a, const char* fa, const Val& b, const char* fb, const Dims& ca,
                        const Dims& cb, const std::string& out) {
  if (o_.int8) {
    Val sa, sb;
    const Val qa = QuantizeInt8(a, sa), qb = QuantizeInt8(b, sb);
    const Val product = w_.Convert(w_.Dot(qa, qb, {}, {}, ca, cb, "i32"), "f32");
    const Val scaled = Mul(product, w_.Broadcast(Mul(sa, sb), product.shape, {}));
    return out == "f32" ? scaled : w_.Convert(scaled, out);
  }
  if (!o_.fp8) return w_.Dot(a, b, {}, {}, ca, cb, out);
  Val sa, sb;
  const Val qa = Quantize(a, fa, sa), qb = Quantize(b, fb, sb);
  const Val product = w_.Dot(qa, qb, {}, {}, ca, cb, out);
  return Mul(product, w_.Broadcast(w_.Convert(Mul(sa, sb), out), product.shape, {}));
}

// x's absolute maximum over `largest`, in x's own type: the maximum is exact
// there. An all-zero tensor keeps a finite scale.
Val StepBuilder::Scale(const Val& x, double largest) {
  Dims all(static_cast<size_t>(x.rank()));
  for (int64_t d = 0; d < x.rank(); ++d) all[static_cast<size_t>(d)] = d;
  const Val amax =
      w_.Binary("maximum", w_.Reduce("maximum", w_.Unary("abs", x), all), Scalar(1e-30, x.element));
  return w_.Binary("divide", amax, Scalar(largest, x.element));
}

// The quotient needs no more precision than fp8 keeps.
Val StepBuilder::Quantize(const Val& x, const char* format, Val& scale) {
  const std::string key = x.name + " " + format;
  if (auto it = quantized_.find(key); it != quantized_.end()) {
    scale = it->second.second;
    return it->second.first;
  }
  const Val s = Scale(x, std::string(format) == kE5M2 ? 57344 : 448);
  scale = w_.Convert(s, "f32");
  // One reciprocal, then a multiply per element.
  const Val inverse = w_.Binary("divide", Scalar(1, x.element), s);
  const Val q = w_.Convert(Mul(x, w_.Broadcast(inverse, x.shape, {})), format);
  quantized_[key] = {q, scale};
  return q;
}

// In f32, so that the rounding to integers is exact; convert truncates, so
// the quotient is rounded (to even, as AQT's) first.
Val StepBuilder::QuantizeInt8(const Val& x, Val& scale) {
  const std::string key = x.name + " i8";
  if (auto it = quantized_.find(key); it != quantized_.end()) {
    scale = it->second.second;
    return it->second.first;
  }
  const Val x32 = x.element == "f32" ? x : w_.Convert(x, "f32");
  scale = Scale(x32, 127);
  const Val inverse = w_.Binary("divide", Scalar(1, "f32"), scale);
  const Val q = w_.Convert(
      w_.Unary("round_nearest_even", Mul(x32, w_.Broadcast(inverse, x.shape, {}))), "i8");
  quantized_[key] = {q, scale};
  return q;
}

}  // namespace tpusim::model
