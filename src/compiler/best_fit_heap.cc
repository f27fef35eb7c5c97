#include "compiler/best_fit_heap.h"

#include <algorithm>

namespace tpusim::compiler {

int64_t BestFitHeap::Allocate(int64_t bytes) {
  // The smallest hole that fits, the lowest of equal ones.
  auto fit = by_size_.lower_bound({bytes, 0});
  if (fit != by_size_.end()) {
    auto [size, offset] = *fit;
    RemoveHole(holes_.find(offset));
    if (size > bytes) AddHole(offset + bytes, size - bytes);
    return offset;
  }
  int64_t offset = top_;
  top_ += bytes;
  size_ = std::max(size_, top_);
  return offset;
}

void BestFitHeap::Free(int64_t offset, int64_t bytes) {
  // Merge with the holes on either side, so a freed neighbour pair can hold
  // a buffer as large as both.
  auto next = holes_.find(offset + bytes);
  if (next != holes_.end()) {
    bytes += next->second;
    RemoveHole(next);
  }
  auto prev = holes_.lower_bound(offset);
  if (prev != holes_.begin() && std::prev(prev)->first + std::prev(prev)->second == offset) {
    --prev;
    offset = prev->first;
    bytes += prev->second;
    RemoveHole(prev);
  }
  if (offset + bytes == top_) {
    top_ = offset;  // the heap shrinks: the next buffer too big for a hole goes here
  } else {
    AddHole(offset, bytes);
  }
}

void BestFitHeap::AddHole(int64_t offset, int64_t bytes) {
  holes_.emplace(offset, bytes);
  by_size_.emplace(bytes, offset);
}

void BestFitHeap::RemoveHole(std::map<int64_t, int64_t>::iterator it) {
  by_size_.erase({it->second, it->first});
  holes_.erase(it);
}


HeapPlacement PlaceInProgramOrder(const std::vector<LiveRange>& buffers) {
  // Births before deaths at each step: an op's results never take the space
  // of the operands it reads.
  std::vector<std::pair<int, int>> events;  // (2 * step + 0 birth / 1 death, buffer)
  for (size_t i = 0; i < buffers.size(); ++i) {
    events.push_back({2 * buffers[i].start, static_cast<int>(i)});
    events.push_back({2 * buffers[i].end + 1, static_cast<int>(i)});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  HeapPlacement p;
  p.offsets.assign(buffers.size(), -1);
  BestFitHeap heap;
  for (auto [when, i] : events) {
    if (when % 2 == 0) {
      p.offsets[i] = heap.Allocate(buffers[i].bytes);
    } else {
      heap.Free(p.offsets[i], buffers[i].bytes);
    }
  }
  p.size = heap.size();
  return p;
}

HeapPlacement PlaceLargestFirst(const std::vector<LiveRange>& buffers) {
  std::vector<int> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return buffers[a].bytes > buffers[b].bytes ||
           (buffers[a].bytes == buffers[b].bytes && buffers[a].start < buffers[b].start);
  });
  HeapPlacement p;
  p.offsets.assign(buffers.size(), -1);
  std::vector<int> placed;
  for (int i : order) {
    const LiveRange& b = buffers[i];
    std::vector<std::pair<int64_t, int64_t>> taken;  // [offset, end) of overlapping buffers
    for (int j : placed) {
      if (buffers[j].start <= b.end && b.start <= buffers[j].end) {
        taken.push_back({p.offsets[j], p.offsets[j] + buffers[j].bytes});
      }
    }
    std::sort(taken.begin(), taken.end());
    int64_t cursor = 0, best = -1, best_gap = 0;
    for (auto [begin, end] : taken) {
      int64_t gap = begin - cursor;
      if (gap >= b.bytes && (best < 0 || gap < best_gap)) {
        best = cursor;
        best_gap = gap;
      }
      cursor = std::max(cursor, end);
    }
    p.offsets[i] = best >= 0 ? best : cursor;
    p.size = std::max(p.size, p.offsets[i] + b.bytes);
    placed.push_back(i);
  }
  return p;
}

}  // namespace tpusim::compiler
