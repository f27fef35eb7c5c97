// compare, select and clamp.
#include <bit>
#include <cstring>
#include <optional>

#include "ops/kernels/elementwise_kernel.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

using namespace ew;  // NOLINT: the kernel vocabulary is used throughout

Status Error(const ir::Operation& op, const std::string& what) {
  return InvalidArgument("'" + op.name_str() + "' " + what);
}

// ---------------------------------------------------------------- compare

enum class Direction { kEq, kNe, kGe, kGt, kLe, kLt };

std::optional<Direction> ParseDirection(const std::string& s) {
  if (s == "EQ") return Direction::kEq;
  if (s == "NE") return Direction::kNe;
  if (s == "GE") return Direction::kGe;
  if (s == "GT") return Direction::kGt;
  if (s == "LE") return Direction::kLe;
  if (s == "LT") return Direction::kLt;
  return std::nullopt;
}

// The compare_type the spec requires for element type t (C3); floats also
// accept TOTALORDER.
std::string DefaultCompareType(ir::ElementType t) {
  if (ir::IsSignedInt(t)) return "SIGNED";
  if (ir::IsUnsignedInt(t) || ir::IsBool(t)) return "UNSIGNED";
  return "FLOAT";
}

Status VerifyCompare(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& lhs = op.operand(0).type();
  if (op.operand(1).type() != lhs) {
    return Error(op, "operands must have one type, got " + lhs.ToString() + " and " +
                         op.operand(1).type().ToString());
  }
  TPUSIM_ASSIGN_OR_RETURN(
      ir::Attribute dir, GetAttr(op, "comparison_direction", ir::Attribute::Kind::kEnum));
  if (!ParseDirection(dir.str())) {
    return Error(op, "has unknown comparison_direction '" + dir.str() + "'");
  }
  std::string expected = DefaultCompareType(lhs.element());
  std::string type = GetEnumOr(op, "compare_type", expected);
  bool ok = type == expected || (type == "TOTALORDER" && ir::IsFloat(lhs.element()));
  if (!ok) {
    return Error(op, "compare_type " + type + " does not fit element type " +
                         std::string(ir::ElementTypeName(lhs.element())) + " (expected " +
                         expected + ")");
  }
  return ExpectResultType(op, 0, lhs.WithElement(ir::ElementType::kI1));
}

// Maps a float to an integer whose signed order is IEEE-754 totalOrder:
// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
template <class F>
auto TotalOrderKey(F x) {
  using I = std::conditional_t<sizeof(F) == 4, int32_t, int64_t>;
  using U = std::make_unsigned_t<I>;
  auto bits = std::bit_cast<I>(x);
  // Negative values: flip the magnitude bits so larger magnitudes sort lower.
  return bits < 0 ? static_cast<I>(bits ^ static_cast<I>(std::numeric_limits<U>::max() >> 1))
                  : bits;
}

template <Direction kDir, class T>
inline bool Ordered(T a, T b) {
  if constexpr (kDir == Direction::kEq) return a == b;
  else if constexpr (kDir == Direction::kNe) return a != b;
  else if constexpr (kDir == Direction::kGe) return a >= b;
  else if constexpr (kDir == Direction::kGt) return a > b;
  else if constexpr (kDir == Direction::kLe) return a <= b;
  else return a < b;
}

// One element comparison; complex numbers compare lexicographically.
template <Direction kDir, bool kTotalOrder, class C>
inline bool CompareElements(C a, C b) {
  if constexpr (kIsComplex<C>) {
    if constexpr (kDir == Direction::kEq) return a == b;
    else if constexpr (kDir == Direction::kNe) return a != b;
    else if (a.real() == b.real()) return Ordered<kDir>(a.imag(), b.imag());
    else return Ordered<kDir>(a.real(), b.real());
  } else if constexpr (kTotalOrder && kIsReal<C>) {
    return Ordered<kDir>(TotalOrderKey(a), TotalOrderKey(b));
  } else {
    return Ordered<kDir>(a, b);
  }
}

