// The elementwise CHLO ops (chlo-ops.md): inverse trigonometric and
// hyperbolic functions, error and gamma-family functions, predicates on
// infinities, next_after, mulhi and the CHLO constants.
//
// Floating-point functions of f32 and narrower types are computed in double
// precision and rounded once to the result type (round to nearest even), so
// they are correctly rounded in all but rare cases; f64 uses the careful
// double algorithms of special_functions.h or the C library. Complex ones are
// computed in complex<double> and each part rounded once.
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>

#include "ops/kernels/elementwise_kernel.h"
#include "ops/kernels/special_functions.h"
#include "ops/util/op_util.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using ew::kComplexTypes;
using ew::kFloatTypes;
using ew::kIntTypes;
using c128 = std::complex<double>;

// ----------------------------------------------------------------- loops

// An element as a double. A call of its own so that a call taking it
// depends on the codec: clang checks a call whose arguments do not, even in
// a branch no element type takes.
template <class Codec, class S>
double AsDouble(const Codec& codec, S v) {
  return static_cast<double>(codec.Load(v));
}

// Result 0 of `op` computed as out[i] = round(f(x[i])) (or f(x[i], y[i])),
// with f taking and returning double (complex<double> for complex types).
// Only element types in kClasses are instantiated.
template <unsigned kClasses, class Fn>
StatusOr<std::vector<Tensor>> EvalViaDouble(const ir::Operation& op,
                                            std::span<const Tensor> operands, const Fn& fn) {
  TPUSIM_RETURN_IF_ERROR(ew::CheckSameSize(op, operands));
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0).type()));
  const int64_t n = out.num_elements();
  Status st = ew::VisitCodec(out.element(), [&](auto codec) -> Status {
    using Codec = decltype(codec);
    using S = typename Codec::Storage;
    using C = typename Codec::Compute;
    if constexpr ((ew::ClassOf<Codec>() & kClasses) == 0) {
      return ew::BadElementType(op, out.element(), kClasses);
    } else {
      const S* x = operands[0].data<S>();
      S* o = out.mutable_data<S>();
      if constexpr (ew::kIsComplex<C>) {
        for (int64_t i = 0; i < n; ++i) o[i] = ew::ViaDouble(x[i], fn);
      } else if constexpr (std::is_invocable_v<const Fn&, double>) {
        for (int64_t i = 0; i < n; ++i) {
          o[i] = ew::StoreFromDouble(codec, fn(AsDouble(codec, x[i])));
        }
      } else {
        const S* y = operands[1].data<S>();
        for (int64_t i = 0; i < n; ++i) {
          o[i] = ew::StoreFromDouble(codec, fn(AsDouble(codec, x[i]), AsDouble(codec, y[i])));
        }
      }
      return Status::Ok();
    }
  });
  TPUSIM_RETURN_IF_ERROR(st);
  return std::vector<Tensor>{std::move(out)};
}

// ----------------------------------------------------------------- unary math

// A unary function F: kClasses, the element types it accepts, and
// Real(double) for float types and/or Complex(c128) for complex ones.
template <class F>
Status VerifyUnary(const ir::Operation& op) {
  return ew::VerifySameType(op, 1, F::kClasses);
}

// F's function for x's type, and no candidate where F has none, so that
// asking whether the lambda below takes a double is no hard error.
template <class F, class T>
  requires std::is_same_v<T, c128>
auto ApplyUnary(T x) -> decltype(F::Complex(x)) {
  return F::Complex(x);
}
template <class F, class T>
  requires std::is_same_v<T, double>
auto ApplyUnary(T x) -> decltype(F::Real(x)) {
  return F::Real(x);
}

template <class F>
StatusOr<std::vector<Tensor>> EvalUnary(EvalContext&, const ir::Operation& op,
                                        std::span<const Tensor> operands) {
  return EvalViaDouble<F::kClasses>(
      op, operands, [](auto x) -> decltype(ApplyUnary<F>(x)) { return ApplyUnary<F>(x); });
}

// `cost` is the op's vector work per element: XLA lowers each of these to a
// polynomial or series of several VPU transcendental-class operations.
template <class F>
OpDef UnaryDef(const char* name, VectorClass cost = VectorClass::kTranscendental,
               int64_t ops_per_element = 1) {
  return {.name = name,
          .verify = VerifyUnary<F>,
          .infer = InferElementwise,
          .eval = EvalUnary<F>,
          .work = [cost, ops_per_element](const ir::Operation& op) {
            return ElementwiseWork(op, cost, ops_per_element);
          }};
}

