// Elementwise arithmetic on two tensors of one type: add, subtract,
// multiply, divide, remainder, maximum, minimum, power, atan2.
//
// Integer semantics (the spec leaves overflow and division by zero
// implementation-defined; these follow XLA):
//   - add, subtract, multiply, negate and power wrap modulo 2^bits;
//   - x / 0 = -1 (all bits set; the maximum for unsigned types), x % 0 = x;
//   - INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0 (the wrapped quotient);
//   - x ^ y with y < 0 is 1 if x = 1, +-1 if x = -1 (by the parity of y),
//     and 0 otherwise (0 ^ negative included).
#include <cmath>

#include "ops/kernels/elementwise_kernel.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

using namespace ew;  // NOLINT: the kernel vocabulary is used throughout

template <unsigned kClasses>
Status VerifyBinary(const ir::Operation& op) {
  return VerifySameType(op, 2, kClasses);
}

// The definition of a binary op accepting kClasses whose element function
// is Fn and whose work is `work`.
template <unsigned kClasses, class Fn>
OpDef BinaryDef(const char* name, WorkFn work, VerifyFn verify = VerifyBinary<kClasses>) {
  RegisterSameTypeChunk<kClasses, Fn>(name);  // for fused loops
  return {.name = name,
          .verify = std::move(verify),
          .infer = InferElementwise,
          .eval =
              [](EvalContext& ctx, const ir::Operation& op, std::span<const Tensor> operands) {
                return EvalSameType<kClasses>(ctx, op, operands, Fn{});
              },
          .work = std::move(work),
          .splat_operands = true};
}

// The spec allows complex remainder but leaves its semantics TBD.
Status VerifyRemainder(const ir::Operation& op) {
  if (op.num_operands() > 0 && op.operand(0).type().is_tensor() &&
      ir::IsComplex(op.operand(0).type().element())) {
    return Unimplemented("'stablehlo.remainder' of complex numbers is not defined by the spec");
  }
  return VerifyBinary<kIntTypes | kFloatTypes>(op);
}

struct Add {
  template <class C> C operator()(C a, C b) const {
    if constexpr (kIsBool<C>) return a || b;
    else if constexpr (kIsInt<C>) return WrapAdd(a, b);
    else return a + b;
  }
};

struct Subtract {
  template <class C> C operator()(C a, C b) const {
    if constexpr (kIsInt<C>) return WrapSub(a, b);
    else return a - b;
  }
};

struct Multiply {
  template <class C> C operator()(C a, C b) const {
    if constexpr (kIsBool<C>) return a && b;
    else if constexpr (kIsInt<C>) return WrapMul(a, b);
    else if constexpr (kIsComplex<C>) return ComplexMultiply(a, b);
    else return a * b;
  }
};

