// Conversions between element types: convert, bitcast_convert,
// reduce_precision, and complex/real/imag.
//
// convert (the spec leaves inexact cases TBD; these are XLA's rules):
//   - to i1: x != 0 (NaN is true; complex looks at the real part);
//   - integer to integer: modulo 2^bits of the destination;
//   - float to integer: truncated toward zero, saturating to the
//     destination's range, NaN -> 0;
//   - to float: rounded once to nearest even from the exact source value
//     (64-bit integers to narrow floats included);
//   - complex to non-complex takes the real part, non-complex to complex
//     gives a zero imaginary part.
// With --numerics tpu, f32 -> bf16 uses the TPU's rounding
// (numerics::TpuFloatToBf16, which flushes subnormals).
#include <algorithm>
#include <bit>
#include <cstring>

#include "ops/kernels/elementwise_kernel.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"
#include "tpusim/numerics/float_arrays.h"
#include "tpusim/numerics/tpu.h"

namespace tpusim::ops {
namespace {

using namespace ew;  // NOLINT: the kernel vocabulary is used throughout

Status Error(const ir::Operation& op, const std::string& what) {
  return InvalidArgument("'" + op.name_str() + "' " + what);
}

// ---------------------------------------------------------------- convert

template <class C>
inline auto RealPart(C v) {
  if constexpr (kIsComplex<C>) return v.real();
  else return v;
}

// v rounded to 53 bits with round-to-odd: a later rounding to any format
// of at most 51 significant bits is then the correct rounding of v.
template <class S>
inline double ToDoubleRoundToOdd(S v) {
  if constexpr (sizeof(S) < 8) {
    return static_cast<double>(v);
  } else {
    const bool neg = v < 0;
    const uint64_t m = neg ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    if (m < (uint64_t{1} << 53)) return neg ? -static_cast<double>(m) : static_cast<double>(m);
    const int drop = std::bit_width(m) - 53;
    uint64_t kept = m >> drop;
    if (m & ((uint64_t{1} << drop) - 1)) kept |= 1;
    const double d = std::ldexp(static_cast<double>(kept), drop);
    return neg ? -d : d;
  }
}

// Truncates toward zero and saturates to the integer codec's range.
template <class CO>
inline typename CO::Storage FloatToInt(double d) {
  using S = typename CO::Storage;
  if (std::isnan(d)) return 0;
  constexpr int kValueBits = CO::kWidth - (CO::kSigned ? 1 : 0);
  const double limit = std::ldexp(1.0, kValueBits);  // one past the maximum
  d = std::trunc(d);
  if (d >= limit) return CO::kMax;
  if (CO::kSigned ? d <= -limit : d <= 0) return CO::kMin;
  if constexpr (CO::kSigned) return static_cast<S>(static_cast<int64_t>(d));
  else return static_cast<S>(static_cast<uint64_t>(d));
}

// Converts one value of CI's compute type to CO's storage.
template <class CI, class CO>
inline typename CO::Storage ConvertValue(const CO& co, typename CI::Compute v) {
  using Src = typename CI::Compute;
  using Dst = typename CO::Compute;
  if constexpr (kIsBool<Dst>) {
    return co.Store(RealPart(v) != 0);
  } else if constexpr (kIsInt<Dst>) {
    if constexpr (kIsBool<Src> || kIsInt<Src>) return co.Store(static_cast<Dst>(v));
    else return co.Store(FloatToInt<CO>(static_cast<double>(RealPart(v))));
  } else if constexpr (kIsComplex<Dst>) {
    using T = typename Dst::value_type;
    if constexpr (kIsComplex<Src>) return Dst(static_cast<T>(v.real()), static_cast<T>(v.imag()));
    else return Dst(static_cast<T>(v), T(0));
  } else if constexpr (kIsBool<Src>) {
    return co.Store(static_cast<Dst>(v));
  } else if constexpr (kIsInt<Src>) {
    // Integers to a narrow float: exact up to 16 bits in float, else one
    // rounding from a round-to-odd double.
    if constexpr (!kIsNarrowFloat<CO>) return co.Store(static_cast<Dst>(v));
    else if constexpr (sizeof(Src) <= 2) return co.Store(static_cast<float>(v));
    else return StoreFromDouble(co, ToDoubleRoundToOdd(v));
  } else if constexpr (std::is_same_v<decltype(RealPart(v)), double> &&
                       std::is_same_v<Dst, float>) {
    return StoreFromDouble(co, RealPart(v));  // f64 to a narrower float
  } else {
    return co.Store(static_cast<Dst>(RealPart(v)));  // exact, or a single rounding
  }
}

// Raw storage as its own compute type, for loops that work on bits or
// whose function has already encoded the value.
template <class S>
struct RawCodec {
  using Storage = S;
  using Compute = S;
  S Load(S v) const { return v; }
  S Store(S v) const { return v; }
};

// Between real float types, whole arrays convert through f32 with numerics'
// vectorised loops: the codecs' Load to f32 and Store from it (and one
// rounding from f64), bit for bit what ConvertValue gives per element.
void LoadFloats(ir::ElementType t, const uint8_t* in, float* out, int64_t n) {
  switch (t) {
    case ir::ElementType::kF32:
      std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float));
      return;
    case ir::ElementType::kBF16:
      numerics::Bf16ToFloatArray(reinterpret_cast<const uint16_t*>(in), out, n);
      return;
    case ir::ElementType::kF16:
      numerics::HalfToFloatArray(reinterpret_cast<const uint16_t*>(in), out, n);
      return;
    default:  // f8/f6/f4: SmallFloatCodec's table
      numerics::DecodeSmallFloatArray(t, in, out, n);
  }
}