#define TPUSIM_REAL_AND_COMPLEX(Name, real_fn, complex_fn)            \
  struct Name {                                                       \
    static constexpr unsigned kClasses = kFloatTypes | kComplexTypes; \
    static double Real(double x) { return real_fn(x); }               \
    static c128 Complex(c128 z) { return complex_fn(z); }             \
  }
#define TPUSIM_REAL_ONLY(Name, real_fn)                 \
  struct Name {                                         \
    static constexpr unsigned kClasses = kFloatTypes;   \
    static double Real(double x) { return real_fn(x); } \
  }

// Real inverse functions follow the C library, whose domains and special
// values (NaN outside the domain, +-inf at the ends) match CHLO's.
TPUSIM_REAL_AND_COMPLEX(Acos, std::acos, special::Acos);
TPUSIM_REAL_AND_COMPLEX(Acosh, std::acosh, special::Acosh);
TPUSIM_REAL_AND_COMPLEX(Asin, std::asin, special::Asin);
TPUSIM_REAL_AND_COMPLEX(Asinh, std::asinh, special::Asinh);
TPUSIM_REAL_AND_COMPLEX(Atan, std::atan, special::Atan);
TPUSIM_REAL_AND_COMPLEX(Atanh, std::atanh, special::Atanh);
TPUSIM_REAL_AND_COMPLEX(Cosh, std::cosh, std::cosh);
TPUSIM_REAL_AND_COMPLEX(Sinh, std::sinh, std::sinh);
TPUSIM_REAL_AND_COMPLEX(Tan, std::tan, std::tan);
TPUSIM_REAL_ONLY(Erf, std::erf);
TPUSIM_REAL_ONLY(Erfc, std::erfc);
TPUSIM_REAL_ONLY(ErfInv, special::ErfInv);
TPUSIM_REAL_ONLY(Lgamma, special::Lgamma);
TPUSIM_REAL_ONLY(Digamma, special::Digamma);
TPUSIM_REAL_ONLY(BesselI1e, special::BesselI1e);

#undef TPUSIM_REAL_AND_COMPLEX
#undef TPUSIM_REAL_ONLY

// square(z) = z * z; for complex z the real part is (x - y)(x + y), exactly
// 0 when |x| == |y| (finite), which z * z would not give.
struct Square {
  static constexpr unsigned kClasses = kFloatTypes | kComplexTypes;
  static double Real(double x) { return x * x; }
  static c128 Complex(c128 z) {
    const double x = z.real(), y = z.imag();
    const double re = std::isfinite(x) && std::fabs(x) == std::fabs(y) ? 0 : (x - y) * (x + y);
    return {re, 2 * (x * y)};
  }
};

// conj: the identity on real types.
struct Conj {
  static constexpr unsigned kClasses = kFloatTypes | kComplexTypes;
  static double Real(double x) { return x; }
  static c128 Complex(c128 z) { return std::conj(z); }
};

// chlo._asin_acos_kernel (complex only): the common part of the complex
// asin, acos, asinh and acosh.
struct AsinAcosKernel {
  static constexpr unsigned kClasses = kComplexTypes;
  static c128 Complex(c128 z) { return special::AsinAcosKernel(z); }
};

TPUSIM_REGISTER_OP(UnaryDef<AsinAcosKernel>("chlo._asin_acos_kernel"));
TPUSIM_REGISTER_OP(UnaryDef<Acos>("chlo.acos"));
TPUSIM_REGISTER_OP(UnaryDef<Acosh>("chlo.acosh"));
TPUSIM_REGISTER_OP(UnaryDef<Asin>("chlo.asin"));
TPUSIM_REGISTER_OP(UnaryDef<Asinh>("chlo.asinh"));
TPUSIM_REGISTER_OP(UnaryDef<Atan>("chlo.atan"));
TPUSIM_REGISTER_OP(UnaryDef<Atanh>("chlo.atanh"));
TPUSIM_REGISTER_OP(UnaryDef<Cosh>("chlo.cosh"));
TPUSIM_REGISTER_OP(UnaryDef<Sinh>("chlo.sinh"));
TPUSIM_REGISTER_OP(UnaryDef<Tan>("chlo.tan"));
TPUSIM_REGISTER_OP(UnaryDef<Erf>("chlo.erf"));
TPUSIM_REGISTER_OP(UnaryDef<Erfc>("chlo.erfc"));
TPUSIM_REGISTER_OP(UnaryDef<ErfInv>("chlo.erf_inv", VectorClass::kTranscendental, 4));
TPUSIM_REGISTER_OP(UnaryDef<Lgamma>("chlo.lgamma", VectorClass::kTranscendental, 4));
TPUSIM_REGISTER_OP(UnaryDef<Digamma>("chlo.digamma", VectorClass::kTranscendental, 4));
TPUSIM_REGISTER_OP(UnaryDef<BesselI1e>("chlo.bessel_i1e", VectorClass::kTranscendental, 4));
TPUSIM_REGISTER_OP(UnaryDef<Square>("chlo.square", VectorClass::kMultiply));
TPUSIM_REGISTER_OP(UnaryDef<Conj>("chlo.conj", VectorClass::kAlu));

