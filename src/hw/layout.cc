#include "tpusim/hw/layout.h"

#include "tpusim/ops/work.h"

namespace tpusim::hw {
namespace {

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

int64_t StoredBits(ir::ElementType t) {
  return ir::BitWidth(t) < 8 ? 8 : ir::BitWidth(t);
}

}  // namespace

Tile TileFor(ir::ElementType t) {
  int64_t bits = StoredBits(t);
  if (bits >= 32) return {8, 128};
  return {8 * 32 / bits, 128};
}

int64_t PaddedElements(const ir::Type& t) {
  if (t.is_tuple()) {
    int64_t sum = 0;
    for (const ir::Type& e : t.tuple_elements()) sum += PaddedElements(e);
    return sum;
  }
  if (!t.is_tensor()) return 0;
  const ir::Shape& s = t.shape();
  Tile tile = TileFor(t.element());
  if (s.empty()) return tile.cols;
  if (s.size() == 1) return RoundUp(s[0], tile.cols);
  // Dimensions of size 1 take no part in the tiling: XLA's TPU layouts move
  // them out of the minor two, so a [b, t, 1, 128] cache is tiled (t, 128).
  std::vector<int64_t> order;
  for (int64_t d : t.MinorToMajor()) {
    if (s[d] != 1) order.push_back(d);
  }
  if (order.empty()) return tile.cols;
  if (order.size() == 1) return RoundUp(s[order[0]], tile.cols);
  int64_t n = RoundUp(s[order[1]], tile.rows) * RoundUp(s[order[0]], tile.cols);
  for (size_t i = 2; i < order.size(); ++i) n *= s[order[i]];
  return n;
}

int64_t PaddedBytes(const ir::Type& t) {
  if (t.is_tuple()) {
    int64_t sum = 0;
    for (const ir::Type& e : t.tuple_elements()) sum += PaddedBytes(e);
    return sum;
  }
  if (!t.is_tensor()) return 0;
  return PaddedElements(t) * StoredBits(t.element()) / 8;
}

}  // namespace tpusim::hw