struct Divide {
  template <class C> C operator()(C a, C b) const {
    if constexpr (kIsInt<C>) {
      if (b == 0) return static_cast<C>(-1);
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return WrapNeg(a);  // INT_MIN / -1 would be undefined
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};

// The sign of the result is the dividend's (truncated division).
struct Remainder {
  template <class C> C operator()(C a, C b) const {
    if constexpr (kIsInt<C>) {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;  // INT_MIN % -1 would be undefined
      }
      return static_cast<C>(a % b);
    } else {
      return std::fmod(a, b);  // exact, so computing in float is enough
    }
  }
};

struct Max {
  template <class C> C operator()(C a, C b) const { return Maximum(a, b); }
};

struct Min {
  template <class C> C operator()(C a, C b) const { return Minimum(a, b); }
};

// Integer power by squaring, wrapping; see the file comment for y < 0.
template <class C>
C IntegerPower(C x, C y) {
  if constexpr (std::is_signed_v<C>) {
    if (y < 0) {
      if (x == 1) return 1;
      if (x == -1) return (y & 1) ? C(-1) : C(1);
      return 0;
    }
  }
  C result = 1;
  auto e = static_cast<std::make_unsigned_t<C>>(y);
  while (e != 0) {
    if (e & 1) result = WrapMul(result, x);
    x = WrapMul(x, x);
    e >>= 1;
  }
  return result;
}

struct Power {
  template <class C> C operator()(C a, C b) const {
    if constexpr (kIsInt<C>) {
      return IntegerPower(a, b);
    } else if constexpr (kIsComplex<C>) {
      using D = std::complex<double>;
      D r = std::pow(D(a.real(), a.imag()), D(b.real(), b.imag()));
      return C(static_cast<typename C::value_type>(r.real()),
               static_cast<typename C::value_type>(r.imag()));
    } else {
      return static_cast<C>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    }
  }
};

// Complex atan2(y, x) = -i * log((x + i*y) / sqrt(x^2 + y^2)), as the
// reference interpreter defines it.
struct Atan2 {
  template <class C> C operator()(C y, C x) const {
    if constexpr (kIsComplex<C>) {
      using D = std::complex<double>;
      D yd(y.real(), y.imag()), xd(x.real(), x.imag());
      const D i(0, 1);
      D r = -i * std::log((xd + i * yd) / std::sqrt(xd * xd + yd * yd));
      return C(static_cast<typename C::value_type>(r.real()),
               static_cast<typename C::value_type>(r.imag()));
    } else {
      return static_cast<C>(std::atan2(static_cast<double>(y), static_cast<double>(x)));
    }
  }
};

// Integer power squares and multiplies once per exponent bit, selecting
// whether to keep the product; a float power is exp(y log x); a complex one
// a complex log, multiply and exp.
Work PowerWork(const ir::Operation& op) {
  if (op.num_results() != 1 || !op.result(0).type().is_tensor()) return ReadsAndWrites(op);
  const ir::ElementType e = op.result(0).type().element();
  if (ir::IsComplex(e)) return ElementwiseWork(op, {.alu = 6, .multiply = 12, .transcendental = 8});
  if (!ir::IsFloat(e)) {
    const int64_t bits = ir::BitWidth(e);
    return ElementwiseWork(op, {.alu = bits, .multiply = 2 * bits});
  }
  return ElementwiseWork(op, {.multiply = 1, .transcendental = 2});
}

constexpr unsigned kNumeric = kIntTypes | kFloatTypes | kComplexTypes;

// Work per element. Complex: add and subtract work on both parts; multiply
// is 4 multiplies and 2 adds; divide multiplies by the conjugate and by one
// reciprocal of |y|^2; maximum and minimum compare lexicographically.
constexpr ElementOps kAlu1{.alu = 1}, kAlu2{.alu = 2};
constexpr ElementOps kComplexFunction{.alu = 2, .multiply = 4, .transcendental = 4};

TPUSIM_REGISTER_OP(BinaryDef<kAnyTypes, Add>("stablehlo.add", ElementwiseRule(kAlu1, kAlu2)));
TPUSIM_REGISTER_OP(
    BinaryDef<kNumeric, Subtract>("stablehlo.subtract", ElementwiseRule(kAlu1, kAlu2)));
TPUSIM_REGISTER_OP(BinaryDef<kAnyTypes, Multiply>(
    "stablehlo.multiply", ElementwiseRule({.multiply = 1}, {.alu = 2, .multiply = 4})));
TPUSIM_REGISTER_OP(BinaryDef<kNumeric, Divide>(
    "stablehlo.divide", ElementwiseRule({.divide = 1}, {.alu = 3, .multiply = 8, .divide = 1})));
// x - trunc(x / y) * y.
TPUSIM_REGISTER_OP(BinaryDef<kIntTypes | kFloatTypes, Remainder>(
    "stablehlo.remainder", ElementwiseRule({.alu = 2, .multiply = 1, .divide = 1}),
    VerifyRemainder));
TPUSIM_REGISTER_OP(
    BinaryDef<kAnyTypes, Max>("stablehlo.maximum", ElementwiseRule(kAlu1, {.alu = 5})));
TPUSIM_REGISTER_OP(
    BinaryDef<kAnyTypes, Min>("stablehlo.minimum", ElementwiseRule(kAlu1, {.alu = 5})));
TPUSIM_REGISTER_OP(BinaryDef<kNumeric, Power>("stablehlo.power", PowerWork));
TPUSIM_REGISTER_OP(BinaryDef<kFloatTypes | kComplexTypes, Atan2>(
    "stablehlo.atan2", ElementwiseRule({.transcendental = 1}, kComplexFunction)));

}  // namespace
}  // namespace tpusim::ops
