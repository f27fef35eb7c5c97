// Typed-loop machinery shared by the elementwise ops (internal to src/ops).
//
// An element type is handled through a *codec*: its storage type, the type
// arithmetic is done in (its compute type), and Load/Store between the two.
// Ops dispatch on the element type once (VisitCodec) and then run a tight
// loop over raw storage (MapUnary/MapBinary) that the compiler can inline
// and vectorize; nothing in the loop is virtual.
//
//   compute types: bool for i1; the storage integer for integers (2/4-bit
//   ones wrap to their width on Store); float for bf16, f16 and the f8/f6/f4
//   types (rounded to nearest even on Store); float, double and
//   std::complex for f32, f64, complex<f32>, complex<f64>.
#ifndef TPUSIM_OPS_KERNELS_ELEMENTWISE_KERNEL_H_
#define TPUSIM_OPS_KERNELS_ELEMENTWISE_KERNEL_H_

#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/util/op_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops::ew {

// ---------------------------------------------------------------- traits

template <class T> struct IsComplexT : std::false_type {};
template <class T> struct IsComplexT<std::complex<T>> : std::true_type {};
template <class T> inline constexpr bool kIsComplex = IsComplexT<T>::value;
template <class T> inline constexpr bool kIsBool = std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> inline constexpr bool kIsReal = std::is_floating_point_v<T>;

// Integer arithmetic is done in an unsigned type at least as wide as `int`,
// so that it wraps instead of overflowing (signed overflow and the promotion
// of small unsigned types to int would both be undefined behaviour).
template <class S>
using WideUnsigned =
    std::conditional_t<(sizeof(S) < sizeof(unsigned)), unsigned, std::make_unsigned_t<S>>;

template <class S> inline S WrapAdd(S a, S b) {
  return static_cast<S>(static_cast<WideUnsigned<S>>(a) + static_cast<WideUnsigned<S>>(b));
}
template <class S> inline S WrapSub(S a, S b) {
  return static_cast<S>(static_cast<WideUnsigned<S>>(a) - static_cast<WideUnsigned<S>>(b));
}
template <class S> inline S WrapMul(S a, S b) {
  return static_cast<S>(static_cast<WideUnsigned<S>>(a) * static_cast<WideUnsigned<S>>(b));
}
template <class S> inline S WrapNeg(S a) { return WrapSub<S>(S{0}, a); }

// bf16 <-> f32, inline so that bf16 loops vectorize. Bit-identical to
// numerics::Bf16ToFloat / numerics::FloatToBf16 (checked by the tests).
inline float Bf16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}
inline uint16_t FloatToBf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}

// ---------------------------------------------------------------- codecs

struct BoolCodec {
  using Storage = uint8_t;
  using Compute = bool;
  static constexpr int kWidth = 1;
  bool Load(uint8_t s) const { return s != 0; }
  uint8_t Store(bool v) const { return v ? 1 : 0; }
};

// Integers of kBits bits stored in S (2- and 4-bit ones in a byte,
// sign- or zero-extended).
template <class S, int kBits>
struct IntCodec {
  using Storage = S;
  using Compute = S;
  static constexpr int kWidth = kBits;
  static constexpr bool kSigned = std::is_signed_v<S>;
  static constexpr bool kFull = kBits == 8 * sizeof(S);
  S Load(S s) const { return s; }
  // Wraps v modulo 2^kBits into the type's range.
  S Store(S v) const {
    if constexpr (kFull) {
      return v;
    } else if constexpr (kSigned) {
      constexpr int kPad = 8 - kBits;
      return static_cast<S>(static_cast<int8_t>(static_cast<uint8_t>(v) << kPad) >> kPad);
    } else {
      return static_cast<S>(v & ((1u << kBits) - 1));
    }
  }
  static constexpr S kMin = kFull    ? std::numeric_limits<S>::min()
                            : kSigned ? static_cast<S>(-(1 << (kBits - 1)))
                                      : S{0};
  static constexpr S kMax = kFull ? std::numeric_limits<S>::max()
                                  : static_cast<S>((1 << (kBits - (kSigned ? 1 : 0))) - 1);
};

