// Counter-based random numbers: Philox-4x32-10 (Salmon, Moraes, Dror and
// Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11), a generator of
// the family JAX's threefry belongs to. Word i of a stream is a pure function
// of (seed, stream, i), so any part of an array can be filled by any thread
// in any order and give the same values; and the normals below use IEEE
// arithmetic only (no libm), so they are the same bits on every machine.
#ifndef TPUSIM_NUMERICS_RANDOM_H_
#define TPUSIM_NUMERICS_RANDOM_H_

#include <array>
#include <cstdint>

namespace tpusim::numerics {

// One Philox-4x32-10 block: four random words from a 128-bit counter and a
// 64-bit key (checked against Random123's known answers).
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// out[j] = word first + j of stream `stream` under `seed`: word i is word
// i % 4 of the block at counter (i / 4 low, i / 4 high, stream low, stream
// high) and key (seed low, seed high). REQUIRES: first, n >= 0.
void RandomWords(uint64_t seed, uint64_t stream, int64_t first, uint32_t* out, int64_t n);

// out[j] = the standard normal value of word first + j of the stream, one
// word each: sqrt(2) * erfinv(u) for u = (2k + 1) / 2^24 - 1, k the word's
// top 24 bits, so u is uniform on (-1, 1) and symmetric about 0 (|value|
// < 5.5). erfinv is Giles' single-precision approximation ("Approximating
// the erfinv function", GPU Computing Gems, 2011), as XLA's is.
void RandomNormals(uint64_t seed, uint64_t stream, int64_t first, float* out, int64_t n);
// The standard normal value RandomNormals makes of one word.
float NormalFromWord(uint32_t word);

}  // namespace tpusim::numerics

#endif  // TPUSIM_NUMERICS_RANDOM_H_