template <Direction kDir, bool kTotalOrder, class Codec>
void CompareLoop(const Codec& codec, const Tensor& lhs, const Tensor& rhs, Tensor& out) {
  using S = typename Codec::Storage;
  MapBinary(codec, lhs.data<S>(), rhs.data<S>(), BoolCodec{}, out.mutable_data<uint8_t>(),
            lhs.num_elements(),
            [](auto a, auto b) { return CompareElements<kDir, kTotalOrder>(a, b); });
}

template <bool kTotalOrder, class Codec>
void CompareWith(Direction dir, const Codec& codec, const Tensor& lhs, const Tensor& rhs,
                 Tensor& out) {
  switch (dir) {
    case Direction::kEq: return CompareLoop<Direction::kEq, kTotalOrder>(codec, lhs, rhs, out);
    case Direction::kNe: return CompareLoop<Direction::kNe, kTotalOrder>(codec, lhs, rhs, out);
    case Direction::kGe: return CompareLoop<Direction::kGe, kTotalOrder>(codec, lhs, rhs, out);
    case Direction::kGt: return CompareLoop<Direction::kGt, kTotalOrder>(codec, lhs, rhs, out);
    case Direction::kLe: return CompareLoop<Direction::kLe, kTotalOrder>(codec, lhs, rhs, out);
    case Direction::kLt: return CompareLoop<Direction::kLt, kTotalOrder>(codec, lhs, rhs, out);
  }
}

StatusOr<std::vector<Tensor>> EvalCompare(EvalContext&, const ir::Operation& op,
                                          std::span<const Tensor> operands) {
  auto dir = ParseDirection(GetEnumOr(op, "comparison_direction", ""));
  if (!dir) return Error(op, "has no valid comparison_direction");
  std::vector<Tensor> out(1);
  TPUSIM_ASSIGN_OR_RETURN(out[0], Tensor::AllocateUninitialized(op.result(0).type()));
  const Tensor& lhs = operands[0];
  const Tensor& rhs = operands[1];
  if (rhs.type() != lhs.type() || out[0].num_elements() != lhs.num_elements()) {
    return Internal("'stablehlo.compare' operands do not match its result");
  }
  const bool total = GetEnumOr(op, "compare_type", "") == "TOTALORDER";
  VisitCodec(lhs.element(), [&](auto codec) {
    if (total) CompareWith<true>(*dir, codec, lhs, rhs, out[0]);
    else CompareWith<false>(*dir, codec, lhs, rhs, out[0]);
  });
  return out;
}

// A total order on floats maps each to a sign-magnitude integer first (a
// shift, an xor and a select); complex equality compares both parts.
Work CompareWork(const ir::Operation& op) {
  if (HasComplexElements(op)) return ElementwiseWork(op, {.alu = 3});
  const bool total = GetEnumOr(op, "compare_type", "") == "TOTALORDER";
  return ElementwiseWork(op, {.alu = total ? 4 : 1});
}

// ---- compare on a chunk of a fused loop (chunk_kernels.h)

template <Direction kDir, bool kTotalOrder, class Codec>
void CompareRun(const Codec& codec, std::span<const ChunkOperand> in, uint8_t* o, int64_t n) {
  using S = typename Codec::Storage;
  const auto f = [](auto a, auto b) { return CompareElements<kDir, kTotalOrder>(a, b); };
  const S* a = static_cast<const S*>(in[0].data);
  const S* b = static_cast<const S*>(in[1].data);
  if (in[0].splat && in[1].splat) {
    std::fill(o, o + n, BoolCodec{}.Store(f(codec.Load(*a), codec.Load(*b))));
  } else if (in[0].splat) {
    MapScalarSerial<true>(codec, codec.Load(*a), b, BoolCodec{}, o, n, f);
  } else if (in[1].splat) {
    MapScalarSerial<false>(codec, codec.Load(*b), a, BoolCodec{}, o, n, f);
  } else {
    MapBinarySerial(codec, a, b, BoolCodec{}, o, n, f);
  }
}

