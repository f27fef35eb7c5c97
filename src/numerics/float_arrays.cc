// FP exceptions are never looked at: without trapping math GCC may compute
// both sides of a select, which its vectoriser needs. Before the includes,
// so that the inline conversions they define get the same options (GCC does
// not inline across differing ones).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include "tpusim/numerics/float_arrays.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "numerics/vector_clones.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/numerics/tpu.h"


namespace tpusim::numerics {
namespace {

using ir::ElementType;

// Elements per block: a constant trip count lets the compiler vectorise the
// block's loop without a scalar epilogue (GCC's -O2 cost model wants that).
constexpr int64_t kBlock = 1024;

template <class In, class Out, class F>
[[gnu::always_inline]] inline void Map(const In* __restrict in, Out* __restrict out, int64_t n,
                                       const F& f) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    const In* __restrict a = in + i;
    Out* __restrict b = out + i;
    for (int64_t j = 0; j < kBlock; ++j) b[j] = f(a[j]);
  }
  for (; i < n; ++i) out[i] = f(in[i]);
}

// A NaN made quiet, as converting it to double and back does.
inline float Quiet(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  return std::bit_cast<float>((u & 0x7FFFFFFFu) > 0x7F800000u ? u | 0x00400000u : u);
}

// Decoded f32 values of every 8-bit-or-narrower float type, built once.
const float* DecodeTable(ElementType t) {
  static const auto* tables = [] {
    auto* all = new std::array<std::array<float, 256>, ir::kNumElementTypes>{};
    for (int i = 0; i < ir::kNumElementTypes; ++i) {
      auto type = static_cast<ElementType>(i);
      if (!ir::IsFloat(type) || ir::BitWidth(type) > 8) continue;
      for (int b = 0; b < 256; ++b) {
        (*all)[i][b] = static_cast<float>(DecodeSmallFloat(type, static_cast<uint16_t>(b)));
      }
    }
    return all;
  }();
  return (*tables)[static_cast<int>(t)].data();
}

TPUSIM_VECTOR_CLONES void EncodeFloats16(const SmallFloatEncoder& encoder, const float* in,
                                         uint16_t* out, int64_t n) {
  const SmallFloatEncoder e = encoder;
  Map(in, out, n, [&e](float f) { return e(f); });
}

TPUSIM_VECTOR_CLONES void EncodeFloats8(const SmallFloatEncoder& encoder, const float* in,
                                        uint8_t* out, int64_t n) {
  const SmallFloatEncoder e = encoder;
  Map(in, out, n, [&e](float f) { return static_cast<uint8_t>(e(f)); });
}

TPUSIM_VECTOR_CLONES void EncodeDoubles16(const SmallFloatEncoder& encoder, const double* in,
                                          uint16_t* out, int64_t n) {
  const SmallFloatEncoder e = encoder;
  Map(in, out, n, [&e](double d) { return e(RoundToOddFloat(d)); });
}

TPUSIM_VECTOR_CLONES void EncodeDoubles8(const SmallFloatEncoder& encoder, const double* in,
                                         uint8_t* out, int64_t n) {
  const SmallFloatEncoder e = encoder;
  Map(in, out, n, [&e](double d) { return static_cast<uint8_t>(e(RoundToOddFloat(d))); });
}

TPUSIM_VECTOR_CLONES void DecodeBytes(const float* table, const uint8_t* in, float* out,
                                      int64_t n) {
  Map(in, out, n, [table](uint8_t b) { return table[b]; });
}

TPUSIM_VECTOR_CLONES void QuietBf16ToFloat(const uint16_t* in, float* out, int64_t n) {
  Map(in, out, n, [](uint16_t h) { return Quiet(Bf16ToFloat(h)); });
}

TPUSIM_VECTOR_CLONES void QuietHalfToFloat(const uint16_t* in, float* out, int64_t n) {
  Map(in, out, n, [](uint16_t h) { return Quiet(HalfToFloat(h)); });
}

