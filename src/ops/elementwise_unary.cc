// Elementwise functions of one tensor: abs, negate, sign, rounding, and the
// transcendental functions.
//
// f32 and narrower floats evaluate transcendental functions in double and
// round once to the result type; complex<f32> likewise via complex<double>.
#include <cmath>

#include "ops/kernels/elementwise_kernel.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

using namespace ew;  // NOLINT: the kernel vocabulary is used throughout

using D = double;
using CD = std::complex<double>;

template <unsigned kClasses>
Status VerifyUnary(const ir::Operation& op) {
  return VerifySameType(op, 1, kClasses);
}

// The definition of a unary op accepting kClasses whose element function is
// Fn (called with the compute type) and whose work is `work`.
template <unsigned kClasses, class Fn>
OpDef UnaryDef(const char* name, WorkFn work) {
  RegisterSameTypeChunk<kClasses, Fn>(name);  // for fused loops
  return {.name = name,
          .verify = VerifyUnary<kClasses>,
          .infer = InferElementwise,
          .eval =
              [](EvalContext& ctx, const ir::Operation& op, std::span<const Tensor> operands) {
                return EvalSameType<kClasses>(ctx, op, operands, Fn{});
              },
          .work = std::move(work)};
}

// A transcendental function given by its double and complex<double> forms
// (captureless lambda types), evaluated through ViaDouble; on bf16 and f16
// tensors through a table of its values (Table16).
template <class RealFn, class ComplexFn>
struct ViaDoubleFn {
  static constexpr bool kTabulate = true;
  template <class C> C operator()(C x) const {
    if constexpr (kIsComplex<C>) return ViaDouble(x, ComplexFn{});
    else return ViaDouble(x, RealFn{});
  }
};

// exp(z) - 1 without cancellation for small z:
// e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2).
CD ComplexExpm1(CD z) {
  double s = std::sin(z.imag() / 2);
  return {std::expm1(z.real()) * std::cos(z.imag()) - 2 * s * s,
          std::exp(z.real()) * std::sin(z.imag())};
}

// log(1 + z): the spec's complex(log(hypot(x + 1, y)), atan2(y, x + 1)),
// with the real part computed as log1p(2x + x^2 + y^2) / 2 where that does
// not overflow, which keeps precision for small |z|.
CD ComplexLog1p(CD z) {
  double x = z.real(), y = z.imag();
  double im = std::atan2(y, x + 1);
  if (std::abs(x) < 1e150 && std::abs(y) < 1e150) {
    return {std::log1p(x * (x + 2) + y * y) / 2, im};
  }
  return {std::log(std::hypot(x + 1, y)), im};
}

// The principal cube root, as the reference interpreter defines it.
CD ComplexCbrt(CD z) { return std::polar(std::cbrt(std::abs(z)), std::arg(z) / 3); }

using Exp = ViaDoubleFn<decltype([](D z) { return std::exp(z); }),
                        decltype([](CD z) { return std::exp(z); })>;
using Expm1 = ViaDoubleFn<decltype([](D z) { return std::expm1(z); }),
                          decltype([](CD z) { return ComplexExpm1(z); })>;
using Log = ViaDoubleFn<decltype([](D z) { return std::log(z); }),
                        decltype([](CD z) { return std::log(z); })>;
using Log1p = ViaDoubleFn<decltype([](D z) { return std::log1p(z); }),
                          decltype([](CD z) { return ComplexLog1p(z); })>;
using Logistic = ViaDoubleFn<decltype([](D z) { return 1 / (1 + std::exp(-z)); }),
                             decltype([](CD z) { return 1.0 / (1.0 + std::exp(-z)); })>;
using Sin = ViaDoubleFn<decltype([](D z) { return std::sin(z); }),
                        decltype([](CD z) { return std::sin(z); })>;
using Cos = ViaDoubleFn<decltype([](D z) { return std::cos(z); }),
                        decltype([](CD z) { return std::cos(z); })>;
using Tan = ViaDoubleFn<decltype([](D z) { return std::tan(z); }),
                        decltype([](CD z) { return std::tan(z); })>;
using Tanh = ViaDoubleFn<decltype([](D z) { return std::tanh(z); }),
                         decltype([](CD z) { return std::tanh(z); })>;
// A float's square root computed in float: the double square root rounded to
// float gives the same bits (double rounding is innocuous for sqrt when the
// wider format has at least 2p + 2 bits, 53 >= 2 * 24 + 2), and the float
// form vectorizes.
using SqrtViaDouble = ViaDoubleFn<decltype([](D z) { return std::sqrt(z); }),
                                  decltype([](CD z) { return std::sqrt(z); })>;
