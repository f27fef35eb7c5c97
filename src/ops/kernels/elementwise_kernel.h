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

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "numerics/vector_clones.h"
#include "ops/kernels/chunk_kernels.h"
#include "ops/util/op_util.h"
#include "ops/util/parallel.h"
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
// compiler vectorize them without a scalar epilogue. The serial loops over
// whole ranges are built for AVX-512 too (TPUSIM_VECTOR_CLONES); the blocks
// inline into each build, and values are the same bits in both (no FMA
// contraction under -std=c++20, and IEEE vector arithmetic).
inline constexpr int64_t kBlock = 512;

template <class CI, class CO, class F>
inline void UnaryBlock(const CI& ci, const typename CI::Storage* __restrict in, const CO& co,
                       typename CO::Storage* __restrict out, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) out[i] = co.Store(f(ci.Load(in[i])));
}

// The in-place form: `io` is both the input and the output.
template <class C, class F>
inline void UnaryBlockInPlace(const C& c, typename C::Storage* __restrict io, int64_t n,
                              const F& f) {
  for (int64_t i = 0; i < n; ++i) io[i] = c.Store(f(c.Load(io[i])));
}

// True when an output array is exactly an input array (a result written over
// its operand); partial overlaps never occur.
template <class SI, class SO>
inline bool SameArray(const SI* in, const SO* out) {
  return std::is_same_v<SI, SO> && static_cast<const void*>(in) == static_cast<const void*>(out);
}

// MapUnary on one thread.
template <class CI, class CO, class F>
TPUSIM_VECTOR_CLONES void MapUnarySerial(const CI& ci, const typename CI::Storage* in, const CO& co,
                                         typename CO::Storage* out, int64_t n, const F& f) {
  int64_t i = 0;
  if constexpr (std::is_same_v<typename CI::Storage, typename CO::Storage>) {
    if (SameArray(in, out)) {
      // Same storage means same element type, so the two codecs agree.
      for (; i + kBlock <= n; i += kBlock) UnaryBlockInPlace(co, out + i, kBlock, f);
      UnaryBlockInPlace(co, out + i, n - i, f);
      return;
    }
  }
  for (; i + kBlock <= n; i += kBlock) UnaryBlock(ci, in + i, co, out + i, kBlock, f);
  UnaryBlock(ci, in + i, co, out + i, n - i, f);
}

// out[i] = co.Store(f(ci.Load(in[i]))) for i < n, on the host's cores when n
// is large. `out` may be `in` itself. `f` must be safe to call from several
// threads at once (a pure function of its argument).
template <class CI, class CO, class F>
void MapUnary(const CI& ci, const typename CI::Storage* in, const CO& co, typename CO::Storage* out,
              int64_t n, const F& f) {
  ParallelFor(
      n, kParallelElements,
      [&](int64_t b, int64_t e) { MapUnarySerial(ci, in + b, co, out + b, e - b, f); }, kBlock);
}

template <class CI, class CO, class F>
inline void BinaryBlock(const CI& ci, const typename CI::Storage* __restrict a,
                        const typename CI::Storage* __restrict b, const CO& co,
                        typename CO::Storage* __restrict out, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) out[i] = co.Store(f(ci.Load(a[i]), ci.Load(b[i])));
}

// In place over the first (kFirst) or the second operand: io[i] = f(io[i],
// b[i]) or f(b[i], io[i]), where `other` is the operand that stays.
template <bool kFirst, class C, class F>
inline void BinaryBlockInPlace(const C& c, typename C::Storage* __restrict io,
                               const typename C::Storage* __restrict other, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) {
    io[i] = kFirst ? c.Store(f(c.Load(io[i]), c.Load(other[i])))
                   : c.Store(f(c.Load(other[i]), c.Load(io[i])));
  }
}

template <bool kFirst, class C, class F>
TPUSIM_VECTOR_CLONES void MapBinaryInPlace(const C& c, typename C::Storage* io,
                                           const typename C::Storage* other, int64_t n,
                                           const F& f) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    BinaryBlockInPlace<kFirst>(c, io + i, other + i, kBlock, f);
  }
  BinaryBlockInPlace<kFirst>(c, io + i, other + i, n - i, f);
}

