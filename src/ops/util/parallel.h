// Loops over the host's cores for the ops' kernels. Internal to src/ops.
//
// A parallel loop splits an index range into contiguous chunks, one per
// thread; every index is computed by exactly the code a serial loop would run
// for it, so results never depend on the number of threads. Kernels split
// over OUTPUT elements only: an accumulation into one output element stays
// in one thread, in its serial order.
//
// The threads are OpenMP's (GNU libgomp), the pool oneDNN's matmuls use too.
// Small ranges run inline on the calling thread: starting a team costs a few
// microseconds, more than a small loop.
#ifndef TPUSIM_OPS_UTIL_PARALLEL_H_
#define TPUSIM_OPS_UTIL_PARALLEL_H_

#include <cstdint>
#include <type_traits>
#include <utility>

namespace tpusim::ops {

// A non-owning reference to a callable `void(int64_t begin, int64_t end)`:
// the loop body, without std::function's allocation.
class RangeFn {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RangeFn>>>
  RangeFn(F&& f)  // NOLINT: implicit, like std::function_ref
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int64_t b, int64_t e) { (*static_cast<std::decay_t<F>*>(o))(b, e); }) {}
  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, int64_t, int64_t);
};

// Elementwise loops go parallel from this many elements: below it (256 KiB of
// f32) a loop takes about as long as waking the other threads.
inline constexpr int64_t kParallelElements = int64_t{1} << 16;

// The number of threads a loop of `n` items, each thread taking at least
// `grain` of them, would use: 1 when the range is small, when called from
// inside a parallel loop (no nesting), or when the calling thread runs its
// ops serially (SerialOps).
int ParallelThreads(int64_t n, int64_t grain);

// Calls fn(begin, end) on disjoint contiguous ranges covering [0, n), from up
// to ParallelThreads(n, grain) threads at once; returns when all have run.
// Chunk boundaries are multiples of `align` (but for the last), so that a
// kernel's vector blocks stay whole. `fn` must not throw.
void ParallelFor(int64_t n, int64_t grain, RangeFn fn, int64_t align = 1);

// Calls fn(i, i + 1) for each i in [0, n), from up to ParallelThreads(n, 1)
// threads at once, each thread taking the next i none has taken: for a few
// items of uneven cost, like a program's result files. Returns when all have
// run. `fn` must not throw.
void ParallelTasks(int64_t n, RangeFn fn);

// While alive, the ops on this thread run their loops serially: for threads
// that are one process of a grid each, which together already fill the cores.
class SerialOps {
 public:
  SerialOps();
  ~SerialOps();
  SerialOps(const SerialOps&) = delete;
  SerialOps& operator=(const SerialOps&) = delete;

 private:
  bool saved_;
};

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_UTIL_PARALLEL_H_