template <bool kTotalOrder, class Codec>
void CompareRunWith(Direction dir, const Codec& codec, std::span<const ChunkOperand> in,
                    uint8_t* o, int64_t n) {
  switch (dir) {
    case Direction::kEq: return CompareRun<Direction::kEq, kTotalOrder>(codec, in, o, n);
    case Direction::kNe: return CompareRun<Direction::kNe, kTotalOrder>(codec, in, o, n);
    case Direction::kGe: return CompareRun<Direction::kGe, kTotalOrder>(codec, in, o, n);
    case Direction::kGt: return CompareRun<Direction::kGt, kTotalOrder>(codec, in, o, n);
    case Direction::kLe: return CompareRun<Direction::kLe, kTotalOrder>(codec, in, o, n);
    case Direction::kLt: return CompareRun<Direction::kLt, kTotalOrder>(codec, in, o, n);
  }
}

bool SupportsCompare(const ir::Operation& op) {
  return op.num_operands() == 2 && op.operand(0).type().is_tensor() &&
         ParseDirection(GetEnumOr(op, "comparison_direction", "")).has_value();
}

void RunCompareChunk(const ir::Operation& op, std::span<const ChunkOperand> in, void* out,
                     int64_t n) {
  const Direction dir = *ParseDirection(GetEnumOr(op, "comparison_direction", ""));
  const bool total = GetEnumOr(op, "compare_type", "") == "TOTALORDER";
  uint8_t* o = static_cast<uint8_t*>(out);
  VisitCodec(op.operand(0).type().element(), [&](auto codec) {
    if (total) CompareRunWith<true>(dir, codec, in, o, n);
    else CompareRunWith<false>(dir, codec, in, o, n);
  });
}

[[maybe_unused]] const bool kCompareChunk =
    RegisterChunkKernel("stablehlo.compare", {SupportsCompare, RunCompareChunk});

TPUSIM_REGISTER_OP({.name = "stablehlo.compare",
                    .verify = VerifyCompare,
                    .infer = InferElementwise,
                    .eval = EvalCompare,
                    .work = CompareWork});

// ---------------------------------------------------------------- select

Status VerifySelect(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 3));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& pred = op.operand(0).type();
  const ir::Type& on_true = op.operand(1).type();
  if (pred.element() != ir::ElementType::kI1) {
    return Error(op, "needs an i1 predicate, got " + pred.ToString());
  }
  if (pred.rank() != 0 && pred.shape() != on_true.shape()) {
    return Error(op, "predicate " + pred.ToString() + " must be a scalar or have the shape of " +
                         on_true.ToString());
  }
  if (op.operand(2).type() != on_true) {
    return Error(op, "branches must have one type, got " + on_true.ToString() + " and " +
                         op.operand(2).type().ToString());
  }
  return ExpectResultType(op, 0, on_true);
}

// An operand's storage and the step between its elements: 0 for a scalar
// predicate or one element standing for all (OpDef::splat_operands).
struct Strided {
  const uint8_t* data;
  int64_t stride;
};

// Selection moves bits, so it runs on unsigned words of the element's
// storage size (complex<f64> as two words). `out` may be `on_true` or
// `on_false` itself: each element is read before it is written.
template <class W, int kWords>
void SelectRun(Strided pred, Strided on_true, Strided on_false, uint8_t* out, int64_t b,
               int64_t e) {
  const W* t = reinterpret_cast<const W*>(on_true.data);
  const W* f = reinterpret_cast<const W*>(on_false.data);
  W* o = reinterpret_cast<W*>(out);
  for (int64_t i = b; i < e; ++i) {
    const bool which = pred.data[i * pred.stride] != 0;
    const W* src = which ? t + i * on_true.stride * kWords : f + i * on_false.stride * kWords;
    for (int w = 0; w < kWords; ++w) o[i * kWords + w] = src[w];
  }
}