// ----------------------------------------------------------------- binary math

// polygamma(n, x) and zeta(x, q): two float operands of one type.
Status VerifyBinaryFloat(const ir::Operation& op) { return ew::VerifySameType(op, 2, kFloatTypes); }

StatusOr<std::vector<Tensor>> EvalPolygamma(EvalContext&, const ir::Operation& op,
                                            std::span<const Tensor> operands) {
  return EvalViaDouble<kFloatTypes>(op, operands, special::Polygamma);
}

StatusOr<std::vector<Tensor>> EvalZeta(EvalContext&, const ir::Operation& op,
                                       std::span<const Tensor> operands) {
  return EvalViaDouble<kFloatTypes>(op, operands, special::Zeta);
}

// Series evaluations: priced as several transcendental passes per element.
Work SeriesWork(const ir::Operation& op) {
  return ElementwiseWork(op, VectorClass::kTranscendental, 8);
}

TPUSIM_REGISTER_OP({.name = "chlo.polygamma",
                    .verify = VerifyBinaryFloat,
                    .infer = InferElementwise,
                    .eval = EvalPolygamma,
                    .work = SeriesWork});
TPUSIM_REGISTER_OP({.name = "chlo.zeta",
                    .verify = VerifyBinaryFloat,
                    .infer = InferElementwise,
                    .eval = EvalZeta,
                    .work = SeriesWork});

// next_after(x, y): the representable value after x in the direction of y,
// found by stepping x's bit pattern as sign and magnitude (subnormals
// included); y when x == y, NaN when either is NaN.
template <class Bits>
Bits NextAfterBits(Bits x, Bits y, bool x_nan, bool y_nan, bool equal, Bits nan) {
  constexpr Bits kSign = Bits{1} << (8 * sizeof(Bits) - 1);
  if (x_nan || y_nan) return nan;
  if (equal) return y;
  const Bits x_abs = x & ~kSign, y_abs = y & ~kSign;
  if (x_abs == 0) return y_abs == 0 ? y : static_cast<Bits>((y & kSign) | 1);
  const bool toward_zero = x_abs > y_abs || (x & kSign) != (y & kSign);
  return toward_zero ? static_cast<Bits>(x - 1) : static_cast<Bits>(x + 1);
}

template <class Bits, class Decode>
void NextAfterLoop(const Tensor& xs, const Tensor& ys, Tensor& out, Bits nan,
                   const Decode& decode) {
  const Bits* x = xs.data<Bits>();
  const Bits* y = ys.data<Bits>();
  Bits* o = out.mutable_data<Bits>();
  for (int64_t i = 0, n = out.num_elements(); i < n; ++i) {
    const double a = decode(x[i]), b = decode(y[i]);
    o[i] = NextAfterBits<Bits>(x[i], y[i], std::isnan(a), std::isnan(b), a == b, nan);
  }
}

Status VerifyNextAfter(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ew::VerifySameType(op, 2, kFloatTypes));
  using E = ir::ElementType;
  const E t = op.operand(0).type().element();
  if (t != E::kF16 && t != E::kBF16 && t != E::kF32 && t != E::kF64) {
    return Unimplemented("'chlo.next_after' supports f16, bf16, f32 and f64, not " +
                         std::string(ir::ElementTypeName(t)));
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalNextAfter(EvalContext&, const ir::Operation& op,
                                            std::span<const Tensor> operands) {
  TPUSIM_RETURN_IF_ERROR(VerifyNextAfter(op));
  TPUSIM_RETURN_IF_ERROR(ew::CheckSameSize(op, operands));
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0).type()));
  const Tensor& x = operands[0];
  const Tensor& y = operands[1];
  using E = ir::ElementType;
  switch (out.element()) {
    case E::kF64:
      NextAfterLoop<uint64_t>(x, y, out, std::bit_cast<uint64_t>(std::nan("")),
                              [](uint64_t b) { return std::bit_cast<double>(b); });
      break;
    case E::kF32:
      NextAfterLoop<uint32_t>(x, y, out, std::bit_cast<uint32_t>(std::nanf("")),
                              [](uint32_t b) { return std::bit_cast<float>(b); });
      break;
    default: {  // f16, bf16
      const E t = out.element();
      NextAfterLoop<uint16_t>(x, y, out, numerics::EncodeSmallFloat(t, std::nan("")),
                              [t](uint16_t b) { return numerics::DecodeSmallFloat(t, b); });
    }
  }
  return std::vector<Tensor>{std::move(out)};
}

