// fp8 matmuls with per-tensor current scaling: each operand divided by its
// absolute maximum over the format's largest finite value, so that it spans
// the format; the MXU accumulates in f32 and rounds to the activations'
// type, and the product is scaled back there (so partial sums over a
// split contraction combine in that type, as in the unquantized step).
#include "model/step_builder.h"

namespace tpusim::model {

Val StepBuilder::Matmul(const Val& a, const char* fa, const Val& b, const char* fb, const Dims& ca,
                        const Dims& cb, const std::string& out) {
  if (!o_.fp8) return w_.Dot(a, b, {}, {}, ca, cb, out);
  Val sa, sb;
  const Val qa = Quantize(a, fa, sa), qb = Quantize(b, fb, sb);
  const Val product = w_.Dot(qa, qb, {}, {}, ca, cb, out);
  return Mul(product, w_.Broadcast(w_.Convert(Mul(sa, sb), out), product.shape, {}));
}

// In x's own type: the maximum is exact there, and the quotient needs no
// more precision than fp8 keeps.
Val StepBuilder::Quantize(const Val& x, const char* format, Val& scale) {
  const std::string key = x.name + " " + format;
  if (auto it = quantized_.find(key); it != quantized_.end()) {
    scale = it->second.second;
    return it->second.first;
  }
  const double largest = std::string(format) == kE5M2 ? 57344 : 448;
  Dims all(static_cast<size_t>(x.rank()));
  for (int64_t d = 0; d < x.rank(); ++d) all[static_cast<size_t>(d)] = d;
  // An all-zero tensor keeps a finite scale.
  const Val amax =
      w_.Binary("maximum", w_.Reduce("maximum", w_.Unary("abs", x), all), Scalar(1e-30, x.element));
  const Val s = w_.Binary("divide", amax, Scalar(largest, x.element));
  scale = w_.Convert(s, "f32");
  // One reciprocal, then a multiply per element.
  const Val inverse = w_.Binary("divide", Scalar(1, x.element), s);
  const Val q = w_.Convert(Mul(x, w_.Broadcast(inverse, x.shape, {})), format);
  quantized_[key] = {q, scale};
  return q;
}

}  // namespace tpusim::model