template <class W, int kWords>
void SelectLoop(Strided pred, Strided on_true, Strided on_false, uint8_t* out, int64_t n) {
  ParallelFor(n, kParallelElements, [&](int64_t b, int64_t e) {
    SelectRun<W, kWords>(pred, on_true, on_false, out, b, e);
  });
}

// Operand `t` of select, of `n` elements or one standing for all; null
// data if it is neither, or not of `element`.
Strided SelectOperand(const Tensor& t, int64_t n, ir::ElementType element) {
  if (!t.valid() || !t.type().is_tensor() || t.element() != element ||
      (t.num_elements() != n && t.num_elements() != 1)) {
    return {nullptr, 0};
  }
  return {t.raw(), IsSplatPlaceholder(t, n) || n == 1 ? 0 : 1};
}

StatusOr<std::vector<Tensor>> EvalSelect(EvalContext& ctx, const ir::Operation& op,
                                         std::span<const Tensor> in) {
  const std::vector<Tensor> operands = ctx.TakeOperands(in);
  std::vector<Tensor> out(1);
  TPUSIM_ASSIGN_OR_RETURN(out[0], ReuseOrAllocate(operands, {1, 2}, op.result(0).type()));
  const int64_t n = out[0].num_elements();
  const ir::ElementType e = out[0].element();
  const Strided p = SelectOperand(operands[0], n, ir::ElementType::kI1);
  const Strided t = SelectOperand(operands[1], n, e);
  const Strided f = SelectOperand(operands[2], n, e);
  if (p.data == nullptr || t.data == nullptr || f.data == nullptr) {
    return Internal("'stablehlo.select' operands do not match its result");
  }
  uint8_t* o = out[0].mutable_raw();
  switch (ir::StorageBytes(out[0].element())) {
    case 1: SelectLoop<uint8_t, 1>(p, t, f, o, n); break;
    case 2: SelectLoop<uint16_t, 1>(p, t, f, o, n); break;
    case 4: SelectLoop<uint32_t, 1>(p, t, f, o, n); break;
    case 8: SelectLoop<uint64_t, 1>(p, t, f, o, n); break;
    case 16: SelectLoop<uint64_t, 2>(p, t, f, o, n); break;
    default: return Internal("'stablehlo.select': unexpected element size");
  }
  return out;
}

// ---- select on a chunk of a fused loop (chunk_kernels.h)

bool SupportsSelect(const ir::Operation& op) {
  return op.num_operands() == 3 && op.num_results() == 1 && op.result(0).type().is_tensor() &&
         ir::StorageBytes(op.result(0).type().element()) <= 16 &&
         (op.operand(0).type().num_elements() == op.result(0).type().num_elements() ||
          op.operand(0).type().num_elements() == 1);
}

void RunSelectChunk(const ir::Operation& op, std::span<const ChunkOperand> in, void* out,
                    int64_t n) {
  const auto strided = [](const ChunkOperand& c) {
    return Strided{static_cast<const uint8_t*>(c.data), c.splat ? 0 : 1};
  };
  const Strided p = strided(in[0]), t = strided(in[1]), f = strided(in[2]);
  uint8_t* o = static_cast<uint8_t*>(out);
  switch (ir::StorageBytes(op.result(0).type().element())) {
    case 1: SelectRun<uint8_t, 1>(p, t, f, o, 0, n); break;
    case 2: SelectRun<uint16_t, 1>(p, t, f, o, 0, n); break;
    case 4: SelectRun<uint32_t, 1>(p, t, f, o, 0, n); break;
    case 8: SelectRun<uint64_t, 1>(p, t, f, o, 0, n); break;
    default: SelectRun<uint64_t, 2>(p, t, f, o, 0, n); break;
  }
}