TPUSIM_VECTOR_CLONES void QuietFloats(const float* in, float* out, int64_t n) {
  Map(in, out, n, [](float f) { return Quiet(f); });
}

TPUSIM_VECTOR_CLONES void FloatToDouble(const float* in, double* out, int64_t n) {
  Map(in, out, n, [](float f) { return static_cast<double>(f); });
}

TPUSIM_VECTOR_CLONES void DoubleToFloat(const double* in, float* out, int64_t n) {
  Map(in, out, n, [](double d) { return static_cast<float>(d); });
}

// Narrow types as f32 through a buffer on the stack, one chunk at a time.
template <class F>
void ThroughFloats(ElementType from, const void* in, int64_t n, const F& consume) {
  constexpr int64_t kChunk = 2048;
  float buffer[kChunk];
  const int w = ir::StorageBytes(from);
  for (int64_t i = 0; i < n; i += kChunk) {
    int64_t m = std::min(kChunk, n - i);
    DecodeSmallFloatArray(from, static_cast<const uint8_t*>(in) + i * w, buffer, m);
    consume(buffer, i, m);
  }
}

// The exponent and sign fields of f32 (32-bit words) and bf16 (16-bit) storage.
template <class Word> struct Fields;
template <> struct Fields<uint32_t> {
  static constexpr uint32_t kExp = 0x7f800000, kSign = 0x80000000;
};
template <> struct Fields<uint16_t> {
  static constexpr uint16_t kExp = 0x7f80, kSign = 0x8000;
};

template <class Word>
[[gnu::always_inline]] inline bool AnySubnormalWords(const Word* w, int64_t n) {
  using F = Fields<Word>;
  auto subnormal = [](Word x) -> Word { return ((x & F::kExp) == 0) & ((x & ~F::kSign) != 0); };
  Word any = 0;
  int64_t i = 0;
  for (; i + kBlock <= n && !any; i += kBlock) {  // whole blocks, so that they vectorise
    for (int64_t j = 0; j < kBlock; ++j) any |= subnormal(w[i + j]);
  }
  for (; i < n && !any; ++i) any |= subnormal(w[i]);
  return any != 0;
}

template <class Word>
[[gnu::always_inline]] inline void FlushSubnormalWords(Word* w, int64_t n) {
  using F = Fields<Word>;
  auto flush = [](Word x) { return (x & F::kExp) == 0 ? Word(x & F::kSign) : x; };
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) w[i + j] = flush(w[i + j]);
  }
  for (; i < n; ++i) w[i] = flush(w[i]);
}

TPUSIM_VECTOR_CLONES bool AnySubnormal32(const uint32_t* w, int64_t n) {
  return AnySubnormalWords(w, n);
}
TPUSIM_VECTOR_CLONES bool AnySubnormal16(const uint16_t* w, int64_t n) {
  return AnySubnormalWords(w, n);
}
TPUSIM_VECTOR_CLONES void FlushSubnormal32(uint32_t* w, int64_t n) { FlushSubnormalWords(w, n); }
TPUSIM_VECTOR_CLONES void FlushSubnormal16(uint16_t* w, int64_t n) { FlushSubnormalWords(w, n); }

}  // namespace

TPUSIM_VECTOR_CLONES void FloatToBf16Array(const float* in, uint16_t* out, int64_t n) {
  Map(in, out, n, [](float f) { return FloatToBf16(f); });
}

TPUSIM_VECTOR_CLONES void Bf16ToFloatArray(const uint16_t* in, float* out, int64_t n) {
  Map(in, out, n, [](uint16_t h) { return Bf16ToFloat(h); });
}

TPUSIM_VECTOR_CLONES void FloatToHalfArray(const float* in, uint16_t* out, int64_t n) {
  Map(in, out, n, [](float f) { return FloatToHalf(f); });
}

TPUSIM_VECTOR_CLONES void HalfToFloatArray(const uint16_t* in, float* out, int64_t n) {
  Map(in, out, n, [](uint16_t h) { return HalfToFloat(h); });
}