TPUSIM_REGISTER_OP({.name = "chlo.next_after",
                    .verify = VerifyNextAfter,
                    .infer = InferElementwise,
                    .eval = EvalNextAfter,
                    .work = [](const ir::Operation& op) {
                      return ElementwiseWork(op, VectorClass::kAlu, 4);
                    }});

// ----------------------------------------------------------------- predicates

// is_inf, is_pos_inf, is_neg_inf: a float tensor to an i1 tensor of its shape.
Status VerifyInfPredicate(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& type = op.operand(0).type();
  if (!ir::IsFloat(type.element())) {
    return ew::BadElementType(op, type.element(), kFloatTypes);
  }
  return ExpectResultType(op, 0, type.WithElement(ir::ElementType::kI1));
}

template <int kSign>  // 0: either infinity; +1 / -1: that one only
StatusOr<std::vector<Tensor>> EvalInfPredicate(EvalContext&, const ir::Operation& op,
                                               std::span<const Tensor> operands) {
  TPUSIM_RETURN_IF_ERROR(VerifyInfPredicate(op));
  const Tensor& x = operands[0];
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0).type()));
  if (x.element() != op.operand(0).type().element() || x.num_elements() != out.num_elements()) {
    return Internal("'" + op.name_str() + "' operand does not match its type");
  }
  uint8_t* o = out.mutable_data<uint8_t>();
  const int64_t n = out.num_elements();
  Status st = ew::VisitCodec(x.element(), [&](auto codec) -> Status {
    using Codec = decltype(codec);
    using S = typename Codec::Storage;
    if constexpr (ew::kIsReal<typename Codec::Compute>) {
      const S* in = x.data<S>();
      for (int64_t i = 0; i < n; ++i) {
        const auto v = codec.Load(in[i]);
        o[i] = std::isinf(v) && (kSign == 0 || (kSign > 0) != std::signbit(v));
      }
      return Status::Ok();
    } else {
      return ew::BadElementType(op, x.element(), kFloatTypes);
    }
  });
  TPUSIM_RETURN_IF_ERROR(st);
  return std::vector<Tensor>{std::move(out)};
}

Work AluWork(const ir::Operation& op) { return ElementwiseWork(op, VectorClass::kAlu); }

TPUSIM_REGISTER_OP({.name = "chlo.is_inf",
                    .verify = VerifyInfPredicate,
                    .infer = InferElementwise,
                    .eval = EvalInfPredicate<0>,
                    .work = AluWork});
TPUSIM_REGISTER_OP({.name = "chlo.is_pos_inf",
                    .verify = VerifyInfPredicate,
                    .infer = InferElementwise,
                    .eval = EvalInfPredicate<1>,
                    .work = AluWork});
TPUSIM_REGISTER_OP({.name = "chlo.is_neg_inf",
                    .verify = VerifyInfPredicate,
                    .infer = InferElementwise,
                    .eval = EvalInfPredicate<-1>,
                    .work = AluWork});

// ----------------------------------------------------------------- mulhi

// The high N bits of the 2N-bit product of two N-bit integers (stored in S;
// the codec's Store wraps 2- and 4-bit results to their width).
template <class S, int kBits>
S MulHi(S a, S b) {
  if constexpr (kBits == 64) {
    using Wide = std::conditional_t<std::is_signed_v<S>, __int128, unsigned __int128>;
    return static_cast<S>((static_cast<Wide>(a) * static_cast<Wide>(b)) >> 64);
  } else {
    // N <= 32: the product fits in 64 bits; >> on a negative value is an
    // arithmetic shift (C++20), as the signed mulhi needs.
    using Wide = std::conditional_t<std::is_signed_v<S>, int64_t, uint64_t>;
    return static_cast<S>((static_cast<Wide>(a) * static_cast<Wide>(b)) >> kBits);
  }
}