// Types whose storage is the compute type: f32, f64, complex.
template <class T>
struct NativeCodec {
  using Storage = T;
  using Compute = T;
  T Load(T s) const { return s; }
  T Store(T v) const { return v; }
};

struct Bf16Codec {
  using Storage = uint16_t;
  using Compute = float;
  float Load(uint16_t s) const { return Bf16ToFloat(s); }
  uint16_t Store(float v) const { return FloatToBf16(v); }
};

struct F16Codec {
  using Storage = uint16_t;
  using Compute = float;
  float Load(uint16_t s) const { return numerics::HalfToFloat(s); }
  uint16_t Store(float v) const { return numerics::FloatToHalf(v); }
};

// The f8, f6 and f4 types, all stored as raw bits in a byte; the element
// type is a run-time value so that they share one instantiation. Decoding
// is a table lookup.
struct SmallFloatCodec {
  using Storage = uint8_t;
  using Compute = float;
  explicit SmallFloatCodec(ir::ElementType t) : type(t), table(std::make_shared<Table>()) {
    int n = 1 << ir::BitWidth(t);
    for (int i = 0; i < 256; ++i) {
      (*table)[i] = static_cast<float>(numerics::DecodeSmallFloat(t, static_cast<uint16_t>(i % n)));
    }
  }
  float Load(uint8_t s) const { return (*table)[s]; }
  uint8_t Store(float v) const {
    return static_cast<uint8_t>(numerics::EncodeSmallFloat(type, v));
  }
  using Table = std::array<float, 256>;
  ir::ElementType type;
  std::shared_ptr<Table> table;
};

template <class Codec>
inline constexpr bool kIsNarrowFloat = std::is_same_v<Codec, Bf16Codec> ||
                                       std::is_same_v<Codec, F16Codec> ||
                                       std::is_same_v<Codec, SmallFloatCodec>;

// Stores a double into a float codec's storage with a single rounding (going
// through float first would round twice for the narrow types).
template <class Codec>
typename Codec::Storage StoreFromDouble(const Codec& c, double v) {
  if constexpr (std::is_same_v<Codec, SmallFloatCodec>) {
    return static_cast<uint8_t>(numerics::EncodeSmallFloat(c.type, v));
  } else if constexpr (std::is_same_v<Codec, Bf16Codec>) {
    return numerics::EncodeSmallFloat(ir::ElementType::kBF16, v);
  } else if constexpr (std::is_same_v<Codec, F16Codec>) {
    return numerics::DoubleToHalf(v);
  } else {
    return static_cast<typename Codec::Storage>(v);
  }
}

// Calls fn(codec) with the codec of element type t; returns what fn returns.
template <class Fn>
decltype(auto) VisitCodec(ir::ElementType t, Fn&& fn) {
  using E = ir::ElementType;
  switch (t) {
    case E::kI1: return fn(BoolCodec{});
    case E::kSI2: return fn(IntCodec<int8_t, 2>{});
    case E::kSI4: return fn(IntCodec<int8_t, 4>{});
    case E::kSI8: return fn(IntCodec<int8_t, 8>{});
    case E::kSI16: return fn(IntCodec<int16_t, 16>{});
    case E::kSI32: return fn(IntCodec<int32_t, 32>{});
    case E::kSI64: return fn(IntCodec<int64_t, 64>{});
    case E::kUI2: return fn(IntCodec<uint8_t, 2>{});
    case E::kUI4: return fn(IntCodec<uint8_t, 4>{});
    case E::kUI8: return fn(IntCodec<uint8_t, 8>{});
    case E::kUI16: return fn(IntCodec<uint16_t, 16>{});
    case E::kUI32: return fn(IntCodec<uint32_t, 32>{});
    case E::kUI64: return fn(IntCodec<uint64_t, 64>{});
    case E::kF16: return fn(F16Codec{});
    case E::kBF16: return fn(Bf16Codec{});
    case E::kF32: return fn(NativeCodec<float>{});
    case E::kF64: return fn(NativeCodec<double>{});
    case E::kC64: return fn(NativeCodec<std::complex<float>>{});
    case E::kC128: return fn(NativeCodec<std::complex<double>>{});
    default: return fn(SmallFloatCodec(t));  // f4, f6, f8 types
  }
}

