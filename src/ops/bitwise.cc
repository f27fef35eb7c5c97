// Bitwise ops: and, or, xor, not, the three shifts, popcnt and
// count_leading_zeros. Booleans are logical; integers act on the bits of
// their own width (a 4-bit integer has 4 bits, whatever its storage).
//
// Shifts take the amount as an unsigned number of the operand's width (so a
// negative amount is a large one). An amount >= the width gives 0 for the
// left and logical right shifts and fills with the sign bit for the
// arithmetic right shift, which treats unsigned operands as bit patterns
// too (as XLA does).
#include <bit>

#include "ops/kernels/elementwise_kernel.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

using namespace ew;  // NOLINT: the kernel vocabulary is used throughout

// The low kWidth bits of v.
template <int kWidth, class S>
inline uint64_t Bits(S v) {
  auto u = static_cast<uint64_t>(static_cast<std::make_unsigned_t<S>>(v));
  if constexpr (kWidth == 64) return u;
  else return u & ((uint64_t{1} << kWidth) - 1);
}

// The bits of v as a signed kWidth-bit number.
template <int kWidth, class S>
inline int64_t SignedBits(S v) {
  return static_cast<int64_t>(Bits<kWidth>(v) << (64 - kWidth)) >> (64 - kWidth);
}

enum class BitOp { kAnd, kOr, kXor, kShl, kShrA, kShrL };

template <BitOp kOp, int kWidth, class C>
inline C ApplyBinary(C a, C b) {
  if constexpr (kOp == BitOp::kAnd) return static_cast<C>(a & b);
  else if constexpr (kOp == BitOp::kOr) return static_cast<C>(a | b);
  else if constexpr (kOp == BitOp::kXor) return static_cast<C>(a ^ b);
  else {
    const uint64_t amount = Bits<kWidth>(b);
    if constexpr (kOp == BitOp::kShl) {
      return amount >= kWidth ? C(0) : static_cast<C>(Bits<kWidth>(a) << amount);
    } else if constexpr (kOp == BitOp::kShrL) {
      return amount >= kWidth ? C(0) : static_cast<C>(Bits<kWidth>(a) >> amount);
    } else {
      const int64_t s = SignedBits<kWidth>(a);
      return static_cast<C>(amount >= kWidth ? (s < 0 ? -1 : 0) : s >> amount);
    }
  }
}

template <BitOp kOp>
StatusOr<std::vector<Tensor>> EvalBinary(EvalContext& ctx, const ir::Operation& op,
                                         std::span<const Tensor> in) {
  constexpr bool kLogical = kOp == BitOp::kAnd || kOp == BitOp::kOr || kOp == BitOp::kXor;
  constexpr unsigned kClasses = kLogical ? (kBoolTypes | kIntTypes) : kIntTypes;
  TPUSIM_RETURN_IF_ERROR(CheckSameSize(op, in));
  const std::vector<Tensor> operands = ctx.TakeOperands(in);
  std::vector<Tensor> out(1);
  TPUSIM_ASSIGN_OR_RETURN(out[0], ReuseOrAllocate(operands, {0, 1}, op.result(0).type()));
  Status st = VisitCodec(out[0].element(), [&](auto codec) -> Status {
    using Codec = decltype(codec);
    using S = typename Codec::Storage;
    if constexpr ((ClassOf<Codec>() & kClasses) == 0) {
      return BadElementType(op, out[0].element(), kClasses);
    } else {
      constexpr int kWidth = Codec::kWidth;
      MapBinary(codec, operands[0].data<S>(), operands[1].data<S>(), codec,
                out[0].mutable_data<S>(), out[0].num_elements(),
                [](auto a, auto b) { return ApplyBinary<kOp, kWidth>(a, b); });
      return Status::Ok();
    }
  });
  TPUSIM_RETURN_IF_ERROR(st);
  return out;
}

enum class CountOp { kPopcnt, kClz };