// MapBinary on one thread.
template <class CI, class CO, class F>
TPUSIM_VECTOR_CLONES void MapBinarySerial(const CI& ci, const typename CI::Storage* a,
                                          const typename CI::Storage* b, const CO& co,
                                          typename CO::Storage* out, int64_t n, const F& f) {
  if constexpr (std::is_same_v<typename CI::Storage, typename CO::Storage>) {
    // An operand and the result share storage only when their element types
    // are one, so `co` decodes the operand as `ci` would.
    if (SameArray(a, out) && a != b) return MapBinaryInPlace<true>(co, out, b, n, f);
    if (SameArray(b, out) && a != b) return MapBinaryInPlace<false>(co, out, a, n, f);
  }
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) BinaryBlock(ci, a + i, b + i, co, out + i, kBlock, f);
  BinaryBlock(ci, a + i, b + i, co, out + i, n - i, f);
}

// With one operand a single stored value `s` (a splat): out[i] =
// f(s, v[i]) when kScalarFirst, else f(v[i], s). `out` may be `v` itself.
template <bool kScalarFirst, class CI, class CO, class F>
inline void ScalarBlock(const CI& ci, typename CI::Compute s,
                        const typename CI::Storage* __restrict v, const CO& co,
                        typename CO::Storage* __restrict out, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = kScalarFirst ? co.Store(f(s, ci.Load(v[i]))) : co.Store(f(ci.Load(v[i]), s));
  }
}

// The in-place form: `io` is both the operand and the output.
template <bool kScalarFirst, class C, class F>
inline void ScalarBlockInPlace(const C& c, typename C::Compute s,
                               typename C::Storage* __restrict io, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) {
    io[i] = kScalarFirst ? c.Store(f(s, c.Load(io[i]))) : c.Store(f(c.Load(io[i]), s));
  }
}

template <bool kScalarFirst, class CI, class CO, class F>
TPUSIM_VECTOR_CLONES void MapScalarSerial(const CI& ci, typename CI::Compute s,
                                          const typename CI::Storage* v, const CO& co,
                                          typename CO::Storage* out, int64_t n, const F& f) {
  int64_t i = 0;
  if constexpr (std::is_same_v<typename CI::Storage, typename CO::Storage>) {
    if (SameArray(v, out)) {
      // Same storage means same element type, so the two codecs agree.
      for (; i + kBlock <= n; i += kBlock) {
        ScalarBlockInPlace<kScalarFirst>(co, s, out + i, kBlock, f);
      }
      ScalarBlockInPlace<kScalarFirst>(co, s, out + i, n - i, f);
      return;
    }
  }
  for (; i + kBlock <= n; i += kBlock) {
    ScalarBlock<kScalarFirst>(ci, s, v + i, co, out + i, kBlock, f);
  }
  ScalarBlock<kScalarFirst>(ci, s, v + i, co, out + i, n - i, f);
}

// MapBinary where operand 0 (kScalarFirst) or 1 is the one stored value `s`
// repeated, given once.
template <bool kScalarFirst, class CI, class CO, class F>
void MapScalar(const CI& ci, typename CI::Storage s, const typename CI::Storage* v, const CO& co,
               typename CO::Storage* out, int64_t n, const F& f) {
  const typename CI::Compute loaded = ci.Load(s);
  ParallelFor(
      n, kParallelElements,
      [&](int64_t b, int64_t e) {
        MapScalarSerial<kScalarFirst>(ci, loaded, v + b, co, out + b, e - b, f);
      },
      kBlock);
}

// out[i] = co.Store(f(ci.Load(a[i]), ci.Load(b[i]))) for i < n, on the
// host's cores when n is large. `out` may be `a` or `b` itself (not both).
// `f` must be safe to call from several threads at once.
template <class CI, class CO, class F>
void MapBinary(const CI& ci, const typename CI::Storage* a, const typename CI::Storage* b,
               const CO& co, typename CO::Storage* out, int64_t n, const F& f) {
  ParallelFor(
      n, kParallelElements,
      [&](int64_t s, int64_t e) { MapBinarySerial(ci, a + s, b + s, co, out + s, e - s, f); },
      kBlock);
}