// ---------------------------------------------------------------- loops

// Elements per block: full blocks have a constant trip count, which lets the
// compiler vectorize them without a scalar epilogue.
inline constexpr int64_t kBlock = 512;

template <class CI, class CO, class F>
inline void UnaryBlock(const CI& ci, const typename CI::Storage* __restrict in, const CO& co,
                       typename CO::Storage* __restrict out, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) out[i] = co.Store(f(ci.Load(in[i])));
}

// out[i] = co.Store(f(ci.Load(in[i]))) for i < n.
template <class CI, class CO, class F>
void MapUnary(const CI& ci, const typename CI::Storage* in, const CO& co,
              typename CO::Storage* out, int64_t n, const F& f) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) UnaryBlock(ci, in + i, co, out + i, kBlock, f);
  UnaryBlock(ci, in + i, co, out + i, n - i, f);
}

template <class CI, class CO, class F>
inline void BinaryBlock(const CI& ci, const typename CI::Storage* __restrict a,
                        const typename CI::Storage* __restrict b, const CO& co,
                        typename CO::Storage* __restrict out, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) out[i] = co.Store(f(ci.Load(a[i]), ci.Load(b[i])));
}

// out[i] = co.Store(f(ci.Load(a[i]), ci.Load(b[i]))) for i < n.
template <class CI, class CO, class F>
void MapBinary(const CI& ci, const typename CI::Storage* a, const typename CI::Storage* b,
               const CO& co, typename CO::Storage* out, int64_t n, const F& f) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) BinaryBlock(ci, a + i, b + i, co, out + i, kBlock, f);
  BinaryBlock(ci, a + i, b + i, co, out + i, n - i, f);
}

// ---------------------------------------------------------------- math

// Applies f to x computed in double precision (complex<double> for complex
// x) and rounds back once: transcendental functions of f32 and narrower
// types are then correctly rounded in all but rare cases.
template <class C, class F>
inline C ViaDouble(C x, const F& f) {
  if constexpr (kIsComplex<C>) {
    auto r = f(std::complex<double>(x.real(), x.imag()));
    return C(static_cast<typename C::value_type>(r.real()),
             static_cast<typename C::value_type>(r.imag()));
  } else {
    return static_cast<C>(f(static_cast<double>(x)));
  }
}

// x * y for complex x = a + bi, y = c + di as XLA's compiled kernels round
// it: each part is one fused multiply-add over one rounded product,
// ac - bd = fma(a, c, -(b*d)) and ad + bc = fma(b, c, a*d). No C99 Annex G
// recovery of infinities. Not commutative in the last bit, so x is always
// the left operand (a region's first argument, a reduction's accumulator).
template <class T>
inline std::complex<T> ComplexMultiply(std::complex<T> x, std::complex<T> y) {
  const T a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  return {std::fma(a, c, -(b * d)), std::fma(b, c, a * d)};
}

// IEEE-754 maximum/minimum: NaN if either operand is NaN, and -0 < +0.
// Complex numbers compare lexicographically by (real, imag); booleans are
// or/and; integers by value.
template <class C>
inline C Maximum(C a, C b) {
  if constexpr (kIsReal<C>) {
    if (std::isnan(a) || std::isnan(b)) return a + b;  // a quiet NaN
    if (a == b) return std::signbit(a) ? b : a;
    return a > b ? a : b;
  } else if constexpr (kIsComplex<C>) {
    bool a_wins = a.real() == b.real() ? a.imag() > b.imag() : a.real() > b.real();
    return a_wins ? a : b;
  } else {
    return a > b ? a : b;
  }
}