template <CountOp kOp>
StatusOr<std::vector<Tensor>> EvalCount(EvalContext& ctx, const ir::Operation& op,
                                        std::span<const Tensor> in) {
  TPUSIM_RETURN_IF_ERROR(CheckSameSize(op, in));
  const std::vector<Tensor> operands = ctx.TakeOperands(in);
  std::vector<Tensor> out(1);
  TPUSIM_ASSIGN_OR_RETURN(out[0], ReuseOrAllocate(operands, {0}, op.result(0).type()));
  Status st = VisitCodec(out[0].element(), [&](auto codec) -> Status {
    using Codec = decltype(codec);
    using S = typename Codec::Storage;
    if constexpr ((ClassOf<Codec>() & kIntTypes) == 0) {
      return BadElementType(op, out[0].element(), kIntTypes);
    } else {
      constexpr int kWidth = Codec::kWidth;
      MapUnary(codec, operands[0].data<S>(), codec, out[0].mutable_data<S>(),
               out[0].num_elements(), [](auto a) {
                 const uint64_t bits = Bits<kWidth>(a);
                 if constexpr (kOp == CountOp::kPopcnt) return static_cast<S>(std::popcount(bits));
                 else return static_cast<S>(kWidth - std::bit_width(bits));
               });
      return Status::Ok();
    }
  });
  TPUSIM_RETURN_IF_ERROR(st);
  return out;
}

// not: logical for booleans, bitwise for integers (Store wraps the result
// back to the type's width).
struct Not {
  template <class C> C operator()(C a) const {
    if constexpr (kIsBool<C>) return !a;
    else return static_cast<C>(~a);
  }
};

StatusOr<std::vector<Tensor>> EvalNot(EvalContext& ctx, const ir::Operation& op,
                                      std::span<const Tensor> operands) {
  return EvalSameType<kBoolTypes | kIntTypes>(ctx, op, operands, Not{});
}

template <int kNumOperands, unsigned kClasses>
Status VerifyBits(const ir::Operation& op) {
  return VerifySameType(op, kNumOperands, kClasses);
}

constexpr unsigned kBoolInt = kBoolTypes | kIntTypes;

// One VPU op per element; a shift also compares its amount with the width
// and selects the out-of-range result.
constexpr ElementOps kOne{.alu = 1}, kShift{.alu = 3};

TPUSIM_REGISTER_OP({.name = "stablehlo.and",
                    .verify = VerifyBits<2, kBoolInt>,
                    .infer = InferElementwise,
                    .eval = EvalBinary<BitOp::kAnd>,
                    .work = ElementwiseRule(kOne)});
TPUSIM_REGISTER_OP({.name = "stablehlo.or",
                    .verify = VerifyBits<2, kBoolInt>,
                    .infer = InferElementwise,
                    .eval = EvalBinary<BitOp::kOr>,
                    .work = ElementwiseRule(kOne)});
TPUSIM_REGISTER_OP({.name = "stablehlo.xor",
                    .verify = VerifyBits<2, kBoolInt>,
                    .infer = InferElementwise,
                    .eval = EvalBinary<BitOp::kXor>,
                    .work = ElementwiseRule(kOne)});
TPUSIM_REGISTER_OP({.name = "stablehlo.not",
                    .verify = VerifyBits<1, kBoolInt>,
                    .infer = InferElementwise,
                    .eval = EvalNot,
                    .work = ElementwiseRule(kOne)});
TPUSIM_REGISTER_OP({.name = "stablehlo.shift_left",
                    .verify = VerifyBits<2, kIntTypes>,
                    .infer = InferElementwise,
                    .eval = EvalBinary<BitOp::kShl>,
                    .work = ElementwiseRule(kShift)});
TPUSIM_REGISTER_OP({.name = "stablehlo.shift_right_arithmetic",
                    .verify = VerifyBits<2, kIntTypes>,
                    .infer = InferElementwise,
                    .eval = EvalBinary<BitOp::kShrA>,
                    .work = ElementwiseRule(kShift)});
TPUSIM_REGISTER_OP({.name = "stablehlo.shift_right_logical",
                    .verify = VerifyBits<2, kIntTypes>,
                    .infer = InferElementwise,
                    .eval = EvalBinary<BitOp::kShrL>,
                    .work = ElementwiseRule(kShift)});
TPUSIM_REGISTER_OP({.name = "stablehlo.popcnt",
                    .verify = VerifyBits<1, kIntTypes>,
                    .infer = InferElementwise,
                    .eval = EvalCount<CountOp::kPopcnt>,
                    .work = ElementwiseRule(kOne)});
TPUSIM_REGISTER_OP({.name = "stablehlo.count_leading_zeros",
                    .verify = VerifyBits<1, kIntTypes>,
                    .infer = InferElementwise,
                    .eval = EvalCount<CountOp::kClz>,
                    .work = ElementwiseRule(kOne)});

}  // namespace
}  // namespace tpusim::ops
