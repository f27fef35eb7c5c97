#include "tensor/page_pool.h"

#include <sys/mman.h>

#include <map>
#include <mutex>

namespace tpusim::tensor_internal {
namespace {

constexpr size_t kHugePage = size_t{1} << 21;

struct Pool {
  std::mutex mu;
  std::multimap<size_t, uint8_t*> free;  // by length
  size_t bytes = 0;
};

Pool& ThePool() {
  static Pool* pool = new Pool();  // never destroyed: tensors may outlive statics
  return *pool;
}

// Fresh zeroed pages of `length` (a multiple of kHugePage), aligned to it so
// that the kernel can back them with huge pages.
uint8_t* MapAligned(size_t length) {
  size_t span = length + kHugePage;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto base = reinterpret_cast<uintptr_t>(p);
  uintptr_t start = (base + kHugePage - 1) / kHugePage * kHugePage;
  if (start > base) munmap(p, start - base);
  uintptr_t end = start + length;
  if (base + span > end) munmap(reinterpret_cast<void*>(end), base + span - end);
  madvise(reinterpret_cast<void*>(start), length, MADV_HUGEPAGE);  // advice: may be refused
  return reinterpret_cast<uint8_t*>(start);
}

}  // namespace

Pages TakePages(int64_t bytes) {
  const size_t length = (static_cast<size_t>(bytes) + kHugePage - 1) / kHugePage * kHugePage;
  Pool& pool = ThePool();
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    auto it = pool.free.find(length);
    if (it != pool.free.end()) {
      uint8_t* data = it->second;
      pool.free.erase(it);
      pool.bytes -= length;
      return {data, length, false};
    }
  }
  return {MapAligned(length), length, true};
}

void GivePages(uint8_t* data, size_t length) {
  Pool& pool = ThePool();
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.bytes + length <= kPoolCapacity) {
      pool.free.emplace(length, data);
      pool.bytes += length;
      return;
    }
  }
  munmap(data, length);
}

size_t PooledBytes() {
  Pool& pool = ThePool();
  std::lock_guard<std::mutex> lock(pool.mu);
  return pool.bytes;
}

}  // namespace tpusim::tensor_internal