void StoreFloats(ir::ElementType t, const float* in, uint8_t* out, int64_t n) {
  switch (t) {
    case ir::ElementType::kF32:
      std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float));
      return;
    case ir::ElementType::kF64:
      numerics::ConvertFloatArray(ir::ElementType::kF32, in, t, out, n);
      return;
    case ir::ElementType::kBF16:
      numerics::FloatToBf16Array(in, reinterpret_cast<uint16_t*>(out), n);
      return;
    case ir::ElementType::kF16:
      numerics::FloatToHalfArray(in, reinterpret_cast<uint16_t*>(out), n);
      return;
    default:
      numerics::EncodeSmallFloatArray(t, in, out, n);
  }
}

// True when it converted x into y: both real float types.
bool ConvertFloats(const Tensor& x, Tensor& y) {
  const ir::ElementType from = x.element(), to = y.element();
  if (!ir::IsFloat(from) || !ir::IsFloat(to)) return false;
  const int64_t n = x.num_elements();
  if (from == ir::ElementType::kF64) {  // one rounding to any narrower type
    numerics::ConvertFloatArray(from, x.raw(), to, y.mutable_raw(), n);
    return true;
  }
  constexpr int64_t kChunk = 4096;
  alignas(64) float buffer[kChunk];
  const int in_w = ir::StorageBytes(from), out_w = ir::StorageBytes(to);
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = std::min(kChunk, n - i);
    LoadFloats(from, x.raw() + i * in_w, buffer, m);
    StoreFloats(to, buffer, y.mutable_raw() + i * out_w, m);
  }
  return true;
}

Status VerifyConvert(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& in = op.operand(0).type();
  return ExpectResultType(op, 0, in.WithElement(op.result(0).type().element()));
}

StatusOr<std::vector<Tensor>> EvalConvert(EvalContext& ctx, const ir::Operation& op,
                                          std::span<const Tensor> operands) {
  // Every path below writes every element.
  std::vector<Tensor> out(1);
  TPUSIM_ASSIGN_OR_RETURN(out[0], Tensor::AllocateUninitialized(op.result(0).type()));
  const Tensor& x = operands[0];
  Tensor& y = out[0];
  const int64_t n = x.num_elements();
  if (y.num_elements() != n) return Internal("'stablehlo.convert' result size mismatch");
  if (ctx.options().numerics == Numerics::kTpu && x.element() == ir::ElementType::kF32 &&
      y.element() == ir::ElementType::kBF16) {
    numerics::TpuFloatToBf16Array(x.data<float>(), y.mutable_data<uint16_t>(), n);
    return out;
  }
  if (ConvertFloats(x, y)) return out;
  VisitCodec(x.element(), [&](auto ci) {
    VisitCodec(y.element(), [&](auto co) {
      using CI = decltype(ci);
      using CO = decltype(co);
      using SO = typename CO::Storage;
      MapUnary(ci, x.data<typename CI::Storage>(), RawCodec<SO>{}, y.mutable_data<SO>(), n,
               [&co](auto v) { return ConvertValue<CI>(co, v); });
    });
  });
  return out;
}

// One VPU conversion per element (per part for complex).
TPUSIM_REGISTER_OP({.name = "stablehlo.convert",
                    .verify = VerifyConvert,
                    .infer = InferElementwise,
                    .eval = EvalConvert,
                    .work = ElementwiseRule({.alu = 1}, {.alu = 2})});

// ---------------------------------------------------------------- bitcast_convert

