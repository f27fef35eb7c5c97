// Offsets in one address space for buffers with known live ranges, as XLA's
// heap simulator finds them. Two placements, whose smaller heap a caller
// keeps (XLA runs several and keeps the best):
//  - in program order, each new buffer takes the smallest hole left by dead
//    ones that fits it, or grows the heap at its top (BestFitHeap);
//  - largest first, each buffer takes the smallest gap between the buffers
//    already placed that overlap it in time (XLA's global decreasing size
//    best fit), which leaves fewer holes when big buffers come late.
#ifndef TPUSIM_COMPILER_BEST_FIT_HEAP_H_
#define TPUSIM_COMPILER_BEST_FIT_HEAP_H_

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace tpusim::compiler {

class BestFitHeap {
 public:
  // The offset of a new buffer of `bytes` (> 0).
  int64_t Allocate(int64_t bytes);
  // Returns [offset, offset + bytes), a buffer Allocate placed, to the holes.
  void Free(int64_t offset, int64_t bytes);
  // The end of the highest buffer now allocated.
  int64_t top() const { return top_; }
  // The most top() has been: the heap's size.
  int64_t size() const { return size_; }

 private:
  void AddHole(int64_t offset, int64_t bytes);
  void RemoveHole(std::map<int64_t, int64_t>::iterator it);

  std::map<int64_t, int64_t> holes_;             // offset -> bytes, all below top_
  std::set<std::pair<int64_t, int64_t>> by_size_;  // (bytes, offset) of holes_
  int64_t top_ = 0;
  int64_t size_ = 0;
};

// A buffer to place: live from step `start` to step `end`, both included.
struct LiveRange {
  int64_t bytes = 0;  // > 0
  int start = 0, end = 0;
};

// Offsets for `buffers`, one per buffer, and the heap size they need. Two
// buffers live at a common step never share bytes.
struct HeapPlacement {
  std::vector<int64_t> offsets;
  int64_t size = 0;
};
HeapPlacement PlaceInProgramOrder(const std::vector<LiveRange>& buffers);
HeapPlacement PlaceLargestFirst(const std::vector<LiveRange>& buffers);

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_BEST_FIT_HEAP_H_