[[maybe_unused]] const bool kSelectChunk =
    RegisterChunkKernel("stablehlo.select", {SupportsSelect, RunSelectChunk});

// A scalar predicate (or clamp bound) has no dimensions to split.
std::optional<ShardingRule> ScalarOrElementwiseRule(const ir::Operation& op) {
  return PositionalShardingRule(op, {});
}

TPUSIM_REGISTER_OP({.name = "stablehlo.select",
                    .verify = VerifySelect,
                    .infer = InferElementwise,
                    .eval = EvalSelect,
                    .work = ElementwiseRule({.alu = 1}, {.alu = 2}),
                    .sharding_rule = ScalarOrElementwiseRule,
                    .splat_operands = true});

// ---------------------------------------------------------------- clamp

Status VerifyClamp(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 3));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& operand = op.operand(1).type();
  for (int i : {0, 2}) {
    const ir::Type& bound = op.operand(i).type();
    const char* name = i == 0 ? "min" : "max";
    if (bound.element() != operand.element()) {
      return Error(op, std::string(name) + " " + bound.ToString() +
                           " must have the element type of the operand " + operand.ToString());
    }
    if (bound.rank() != 0 && bound.shape() != operand.shape()) {
      return Error(op, std::string(name) + " " + bound.ToString() +
                           " must be a scalar or have the shape of the operand " +
                           operand.ToString());
    }
  }
  return ExpectResultType(op, 0, operand);
}

// result = minimum(maximum(x, lo), hi), with the NaN and signed-zero rules of
// maximum and minimum.
template <class Codec>
void ClampLoop(const Codec& codec, const Tensor& lo, const Tensor& x, const Tensor& hi,
               Tensor& out) {
  using S = typename Codec::Storage;
  const S* l = lo.data<S>();
  const S* v = x.data<S>();
  const S* h = hi.data<S>();
  S* o = out.mutable_data<S>();
  const int64_t ls = lo.rank() == 0 ? 0 : 1;
  const int64_t hs = hi.rank() == 0 ? 0 : 1;
  const int64_t n = x.num_elements();
  ParallelFor(n, kParallelElements, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      auto r = Minimum(Maximum(codec.Load(v[i]), codec.Load(l[i * ls])), codec.Load(h[i * hs]));
      o[i] = codec.Store(r);
    }
  });
}

StatusOr<std::vector<Tensor>> EvalClamp(EvalContext& ctx, const ir::Operation& op,
                                        std::span<const Tensor> in) {
  const std::vector<Tensor> operands = ctx.TakeOperands(in);
  std::vector<Tensor> out(1);
  TPUSIM_ASSIGN_OR_RETURN(out[0], ReuseOrAllocate(operands, {1}, op.result(0).type()));
  const Tensor& lo = operands[0];
  const Tensor& x = operands[1];
  const Tensor& hi = operands[2];
  for (const Tensor* bound : {&lo, &hi}) {
    if (bound->element() != x.element() ||
        (bound->rank() != 0 && bound->num_elements() != x.num_elements())) {
      return Internal("'stablehlo.clamp' bounds do not match the operand");
    }
  }
  if (out[0].type() != x.type()) return Internal("'stablehlo.clamp' result mismatch");
  VisitCodec(x.element(), [&](auto codec) { ClampLoop(codec, lo, x, hi, out[0]); });
  return out;
}

// A maximum and a minimum (lexicographic for complex: 5 ops each).
TPUSIM_REGISTER_OP({.name = "stablehlo.clamp",
                    .verify = VerifyClamp,
                    .infer = InferElementwise,
                    .eval = EvalClamp,
                    .work = ElementwiseRule({.alu = 2}, {.alu = 10}),
                    .sharding_rule = ScalarOrElementwiseRule});

}  // namespace
}  // namespace tpusim::ops