TPUSIM_VECTOR_CLONES void TpuFloatToBf16Array(const float* in, uint16_t* out, int64_t n) {
  Map(in, out, n, [](float f) { return TpuFloatToBf16(f); });
}

void EncodeSmallFloatArray(ElementType t, const float* in, void* out, int64_t n) {
  SmallFloatEncoder e(t);
  if (ir::BitWidth(t) == 16) {
    EncodeFloats16(e, in, static_cast<uint16_t*>(out), n);
  } else {
    EncodeFloats8(e, in, static_cast<uint8_t*>(out), n);
  }
}

void EncodeSmallFloatArray(ElementType t, const double* in, void* out, int64_t n) {
  SmallFloatEncoder e(t);
  if (ir::BitWidth(t) == 16) {
    EncodeDoubles16(e, in, static_cast<uint16_t*>(out), n);
  } else {
    EncodeDoubles8(e, in, static_cast<uint8_t*>(out), n);
  }
}

void DecodeSmallFloatArray(ElementType t, const void* in, float* out, int64_t n) {
  switch (t) {
    case ElementType::kBF16:
      QuietBf16ToFloat(static_cast<const uint16_t*>(in), out, n);
      return;
    case ElementType::kF16:
      QuietHalfToFloat(static_cast<const uint16_t*>(in), out, n);
      return;
    default:
      DecodeBytes(DecodeTable(t), static_cast<const uint8_t*>(in), out, n);
  }
}

void ConvertFloatArray(ElementType from, const void* in, ElementType to, void* out, int64_t n) {
  if (n <= 0) return;
  // Through double, f64 keeps its bits, but an f32 signalling NaN is made
  // quiet and narrow NaNs become their type's canonical one.
  if (from == ElementType::kF64 && to == ElementType::kF64) {
    std::memcpy(out, in, static_cast<size_t>(n) * sizeof(double));
    return;
  }
  const bool narrow_to = to != ElementType::kF32 && to != ElementType::kF64;
  if (from == ElementType::kF32) {
    if (narrow_to) {
      EncodeSmallFloatArray(to, static_cast<const float*>(in), out, n);
    } else if (to == ElementType::kF32) {
      QuietFloats(static_cast<const float*>(in), static_cast<float*>(out), n);
    } else {
      FloatToDouble(static_cast<const float*>(in), static_cast<double*>(out), n);
    }
    return;
  }
  if (from == ElementType::kF64) {
    if (narrow_to) {
      EncodeSmallFloatArray(to, static_cast<const double*>(in), out, n);
    } else {
      DoubleToFloat(static_cast<const double*>(in), static_cast<float*>(out), n);
    }
    return;
  }
  // From a narrow type, exactly representable in f32.
  if (to == ElementType::kF32) {
    DecodeSmallFloatArray(from, in, static_cast<float*>(out), n);
    return;
  }
  const int out_w = ir::StorageBytes(to);
  ThroughFloats(from, in, n, [&](const float* chunk, int64_t at, int64_t m) {
    uint8_t* dst = static_cast<uint8_t*>(out) + at * out_w;
    if (to == ElementType::kF64) {
      FloatToDouble(chunk, reinterpret_cast<double*>(dst), m);
    } else {
      EncodeSmallFloatArray(to, chunk, dst, m);
    }
  });
}

bool AnySubnormalFloat(const float* v, int64_t n) {
  return AnySubnormal32(reinterpret_cast<const uint32_t*>(v), n);
}
bool AnySubnormalBf16(const uint16_t* v, int64_t n) { return AnySubnormal16(v, n); }
void FlushSubnormalFloats(float* v, int64_t n) {
  FlushSubnormal32(reinterpret_cast<uint32_t*>(v), n);
}
void FlushSubnormalBf16s(uint16_t* v, int64_t n) { FlushSubnormal16(v, n); }

}  // namespace tpusim::numerics
