// Storage for large tensors: whole pages of their own, 2 MiB aligned (huge
// pages where the host gives them unasked), with freed ones kept for
// reuse up to a bound, the oldest going first. A train step frees and
// allocates the same few large sizes thousands of times; fresh pages cost a
// fault each and the kernel's zeroing, reused ones cost neither. Internal to
// src/tensor; thread-safe.
#ifndef TPUSIM_TENSOR_PAGE_POOL_H_
#define TPUSIM_TENSOR_PAGE_POOL_H_

#include <cstddef>
#include <cstdint>

namespace tpusim::tensor_internal {

// Tensors from this size on take their storage from the pool; under
// AddressSanitizer none do, so that it sees every tensor's overruns.
#if defined(__SANITIZE_ADDRESS__)  // GCC's spelling
#define TPUSIM_TENSOR_ASAN 1
#elif defined(__has_feature)     // clang's
#if __has_feature(address_sanitizer)
#define TPUSIM_TENSOR_ASAN 1
#endif
#endif
#if defined(TPUSIM_TENSOR_ASAN)
inline constexpr int64_t kPooledFrom = INT64_MAX;
#else
inline constexpr int64_t kPooledFrom = int64_t{1} << 21;
#endif

// Freed pages kept for reuse at most: enough for a 25M-parameter train
// step's recurring activations, small beside any host that runs one.
inline constexpr size_t kPoolCapacity = size_t{256} << 20;

struct Pages {
  uint8_t* data = nullptr;  // null: the host has no memory left
  size_t length = 0;        // what to give back
  bool zeroed = false;      // fresh from the kernel, so all zero bytes
};

// Pages holding at least `bytes`: reused ones of the same rounded length if
// the pool has some, else fresh ones.
Pages TakePages(int64_t bytes);

// Returns pages from TakePages, to be kept for reuse: the oldest pages kept
// are unmapped to keep the pool within kPoolCapacity (pages larger than that
// are unmapped at once).
void GivePages(uint8_t* data, size_t length);

// Bytes kept for reuse now.
size_t PooledBytes();

// Unmaps every page kept for reuse.
void ReleasePooledPages();

}  // namespace tpusim::tensor_internal

#endif  // TPUSIM_TENSOR_PAGE_POOL_H_