// ---------------------------------------------------------------- tables

// Stored values moved as they are: for loops that map bits to bits.
template <class S>
struct BitsCodec {
  using Storage = S;
  using Compute = S;
  S Load(S s) const { return s; }
  S Store(S v) const { return v; }
};

// Element functions that cost far more than a table lookup (the
// transcendental ones, through double) declare
//   static constexpr bool kTabulate = true;
// and run on 16-bit float types as a lookup in Table16.
template <class Fn>
concept Tabulated = Fn::kTabulate;

// Tensors from this many elements map a Tabulated function through its table
// (65536 evaluations, built once per process and function).
inline constexpr int64_t kTableElements = int64_t{1} << 14;

// fn on every value of a 16-bit float type: entry b is c.Store(fn(c.Load(b))),
// the very computation MapUnary runs for an element of bits b, so a lookup
// gives the loop's bits. Built on first use; thread-safe.
template <class Codec, class Fn>
const std::array<uint16_t, 65536>& Table16() {
  static const std::array<uint16_t, 65536>* const table = [] {
    auto* t = new std::array<uint16_t, 65536>;
    const Codec c{};
    const Fn f{};
    for (uint32_t b = 0; b < 65536; ++b) (*t)[b] = c.Store(f(c.Load(static_cast<uint16_t>(b))));
    return t;
  }();
  return *table;
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

// Eval-time guard for unverified IR: operand i has result 0's element count
// (or, with `allow_splats`, one element standing for all:
// OpDef::splat_operands).
Status CheckSameSize(const ir::Operation& op, std::span<const Tensor> operands,
                     bool allow_splats = false);

// Evaluates an op whose operands and result share one type: out[i] =
// f(x[i]) or f(x[i], y[i]) in the compute type, written over an operand the
// op owns alone (EvalContext::TakeOperands) when there is one. Fn is a
// generic callable; it is instantiated only for codecs whose element type is
// in `classes`.
template <unsigned kClasses, class Fn>
StatusOr<std::vector<Tensor>> EvalSameType(EvalContext& ctx, const ir::Operation& op,
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
StatusOr<std::vector<Tensor>> EvalSameType(EvalContext& ctx, const ir::Operation& op,
                                           std::span<const Tensor> in, const Fn& fn) {
  // Binary ops take splat operands (OpDef::splat_operands).
  TPUSIM_RETURN_IF_ERROR(CheckSameSize(op, in, /*allow_splats=*/in.size() == 2));
  std::vector<Tensor> operands = ctx.TakeOperands(in);
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, ReuseOrAllocate(operands, {0, 1}, op.result(0).type()));
  const int64_t n = out.num_elements();
  // Operands left unexpanded: one element standing for all (a splat
  // constant or a broadcast scalar; OpDef::splat_operands).
  const uint8_t* splat[2] = {nullptr, nullptr};
  for (size_t k = 0; k < operands.size() && k < 2; ++k) {
    if (IsSplatPlaceholder(operands[k], n)) splat[k] = operands[k].raw();
  }
  Status st = VisitCodec(out.element(), [&](auto codec) -> Status {
    using Codec = decltype(codec);
    using S = typename Codec::Storage;
    if constexpr ((ClassOf<Codec>() & kClasses) == 0) {
      return BadElementType(op, out.element(), kClasses);
    } else {
      using C = typename Codec::Compute;
      S* o = out.mutable_data<S>();
      if constexpr (std::is_invocable_v<const Fn&, C>) {
        if constexpr (Tabulated<Fn> &&
                      (std::is_same_v<Codec, Bf16Codec> || std::is_same_v<Codec, F16Codec>)) {
          if (n >= kTableElements) {
            const std::array<uint16_t, 65536>& table = Table16<Codec, Fn>();
            MapUnary(BitsCodec<uint16_t>{}, operands[0].data<S>(), BitsCodec<uint16_t>{}, o, n,
                     [&table](uint16_t b) { return table[b]; });
            return Status::Ok();
          }
        }
        MapUnary(codec, operands[0].data<S>(), codec, o, n, fn);
      } else if (splat[0] != nullptr || splat[1] != nullptr) {
        S s[2] = {};
        for (int k = 0; k < 2; ++k) {
          if (splat[k] != nullptr) std::memcpy(&s[k], splat[k], sizeof(S));
        }
        if (splat[0] != nullptr && splat[1] != nullptr) {
          const S v = codec.Store(fn(codec.Load(s[0]), codec.Load(s[1])));
          ParallelFor(n, kParallelElements,
                      [&](int64_t b, int64_t e) { std::fill(o + b, o + e, v); });
        } else if (splat[0] != nullptr) {
          MapScalar<true>(codec, s[0], operands[1].data<S>(), codec, o, n, fn);
        } else {
          MapScalar<false>(codec, s[1], operands[0].data<S>(), codec, o, n, fn);
        }
      } else {
        MapBinary(codec, operands[0].data<S>(), operands[1].data<S>(), codec, o, n, fn);
      }
      return Status::Ok();
    }
  });
  TPUSIM_RETURN_IF_ERROR(st);
  return std::vector<Tensor>{std::move(out)};
}

// ---------------------------------------------------------------- chunks

// The chunk kernel (chunk_kernels.h) of an op that EvalSameType evaluates
// with Fn: the same loops on a run of elements; a 16-bit Tabulated function
// always through its table (the same bits).
template <unsigned kClasses>
bool SupportsSameType(const ir::Operation& op) {
  return op.num_results() == 1 && op.result(0).type().is_tensor() &&
         InClass(op.result(0).type().element(), kClasses);
}

template <unsigned kClasses, class Fn>
void RunSameTypeChunk(const ir::Operation& op, std::span<const ChunkOperand> in, void* out,
                      int64_t n) {
  VisitCodec(op.result(0).type().element(), [&](auto codec) {
    using Codec = decltype(codec);
    using S = typename Codec::Storage;
    using C = typename Codec::Compute;
    if constexpr ((ClassOf<Codec>() & kClasses) != 0) {
      const Fn fn{};
      S* o = static_cast<S*>(out);
      const S* a = static_cast<const S*>(in[0].data);
      if constexpr (std::is_invocable_v<const Fn&, C>) {
        if (in[0].splat) {
          std::fill(o, o + n, codec.Store(fn(codec.Load(*a))));
        } else if constexpr (Tabulated<Fn> && (std::is_same_v<Codec, Bf16Codec> ||
                                               std::is_same_v<Codec, F16Codec>)) {
          const std::array<uint16_t, 65536>& table = Table16<Codec, Fn>();
          MapUnarySerial(BitsCodec<uint16_t>{}, a, BitsCodec<uint16_t>{}, o, n,
                         [&table](uint16_t b) { return table[b]; });
        } else {
          MapUnarySerial(codec, a, codec, o, n, fn);
        }
      } else {
        const S* b = static_cast<const S*>(in[1].data);
        if (in[0].splat && in[1].splat) {
          std::fill(o, o + n, codec.Store(fn(codec.Load(*a), codec.Load(*b))));
        } else if (in[0].splat) {
          MapScalarSerial<true>(codec, codec.Load(*a), b, codec, o, n, fn);
        } else if (in[1].splat) {
          MapScalarSerial<false>(codec, codec.Load(*b), a, codec, o, n, fn);
        } else {
          MapBinarySerial(codec, a, b, codec, o, n, fn);
        }
      }
    }
  });
}

// Registers op `name`'s chunk kernel from its EvalSameType element function.
template <unsigned kClasses, class Fn>
bool RegisterSameTypeChunk(std::string_view name) {
  return RegisterChunkKernel(name, {SupportsSameType<kClasses>, RunSameTypeChunk<kClasses, Fn>});
}

}  // namespace tpusim::ops::ew

#endif  // TPUSIM_OPS_KERNELS_ELEMENTWISE_KERNEL_H_
