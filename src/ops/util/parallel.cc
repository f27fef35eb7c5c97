// Compiled with OpenMP (CMakeLists.txt): the only file of src/ops with
// pragmas, so that the kernels stay plain C++.
#include "ops/util/parallel.h"

#include <omp.h>

#include <algorithm>

namespace tpusim::ops {
namespace {

thread_local bool serial_ops = false;

}  // namespace

int ParallelThreads(int64_t n, int64_t grain) {
  if (serial_ops || n < 2 * std::max<int64_t>(grain, 1) || omp_in_parallel()) return 1;
  const int64_t most = n / std::max<int64_t>(grain, 1);
  return static_cast<int>(std::min<int64_t>(omp_get_max_threads(), most));
}

void ParallelFor(int64_t n, int64_t grain, RangeFn fn, int64_t align) {
  const int threads = ParallelThreads(n, grain);
  if (threads <= 1) {
    if (n > 0) fn(0, n);
    return;
  }
  align = std::max<int64_t>(align, 1);
  const int64_t blocks = (n + align - 1) / align;
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), count = omp_get_num_threads();
    const int64_t begin = std::min(n, blocks * t / count * align);
    const int64_t end = std::min(n, blocks * (t + 1) / count * align);
    if (begin < end) fn(begin, end);
  }
}

void ParallelTasks(int64_t n, RangeFn fn) {
  const int threads = ParallelThreads(n, 1);
  if (threads <= 1) {
    for (int64_t i = 0; i < n; ++i) fn(i, i + 1);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t i = 0; i < n; ++i) fn(i, i + 1);
}

SerialOps::SerialOps() : saved_(serial_ops) { serial_ops = true; }
SerialOps::~SerialOps() { serial_ops = saved_; }

}  // namespace tpusim::ops
