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
  std::vector<int64_t> order = t.MinorToMajor();
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