Status VerifyMulhi(const ir::Operation& op) { return ew::VerifySameType(op, 2, kIntTypes); }

StatusOr<std::vector<Tensor>> EvalMulhi(EvalContext&, const ir::Operation& op,
                                        std::span<const Tensor> operands) {
  TPUSIM_RETURN_IF_ERROR(ew::CheckSameSize(op, operands));
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0).type()));
  Status st = ew::VisitCodec(out.element(), [&](auto codec) -> Status {
    using Codec = decltype(codec);
    if constexpr ((ew::ClassOf<Codec>() & kIntTypes) == 0) {
      return ew::BadElementType(op, out.element(), kIntTypes);
    } else {
      using S = typename Codec::Storage;
      ew::MapBinary(codec, operands[0].data<S>(), operands[1].data<S>(), codec,
                    out.mutable_data<S>(), out.num_elements(),
                    [](S a, S b) { return MulHi<S, Codec::kWidth>(a, b); });
      return Status::Ok();
    }
  });
  TPUSIM_RETURN_IF_ERROR(st);
  return std::vector<Tensor>{std::move(out)};
}

TPUSIM_REGISTER_OP({.name = "chlo.mulhi", .verify = VerifyMulhi, .eval = EvalMulhi,
                    .work = [](const ir::Operation& op) {
                      return ElementwiseWork(op, VectorClass::kMultiply, 2);
                    }});

// ----------------------------------------------------------------- constants

// chlo.constant is stablehlo.constant under another name; its rules are
// looked up when used, since registration order across files is unspecified.
const OpDef& StablehloConstant() { return *OpRegistry::Lookup("stablehlo.constant"); }

TPUSIM_REGISTER_OP({.name = "chlo.constant",
                    .verify = [](const ir::Operation& op) { return StablehloConstant().verify(op); },
                    .eval = [](EvalContext& ctx, const ir::Operation& op,
                               std::span<const Tensor> operands) {
                      return StablehloConstant().eval(ctx, op, operands);
                    },
                    .work = FreeWork});

// chlo.constant_like: the scalar `value` (a typed number, a bool or a
// one-element dense literal) splatted to the operand's shape, in the
// value's element type.
StatusOr<ir::ElementType> ConstantLikeElement(const ir::Operation& op) {
  const ir::Attribute value = op.attr("value");
  using K = ir::Attribute::Kind;
  switch (value.kind()) {
    case K::kInt:
    case K::kFloat:
      return value.element_type();
    case K::kBool:
      return ir::ElementType::kI1;
    case K::kDenseElements:
      if (value.type().num_elements() == 1 || value.is_splat()) return value.type().element();
      return InvalidArgument("'chlo.constant_like' needs a single value, got " + value.ToString());
    case K::kNull:
      return InvalidArgument("'chlo.constant_like' needs attribute 'value'");
    default:
      return Unimplemented("'chlo.constant_like' value " + value.ToString() + " is not a number");
  }
}

Status VerifyConstantLike(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_ASSIGN_OR_RETURN(ir::ElementType element, ConstantLikeElement(op));
  return ExpectResultType(op, 0, op.operand(0).type().WithElement(element));
}

StatusOr<std::vector<Tensor>> EvalConstantLike(EvalContext&, const ir::Operation& op,
                                               std::span<const Tensor>) {
  TPUSIM_RETURN_IF_ERROR(VerifyConstantLike(op));
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0).type()));
  const ir::Attribute value = op.attr("value");
  const ir::ElementType t = out.element();
  const int width = ir::StorageBytes(t);
  uint8_t element[16] = {};
  using K = ir::Attribute::Kind;
  if (value.kind() == K::kDenseElements) {
    std::memcpy(element, value.bytes().data(), width);
  } else if (value.kind() == K::kFloat) {
    numerics::StoreDouble(t, value.float_value(), element);
  } else {
    numerics::StoreInt64(t, value.kind() == K::kBool ? value.bool_value() : value.int_value(),
                         element);
  }
  uint8_t* o = out.mutable_raw();
  for (int64_t i = 0, n = out.num_elements(); i < n; ++i) {
    std::memcpy(o + i * width, element, width);
  }
  return std::vector<Tensor>{std::move(out)};
}

TPUSIM_REGISTER_OP({.name = "chlo.constant_like",
                    .verify = VerifyConstantLike,
                    .eval = EvalConstantLike,
                    .work = CopyWork});

}  // namespace
}  // namespace tpusim::ops
