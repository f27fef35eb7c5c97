// bf16 <-> f32 as a hand-written loop would convert them (round to nearest
// even, NaN kept quiet): the benches' plain references use these.
#ifndef TPUSIM_BENCH_PLAIN_BF16_H_
#define TPUSIM_BENCH_PLAIN_BF16_H_

#include <cstdint>
#include <cstring>

namespace tpusim::bench {

inline float Bf16ToF32(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t F32ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace tpusim::bench

#endif  // TPUSIM_BENCH_PLAIN_BF16_H_