struct Sqrt : SqrtViaDouble {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) return std::sqrt(x);
    else return SqrtViaDouble::operator()(x);
  }
};
using Rsqrt = ViaDoubleFn<decltype([](D z) { return 1 / std::sqrt(z); }),
                          decltype([](CD z) { return 1.0 / std::sqrt(z); })>;
using Cbrt = ViaDoubleFn<decltype([](D z) { return std::cbrt(z); }),
                         decltype([](CD z) { return ComplexCbrt(z); })>;

struct Ceil {
  template <class C> C operator()(C x) const { return std::ceil(x); }
};
struct Floor {
  template <class C> C operator()(C x) const { return std::floor(x); }
};
// Ties away from zero.
struct RoundAfz {
  template <class C> C operator()(C x) const { return std::round(x); }
};
// Ties to even: nearbyint in the default rounding mode, which tpusim never
// changes.
struct RoundEven {
  template <class C> C operator()(C x) const { return std::nearbyint(x); }
};

struct Negate {
  template <class C> C operator()(C x) const {
    if constexpr (kIsInt<C>) return WrapNeg(x);
    else return -x;
  }
};

// -1, 0 or 1; floats keep the sign of zero and NaN; complex x / |x|.
struct Sign {
  template <class C> C operator()(C x) const {
    if constexpr (kIsInt<C>) {
      return static_cast<C>((x > 0) - (x < 0));
    } else if constexpr (kIsComplex<C>) {
      using T = typename C::value_type;
      if (std::isnan(x.real()) || std::isnan(x.imag())) {
        T nan = std::numeric_limits<T>::quiet_NaN();
        return C(nan, nan);
      }
      if (x == C(0)) return C(0);
      return ViaDouble(x, [](CD z) { return z / std::abs(z); });
    } else {
      if (std::isnan(x) || x == 0) return x;
      return x < 0 ? C(-1) : C(1);
    }
  }
};

// Signed integers and floats keep their type; complex abs is real.
struct Abs {
  template <class C> C operator()(C x) const {
    if constexpr (kIsInt<C>) return x < 0 ? WrapNeg(x) : x;  // abs(INT_MIN) = INT_MIN
    else return std::abs(x);
  }
};

Status VerifyAbs(const ir::Operation& op) {
  constexpr unsigned kClasses = kSignedTypes | kFloatTypes | kComplexTypes;
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& type = op.operand(0).type();
  if (!InClass(type.element(), kClasses)) return BadElementType(op, type.element(), kClasses);
  ir::ElementType e = type.element();
  return ExpectResultType(op, 0, type.WithElement(ir::IsComplex(e) ? ir::ComplexPartType(e) : e));
}

template <class T>
void ComplexAbs(const Tensor& in, Tensor& out) {
  using CI = NativeCodec<std::complex<T>>;
  using CO = NativeCodec<T>;
  MapUnary(CI{}, in.data<std::complex<T>>(), CO{}, out.mutable_data<T>(), in.num_elements(),
           [](std::complex<T> z) { return static_cast<T>(std::abs(CD(z.real(), z.imag()))); });
}

StatusOr<std::vector<Tensor>> EvalAbs(EvalContext& ctx, const ir::Operation& op,
                                      std::span<const Tensor> operands) {
  ir::ElementType e = operands.empty() ? ir::ElementType::kI1 : operands[0].element();
  if (!ir::IsComplex(e)) {
    return EvalSameType<kSignedTypes | kFloatTypes>(ctx, op, operands, Abs{});
  }
  std::vector<Tensor> out(1);
  TPUSIM_ASSIGN_OR_RETURN(out[0], Tensor::AllocateUninitialized(op.result(0).type()));
  if (out[0].num_elements() != operands[0].num_elements() ||
      out[0].element() != ir::ComplexPartType(e)) {
    return Internal("'stablehlo.abs' result does not match its operand");
  }
  if (e == ir::ElementType::kC64) ComplexAbs<float>(operands[0], out[0]);
  else ComplexAbs<double>(operands[0], out[0]);
  return out;
}

Status VerifyIsFinite(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& type = op.operand(0).type();
  if (!ir::IsFloat(type.element())) return BadElementType(op, type.element(), kFloatTypes);
  return ExpectResultType(op, 0, type.WithElement(ir::ElementType::kI1));
}