Status VerifyBitcastConvert(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& in = op.operand(0).type();
  const ir::Type& out = op.result(0).type();
  if (ir::IsComplex(in.element()) != ir::IsComplex(out.element())) {
    return Error(op, "cannot bitcast between complex and non-complex types (" + in.ToString() +
                         " to " + out.ToString() + ")");
  }
  const int w_in = ir::BitWidth(in.element());
  const int w_out = ir::BitWidth(out.element());
  ir::Shape expected = in.shape();
  if (w_out < w_in) {
    if (w_in % w_out != 0) return Error(op, "element widths must divide each other");
    expected.push_back(w_in / w_out);
  } else if (w_out > w_in) {
    if (w_out % w_in != 0 || expected.empty() || expected.back() * w_in != w_out) {
      return Error(op, "operand " + in.ToString() + " must have a minor dimension of " +
                           std::to_string(w_out / std::max(w_in, 1)) + " to bitcast to " +
                           out.ToString());
    }
    expected.pop_back();
  }
  return ExpectResultType(op, 0, ir::Type::Tensor(out.element(), expected));
}

// The raw bits of the element at p (the low `width` bits of its storage).
uint64_t ReadBits(const uint8_t* p, int width) {
  if (width >= 8) {
    uint64_t v = 0;
    std::memcpy(&v, p, static_cast<size_t>(width / 8));  // little-endian host
    return v;
  }
  return *p & ((1u << width) - 1);
}

// Stores the low `width` bits of v as an element of type t at p; signed
// sub-byte integers are sign-extended into their byte.
void WriteBits(ir::ElementType t, uint64_t v, uint8_t* p) {
  const int width = ir::BitWidth(t);
  if (width >= 8) {
    std::memcpy(p, &v, static_cast<size_t>(width / 8));
    return;
  }
  v &= (1u << width) - 1;
  if (ir::IsSignedInt(t) && (v >> (width - 1))) v |= ~uint64_t{0} << width;
  *p = static_cast<uint8_t>(v);
}

StatusOr<std::vector<Tensor>> EvalBitcastConvert(EvalContext&, const ir::Operation& op,
                                                 std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, AllocateResults(op));
  const Tensor& x = operands[0];
  Tensor& y = out[0];
  const int w_in = ir::BitWidth(x.element());
  const int w_out = ir::BitWidth(y.element());
  if (x.num_elements() * w_in != y.num_elements() * w_out) {
    return Internal("'stablehlo.bitcast_convert' sizes do not match");
  }
  // Byte-sized elements: the bits of one element follow the previous one's
  // in memory, so the whole tensor is one copy.
  if (w_in % 8 == 0 && w_out % 8 == 0) {
    std::memcpy(y.mutable_raw(), x.raw(), static_cast<size_t>(x.size_bytes()));
    return out;
  }
  // A sub-byte type is involved, so neither is complex and a group of
  // elements fits in 64 bits: element j of a group holds bits [j*w, (j+1)*w).
  const int group_bits = std::max(w_in, w_out);
  if (group_bits > 64 || group_bits % w_in != 0 || group_bits % w_out != 0) {
    return Internal("'stablehlo.bitcast_convert' element widths do not divide each other");
  }
  const int in_per_group = group_bits / w_in;
  const int out_per_group = group_bits / w_out;
  const int in_bytes = ir::StorageBytes(x.element());
  const int out_bytes = ir::StorageBytes(y.element());
  const int64_t groups = x.num_elements() / in_per_group;
  for (int64_t g = 0; g < groups; ++g) {
    uint64_t bits = 0;
    for (int j = 0; j < in_per_group; ++j) {
      bits |= ReadBits(x.raw() + (g * in_per_group + j) * in_bytes, w_in) << (j * w_in);
    }
    for (int j = 0; j < out_per_group; ++j) {
      WriteBits(y.element(), bits >> (j * w_out),
                y.mutable_raw() + (g * out_per_group + j) * out_bytes);
    }
  }
  return out;
}

// Elements of one width keep their bytes and tiled layout, so only the type
// changes; otherwise the tiles differ and the data is rewritten.
Work BitcastConvertWork(const ir::Operation& op) {
  if (op.num_operands() == 1 && op.num_results() == 1 &&
      ir::BitWidth(op.operand(0).type().element()) ==
          ir::BitWidth(op.result(0).type().element())) {
    return FreeWork(op);
  }
  return ReadsAndWrites(op);
}

TPUSIM_REGISTER_OP({.name = "stablehlo.bitcast_convert",
                    .verify = VerifyBitcastConvert,
                    .eval = EvalBitcastConvert,
                    .work = BitcastConvertWork});

// ---------------------------------------------------------------- reduce_precision

