// The stable sort behind stablehlo.sort, chlo.top_k and ApproxTopK. Internal
// to src/ops.
#ifndef TPUSIM_OPS_SORT_H_
#define TPUSIM_OPS_SORT_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

// Sorts `v` stably by `less` (a bottom-up merge sort). Unlike std::sort it
// stays in bounds and terminates for any `less`, even one that is not a
// strict weak order, as a user's comparator region may be.
template <class Less>
void StableSort(std::vector<int64_t>& v, Less&& less) {
  const size_t n = v.size();
  std::vector<int64_t> buf(n);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      const size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) buf[k++] = less(v[j], v[i]) ? v[j++] : v[i++];
      while (i < mid) buf[k++] = v[i++];
      while (j < hi) buf[k++] = v[j++];
    }
    v.swap(buf);
  }
}

// Evaluates a comparator on 2 x inputs scalars (lhs0, rhs0, lhs1, ...).
using RunComparator = std::function<StatusOr<std::vector<Tensor>>(std::span<const Tensor> args)>;

// The permutation that stably sorts the slice of `n` elements at `base`
// (step `stride`) of each of `in` by comparator `cmp` (a sort's region or a
// comparator function's body): position p of the sorted slice takes element
// perm[p]. A comparator region_kernels.h recognizes runs natively; any
// other is evaluated by `run`, whose errors are returned.
StatusOr<std::vector<int64_t>> SortPermutation(const ir::Region& cmp, const RunComparator& run,
                                               std::span<const Tensor> in, int64_t base,
                                               int64_t stride, int64_t n);

// Comparator evaluations of a bitonic sort of one row of `n` elements, the
// sort a vector unit runs: each of its L(L+1)/2 stages (L = ceil(log2 n))
// compares every element with its partner, lane-parallel.
inline int64_t BitonicEvaluations(int64_t n) {
  int64_t levels = 0;
  while ((int64_t{1} << levels) < n) ++levels;
  return n * levels * (levels + 1) / 2;
}

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_SORT_H_