StatusOr<std::vector<Tensor>> EvalIsFinite(EvalContext&, const ir::Operation& op,
                                           std::span<const Tensor> operands) {
  std::vector<Tensor> out(1);
  TPUSIM_ASSIGN_OR_RETURN(out[0], Tensor::AllocateUninitialized(op.result(0).type()));
  const Tensor& x = operands[0];
  if (out[0].num_elements() != x.num_elements() || out[0].element() != ir::ElementType::kI1) {
    return Internal("'stablehlo.is_finite' result does not match its operand");
  }
  Status st = VisitCodec(x.element(), [&](auto codec) -> Status {
    using Codec = decltype(codec);
    if constexpr (ClassOf<Codec>() != kFloatTypes) {
      return BadElementType(op, x.element(), kFloatTypes);
    } else {
      MapUnary(codec, x.data<typename Codec::Storage>(), BoolCodec{},
               out[0].mutable_data<uint8_t>(), x.num_elements(),
               [](auto v) { return std::isfinite(v); });
      return Status::Ok();
    }
  });
  TPUSIM_RETURN_IF_ERROR(st);
  return out;
}

constexpr unsigned kFC = kFloatTypes | kComplexTypes;

// Work per element. A complex function of z = x + iy takes several real
// ones (exp(z) = e^x (cos y + i sin y), log(z) = log|z| + i atan2(y, x)):
// priced alike as 4 transcendentals, 4 multiplies and 2 adds.
constexpr ElementOps kAlu1{.alu = 1}, kAlu2{.alu = 2};
constexpr ElementOps kFunction{.transcendental = 1};
constexpr ElementOps kRoot{.divide = 1};  // sqrt, rsqrt, cbrt: divide-class on the VPU
constexpr ElementOps kComplexFunction{.alu = 2, .multiply = 4, .transcendental = 4};

// |z| = sqrt(x^2 + y^2).
TPUSIM_REGISTER_OP({.name = "stablehlo.abs",
                    .verify = VerifyAbs,
                    .infer = InferElementwise,
                    .eval = EvalAbs,
                    .work = ElementwiseRule(kAlu1, {.alu = 1, .multiply = 2, .divide = 1})});
TPUSIM_REGISTER_OP({.name = "stablehlo.is_finite",
                    .verify = VerifyIsFinite,
                    .infer = InferElementwise,
                    .eval = EvalIsFinite,
                    .work = ElementwiseRule(kAlu2)});  // mask, compare
TPUSIM_REGISTER_OP(UnaryDef<kIntTypes | kFC, Negate>("stablehlo.negate",
                                                     ElementwiseRule(kAlu1, kAlu2)));
// Two compares and a select; sign(z) = z * rsqrt(x^2 + y^2).
TPUSIM_REGISTER_OP(UnaryDef<kSignedTypes | kFC, Sign>(
    "stablehlo.sign", ElementwiseRule({.alu = 3}, {.alu = 1, .multiply = 4, .divide = 1})));
TPUSIM_REGISTER_OP(UnaryDef<kFloatTypes, Ceil>("stablehlo.ceil", ElementwiseRule(kAlu1)));
TPUSIM_REGISTER_OP(UnaryDef<kFloatTypes, Floor>("stablehlo.floor", ElementwiseRule(kAlu1)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFloatTypes, RoundAfz>("stablehlo.round_nearest_afz", ElementwiseRule(kAlu1)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFloatTypes, RoundEven>("stablehlo.round_nearest_even", ElementwiseRule(kAlu1)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFC, Exp>("stablehlo.exponential", ElementwiseRule(kFunction, kComplexFunction)));
TPUSIM_REGISTER_OP(UnaryDef<kFC, Expm1>("stablehlo.exponential_minus_one",
                                        ElementwiseRule(kFunction, kComplexFunction)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFC, Log>("stablehlo.log", ElementwiseRule(kFunction, kComplexFunction)));
TPUSIM_REGISTER_OP(UnaryDef<kFC, Log1p>("stablehlo.log_plus_one",
                                        ElementwiseRule(kFunction, kComplexFunction)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFC, Logistic>("stablehlo.logistic", ElementwiseRule(kFunction, kComplexFunction)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFC, Sin>("stablehlo.sine", ElementwiseRule(kFunction, kComplexFunction)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFC, Cos>("stablehlo.cosine", ElementwiseRule(kFunction, kComplexFunction)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFC, Tan>("stablehlo.tan", ElementwiseRule(kFunction, kComplexFunction)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFC, Tanh>("stablehlo.tanh", ElementwiseRule(kFunction, kComplexFunction)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFC, Sqrt>("stablehlo.sqrt", ElementwiseRule(kRoot, kComplexFunction)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFC, Rsqrt>("stablehlo.rsqrt", ElementwiseRule(kRoot, kComplexFunction)));
TPUSIM_REGISTER_OP(
    UnaryDef<kFC, Cbrt>("stablehlo.cbrt", ElementwiseRule(kRoot, kComplexFunction)));

}  // namespace
}  // namespace tpusim::ops