// XLA's algorithm on the bits of an IEEE format with kExp exponent and kMant
// mantissa bits: round the mantissa to nearest even, then overflow to
// infinity or flush to zero (keeping the sign) whatever the reduced exponent
// range cannot hold, subnormals of the reduced format included. NaNs stay
// NaN, except that with no mantissa bits left they become infinity.
template <class U, int kExp, int kMant>
U ReducePrecisionBits(U x, int exp_bits, int mant_bits) {
  constexpr int kTotal = 8 * sizeof(U);
  constexpr U kSign = U{1} << (kTotal - 1);
  constexpr U kExpMask = static_cast<U>(((U{1} << kExp) - 1) << kMant);
  const U orig = x;
  const bool is_nan = (x & static_cast<U>(~kSign)) > kExpMask;
  if (mant_bits < kMant) {
    const int shift = kMant - mant_bits;
    const U last = static_cast<U>(U{1} << shift);
    const U bias = static_cast<U>(((x & last) >> shift) + (last >> 1) - 1);
    x = static_cast<U>(static_cast<U>(x + bias) & static_cast<U>(~(last - 1)));
  }
  if (exp_bits < kExp) {
    const int64_t bias = (int64_t{1} << (kExp - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (exp_bits - 1)) - 1;
    const U max_exp = static_cast<U>(static_cast<U>(bias + reduced_bias) << kMant);
    const U min_exp = static_cast<U>(static_cast<U>(bias - reduced_bias) << kMant);
    const U e = x & kExpMask;
    if (e > max_exp) x = static_cast<U>((x & kSign) | kExpMask);
    else if (e <= min_exp) x = x & kSign;
  }
  if (is_nan) x = mant_bits > 0 ? orig : static_cast<U>((orig & kSign) | kExpMask);
  return x;
}

Status VerifyReducePrecision(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(VerifySameType(op, 1, kFloatTypes));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute e, GetAttr(op, "exponent_bits", ir::Attribute::Kind::kInt));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute m, GetAttr(op, "mantissa_bits", ir::Attribute::Kind::kInt));
  if (e.int_value() < 1) return Error(op, "needs exponent_bits >= 1");
  if (m.int_value() < 0) return Error(op, "needs mantissa_bits >= 0");
  return Status::Ok();
}

template <class U, int kExp, int kMant>
void ReduceLoop(const Tensor& x, Tensor& y, int e, int m) {
  MapUnary(RawCodec<U>{}, x.data<U>(), RawCodec<U>{}, y.mutable_data<U>(), x.num_elements(),
           [=](U v) { return ReducePrecisionBits<U, kExp, kMant>(v, e, m); });
}

StatusOr<std::vector<Tensor>> EvalReducePrecision(EvalContext&, const ir::Operation& op,
                                                  std::span<const Tensor> operands) {
  TPUSIM_RETURN_IF_ERROR(CheckSameSize(op, operands));
  const int64_t e64 = GetIntOr(op, "exponent_bits", 0);
  const int64_t m64 = GetIntOr(op, "mantissa_bits", -1);
  if (e64 < 1 || m64 < 0) return Error(op, "needs exponent_bits >= 1 and mantissa_bits >= 0");
  // Wider than f64 changes nothing, so clamp to keep the shifts defined.
  const int e = static_cast<int>(std::min<int64_t>(e64, 11));
  const int m = static_cast<int>(std::min<int64_t>(m64, 52));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, AllocateResults(op));
  const Tensor& x = operands[0];
  using E = ir::ElementType;
  switch (x.element()) {
    case E::kF16: ReduceLoop<uint16_t, 5, 10>(x, out[0], e, m); break;
    case E::kBF16: ReduceLoop<uint16_t, 8, 7>(x, out[0], e, m); break;
    case E::kF32: ReduceLoop<uint32_t, 8, 23>(x, out[0], e, m); break;
    case E::kF64: ReduceLoop<uint64_t, 11, 52>(x, out[0], e, m); break;
    default: {
      // The f8/f6/f4 types: reduce the exact value's f32 form and encode
      // the result back.
      SmallFloatCodec codec(x.element());
      MapUnary(codec, x.data<uint8_t>(), codec, out[0].mutable_data<uint8_t>(),
               x.num_elements(), [=](float v) {
                 return std::bit_cast<float>(ReducePrecisionBits<uint32_t, 8, 23>(
                     std::bit_cast<uint32_t>(v), std::min(e, 8), std::min(m, 23)));
               });
    }
  }
  return out;
}