template <class C>
inline C Minimum(C a, C b) {
  if constexpr (kIsReal<C>) {
    if (std::isnan(a) || std::isnan(b)) return a + b;
    if (a == b) return std::signbit(a) ? a : b;
    return a < b ? a : b;
  } else if constexpr (kIsComplex<C>) {
    bool a_wins = a.real() == b.real() ? a.imag() < b.imag() : a.real() < b.real();
    return a_wins ? a : b;
  } else {
    return a < b ? a : b;
  }
}

// ---------------------------------------------------------------- shape rules

// Which element categories an op accepts.
enum TypeClass : unsigned {
  kBoolTypes = 1,
  kSignedTypes = 2,
  kUnsignedTypes = 4,
  kFloatTypes = 8,
  kComplexTypes = 16,
  kIntTypes = kSignedTypes | kUnsignedTypes,
  kAnyTypes = 31,
};

bool InClass(ir::ElementType t, unsigned classes);
// A phrase for messages: "integer or floating-point".
std::string ClassName(unsigned classes);
// kInvalidArgument: 'op' does not accept element type t.
Status BadElementType(const ir::Operation& op, ir::ElementType t, unsigned classes);

// Shape rules of ops whose operands and result all have one type whose
// element is in `classes` (add, and, negate, ...).
Status VerifySameType(const ir::Operation& op, int num_operands, unsigned classes);

// Eval-time guard for unverified IR: operand i has result 0's element count.
Status CheckSameSize(const ir::Operation& op, std::span<const Tensor> operands);

// Evaluates an op whose operands and result share one type: out[i] =
// f(x[i]) or f(x[i], y[i]) in the compute type. Fn is a generic callable;
// it is instantiated only for codecs whose element type is in `classes`.
template <unsigned kClasses, class Fn>
StatusOr<std::vector<Tensor>> EvalSameType(const ir::Operation& op,
                                           std::span<const Tensor> operands, const Fn& fn);

// ---------------------------------------------------------------- impl

template <class Codec>
constexpr unsigned ClassOf() {
  using C = typename Codec::Compute;
  if constexpr (kIsBool<C>) return kBoolTypes;
  else if constexpr (kIsComplex<C>) return kComplexTypes;
  else if constexpr (kIsReal<C>) return kFloatTypes;
  else if constexpr (std::is_signed_v<C>) return kSignedTypes;
  else return kUnsignedTypes;
}

template <unsigned kClasses, class Fn>
StatusOr<std::vector<Tensor>> EvalSameType(const ir::Operation& op,
                                           std::span<const Tensor> operands, const Fn& fn) {
  TPUSIM_RETURN_IF_ERROR(CheckSameSize(op, operands));
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0).type()));
  const int64_t n = out.num_elements();
  Status st = VisitCodec(out.element(), [&](auto codec) -> Status {
    using Codec = decltype(codec);
    using S = typename Codec::Storage;
    if constexpr ((ClassOf<Codec>() & kClasses) == 0) {
      return BadElementType(op, out.element(), kClasses);
    } else {
      using C = typename Codec::Compute;
      S* o = out.mutable_data<S>();
      if constexpr (std::is_invocable_v<const Fn&, C>) {
        MapUnary(codec, operands[0].data<S>(), codec, o, n, fn);
      } else {
        MapBinary(codec, operands[0].data<S>(), operands[1].data<S>(), codec, o, n, fn);
      }
      return Status::Ok();
    }
  });
  TPUSIM_RETURN_IF_ERROR(st);
  return std::vector<Tensor>{std::move(out)};
}

}  // namespace tpusim::ops::ew

#endif  // TPUSIM_OPS_KERNELS_ELEMENTWISE_KERNEL_H_
