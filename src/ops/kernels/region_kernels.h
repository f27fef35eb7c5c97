// Fast paths for ops that apply a region per element (reduce, reduce_window,
// scatter, select_and_scatter, map, sort): recognizers for the region bodies
// JAX emits most often (one elementwise binary op or one compare of the two
// block arguments) and typed kernels that compute the same thing without
// running the region. Kernels compute with the elementwise ops' codecs
// (elementwise_kernel.h), so a fast path gives the bits the region would.
// Internal to src/ops.
#ifndef TPUSIM_OPS_KERNELS_REGION_KERNELS_H_
#define TPUSIM_OPS_KERNELS_REGION_KERNELS_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

#include "ops/kernels/elementwise_kernel.h"
#include "tpusim/ir/ir.h"

namespace tpusim::ops {

enum class BinaryKind { kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kXor };

// The op computed by `region` when its one block takes two 0-d tensors of
// one element type, applies one of BinaryKind's ops to them (in either
// order, all being commutative; a complex multiply only in order) and
// returns the result; nullopt otherwise.
std::optional<BinaryKind> MatchBinaryRegion(const ir::Region& region);

// True when `region`'s block returns its argument `arg` and nothing else
// (scatter's "replace" update).
bool MatchReturnOfArgument(const ir::Region& region, int arg);

enum class CompareDirection { kEq, kNe, kGe, kGt, kLe, kLt };

struct CompareMatch {
  CompareDirection direction;
  bool total_order = false;  // comparison_type TOTALORDER (floats)
  // JAX's float sort comparators first map every NaN to one NaN and -0 to
  // +0: with `canonical`, operands equal to NaN or zero compare as the bits
  // `nan_bits` and `zero_bits` (total order only).
  bool canonical = false;
  uint64_t nan_bits = 0, zero_bits = 0;
};

// The comparison computed by `region` (or a function's body) when it
// returns `stablehlo.compare` of block arguments 0 and 1 (in that order), or,
// with TOTALORDER, of their
// JAX canonicalizations select(x != x, NaN, select(x == 0, 0, x)); nullopt
// otherwise. Further block arguments (as in a multi-operand sort comparator)
// are allowed and unused.
std::optional<CompareMatch> MatchCompareRegion(const ir::Region& region);

namespace kernels {

// Element functions on compute types, the same as the elementwise ops'
// (elementwise_binary.cc), so that a fast path gives the region's bits.
struct AddFn {
  template <class C> C operator()(C a, C b) const {
    if constexpr (ew::kIsBool<C>) return a || b;
    else if constexpr (ew::kIsInt<C>) return ew::WrapAdd(a, b);
    else return a + b;
  }
};
struct MultiplyFn {
  template <class C> C operator()(C a, C b) const {
    if constexpr (ew::kIsBool<C>) return a && b;
    else if constexpr (ew::kIsInt<C>) return ew::WrapMul(a, b);
    else if constexpr (ew::kIsComplex<C>) return ew::ComplexMultiply(a, b);
    else return a * b;
  }
};
struct MaximumFn {
  template <class C> C operator()(C a, C b) const { return ew::Maximum(a, b); }
};
struct MinimumFn {
  template <class C> C operator()(C a, C b) const { return ew::Minimum(a, b); }
};
struct AndFn {
  template <class C> C operator()(C a, C b) const {
    if constexpr (ew::kIsBool<C>) return a && b;
    else return static_cast<C>(a & b);
  }
};
struct OrFn {
  template <class C> C operator()(C a, C b) const {
    if constexpr (ew::kIsBool<C>) return a || b;
    else return static_cast<C>(a | b);
  }
};
struct XorFn {
  template <class C> C operator()(C a, C b) const {
    if constexpr (ew::kIsBool<C>) return a != b;
    else return static_cast<C>(a ^ b);
  }
};

// f applied to stored elements: load, compute, store (rounding once).
template <class Codec, class F>
struct StoredBinary {
  Codec codec;
  using Storage = typename Codec::Storage;
  Storage operator()(Storage a, Storage b) const {
    return codec.Store(F{}(codec.Load(a), codec.Load(b)));
  }
};

template <class K>
bool Compare(CompareDirection d, K a, K b) {
  switch (d) {
    case CompareDirection::kEq: return a == b;
    case CompareDirection::kNe: return a != b;
    case CompareDirection::kGe: return a >= b;
    case CompareDirection::kGt: return a > b;
    case CompareDirection::kLe: return a <= b;
    case CompareDirection::kLt: return a < b;
  }
  return false;
}

// Maps float bits (as a signed integer) to a key whose order is IEEE
// totalOrder: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
template <class S>
S TotalOrderKey(S bits) {
  using U = std::make_unsigned_t<S>;
  const S magnitude = static_cast<S>(static_cast<U>(-1) >> 1);
  return bits < 0 ? static_cast<S>(bits ^ magnitude) : bits;
}

template <class Codec>
struct StoredCompare {
  Codec codec;
  CompareDirection d;
  using Storage = typename Codec::Storage;
  bool operator()(Storage a, Storage b) const {
    return Compare(d, codec.Load(a), codec.Load(b));
  }
};

// totalOrder on the stored bits of a float type of sizeof(S) bytes whose
// +infinity has bits kInf, optionally on canonicalized values.
template <class StorageT, class S, uint64_t kInf>
struct TotalOrderCompare {
  using Storage = StorageT;
  CompareMatch m;
  S Key(Storage v) const {
    using U = std::make_unsigned_t<S>;
    U bits;
    std::memcpy(&bits, &v, sizeof(S));
    if (m.canonical) {
      const U magnitude = bits & static_cast<U>(static_cast<U>(-1) >> 1);
      if (magnitude > kInf) bits = static_cast<U>(m.nan_bits);
      else if (magnitude == 0) bits = static_cast<U>(m.zero_bits);
    }
    return TotalOrderKey(static_cast<S>(bits));
  }
  bool operator()(Storage a, Storage b) const { return Compare(m.direction, Key(a), Key(b)); }
};

}  // namespace kernels

// Calls fn(op) with `op` a functor Storage(Storage, Storage) that computes
// `kind` on stored elements of type `e` exactly as the elementwise op does,
// and returns true; returns false (calling nothing) for bitwise ops on
// floating-point or complex types.
template <class Fn>
bool WithBinaryKernel(ir::ElementType e, BinaryKind kind, Fn&& fn) {
  using namespace kernels;
  return ew::VisitCodec(e, [&](auto codec) -> bool {
    using Codec = decltype(codec);
    using C = typename Codec::Compute;
    switch (kind) {
      case BinaryKind::kAdd: fn(StoredBinary<Codec, AddFn>{codec}); return true;
      case BinaryKind::kMultiply: fn(StoredBinary<Codec, MultiplyFn>{codec}); return true;
      case BinaryKind::kMaximum: fn(StoredBinary<Codec, MaximumFn>{codec}); return true;
      case BinaryKind::kMinimum: fn(StoredBinary<Codec, MinimumFn>{codec}); return true;
      default: break;
    }
    if constexpr (ew::kIsBool<C> || ew::kIsInt<C>) {
      switch (kind) {
        case BinaryKind::kAnd: fn(StoredBinary<Codec, AndFn>{codec}); return true;
        case BinaryKind::kOr: fn(StoredBinary<Codec, OrFn>{codec}); return true;
        case BinaryKind::kXor: fn(StoredBinary<Codec, XorFn>{codec}); return true;
        default: break;
      }
    }
    return false;
  });
}

// Calls fn(cmp) with `cmp` a functor bool(Storage, Storage) computing the
// comparison `m` on stored elements of type `e`, and returns true; false
// where no kernel exists (complex; totalOrder on types narrower than 16 bits).
template <class Fn>
bool WithCompareKernel(ir::ElementType e, CompareMatch m, Fn&& fn) {
  using namespace kernels;
  using E = ir::ElementType;
  if (m.total_order) {
    switch (e) {
      case E::kF32: fn(TotalOrderCompare<float, int32_t, 0x7F800000>{m}); return true;
      case E::kF64:
        fn(TotalOrderCompare<double, int64_t, 0x7FF0000000000000>{m});
        return true;
      case E::kBF16: fn(TotalOrderCompare<uint16_t, int16_t, 0x7F80>{m}); return true;
      case E::kF16: fn(TotalOrderCompare<uint16_t, int16_t, 0x7C00>{m}); return true;
      default: return false;
    }
  }
  return ew::VisitCodec(e, [&](auto codec) -> bool {
    using Codec = decltype(codec);
    if constexpr (ew::kIsComplex<typename Codec::Compute>) {
      return false;
    } else {
      fn(StoredCompare<Codec>{codec, m.direction});
      return true;
    }
  });
}

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_KERNELS_REGION_KERNELS_H_
