// Threefry-2x32 with 20 rounds (Salmon et al. 2011; Random123's
// threefry2x32_20, the generator JAX's PRNG keys use), shared by
// stablehlo.rng_bit_generator and jaxlib's GPU threefry2x32 kernel.
// Internal to src/ops.
#ifndef TPUSIM_OPS_KERNELS_THREEFRY_H_
#define TPUSIM_OPS_KERNELS_THREEFRY_H_

#include <array>
#include <cstdint>

namespace tpusim::ops {

// The block (x0, x1) encrypted under the key (k0, k1).
std::array<uint32_t, 2> Threefry2x32(std::array<uint32_t, 2> key, std::array<uint32_t, 2> x);

// Vector ALU ops per block: 20 rounds of add, rotate (2 shifts and an or)
// and xor, plus 5 key injections of 3 adds.
inline constexpr int64_t kThreefryOpsPerBlock = 20 * 5 + 5 * 3;

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_KERNELS_THREEFRY_H_