// ReducePrecisionBits: 4 ops to round the mantissa, 5 to clamp the
// exponent, 2 to keep NaNs.
TPUSIM_REGISTER_OP({.name = "stablehlo.reduce_precision",
                    .verify = VerifyReducePrecision,
                    .infer = InferElementwise,
                    .eval = EvalReducePrecision,
                    .work = ElementwiseRule({.alu = 11})});

// ---------------------------------------------------------------- complex, real, imag

Status VerifyComplex(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& lhs = op.operand(0).type();
  if (lhs.element() != ir::ElementType::kF32 && lhs.element() != ir::ElementType::kF64) {
    return Error(op, "needs f32 or f64 operands, got " + lhs.ToString());
  }
  if (op.operand(1).type() != lhs) {
    return Error(op, "operands must have one type, got " + lhs.ToString() + " and " +
                         op.operand(1).type().ToString());
  }
  auto c = lhs.element() == ir::ElementType::kF32 ? ir::ElementType::kC64 : ir::ElementType::kC128;
  return ExpectResultType(op, 0, lhs.WithElement(c));
}

template <class T>
void MakeComplex(const Tensor& re, const Tensor& im, Tensor& out) {
  const T* a = re.data<T>();
  const T* b = im.data<T>();
  auto* o = out.mutable_data<std::complex<T>>();
  for (int64_t i = 0; i < re.num_elements(); ++i) o[i] = {a[i], b[i]};
}

StatusOr<std::vector<Tensor>> EvalComplex(EvalContext&, const ir::Operation& op,
                                          std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, AllocateResults(op));
  const Tensor& re = operands[0];
  const Tensor& im = operands[1];
  if (im.type() != re.type() || out[0].num_elements() != re.num_elements() ||
      ir::ComplexPartType(out[0].element()) != re.element()) {
    return Internal("'stablehlo.complex' operands do not match its result");
  }
  if (re.element() == ir::ElementType::kF32) MakeComplex<float>(re, im, out[0]);
  else MakeComplex<double>(re, im, out[0]);
  return out;
}

// real and imag: the part type for complex operands, else the operand's.
Status VerifyPart(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& in = op.operand(0).type();
  ir::ElementType e = in.element();
  if (!ir::IsFloat(e) && !ir::IsComplex(e)) {
    return BadElementType(op, e, kFloatTypes | kComplexTypes);
  }
  return ExpectResultType(op, 0, in.WithElement(ir::IsComplex(e) ? ir::ComplexPartType(e) : e));
}

template <bool kImag>
StatusOr<std::vector<Tensor>> EvalPart(EvalContext&, const ir::Operation& op,
                                       std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, AllocateResults(op));
  const Tensor& x = operands[0];
  Tensor& y = out[0];
  const int64_t n = x.num_elements();
  const ir::ElementType e = x.element();
  const ir::ElementType part = ir::IsComplex(e) ? ir::ComplexPartType(e) : e;
  if (y.num_elements() != n || y.element() != part) {
    return Internal("'" + op.name_str() + "' result does not match its operand");
  }
  if (!ir::IsComplex(e)) {
    // real(x) = x; imag(x) = 0, which the zero-filled result already is.
    if (!kImag) std::memcpy(y.mutable_raw(), x.raw(), static_cast<size_t>(x.size_bytes()));
    return out;
  }
  // A complex element is (real, imag) in memory: copy every other part.
  const int part_bytes = ir::StorageBytes(part);
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(y.mutable_raw() + i * part_bytes, x.raw() + (2 * i + (kImag ? 1 : 0)) * part_bytes,
                static_cast<size_t>(part_bytes));
  }
  return out;
}

// Interleaving or picking the parts of complex numbers moves data: one VPU
// op per part and no FLOPs. real of a real tensor names its operand; imag
// of one only writes zeros.
Work PartsWork(const ir::Operation& op) {
  const bool complex = HasComplexElements(op);
  if (!complex && op.name_str() == "stablehlo.real") return FreeWork(op);
  Work w = ElementwiseWork(op, {.alu = op.name_str() == "stablehlo.complex" ? 2 : 1});
  if (!complex) w.reads.clear();
  w.flops = 0;
  return w;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.complex",
                    .verify = VerifyComplex,
                    .infer = InferElementwise,
                    .eval = EvalComplex,
                    .work = PartsWork});
TPUSIM_REGISTER_OP({.name = "stablehlo.real",
                    .verify = VerifyPart,
                    .infer = InferElementwise,
                    .eval = EvalPart<false>,
                    .work = PartsWork});
TPUSIM_REGISTER_OP({.name = "stablehlo.imag",
                    .verify = VerifyPart,
                    .infer = InferElementwise,
                    .eval = EvalPart<true>,
                    .work = PartsWork});

}  // namespace
}  // namespace tpusim::ops
