#include "tpusim/tensor/tile.h"

#include <algorithm>
#include <cstring>

namespace tpusim {
namespace {

// Calls copy(tile_byte, whole_byte, row_bytes) for each row of the part of
// `tile`'s box at `offset` that lies within an array of shape `whole`.
template <typename Copy>
void ForEachRow(const ir::Shape& whole, const ir::Shape& offset, const Tensor& tile,
                const Copy& copy) {
  const ir::Shape& box = tile.shape();
  const int64_t w = ir::StorageBytes(tile.element());
  const int64_t rank = static_cast<int64_t>(box.size());
  ir::Shape inside(rank);
  for (int64_t d = 0; d < rank; ++d) {
    inside[d] = std::clamp<int64_t>(whole[d] - offset[d], 0, box[d]);
    if (inside[d] == 0) return;
  }
  const int64_t row = rank == 0 ? 1 : inside[rank - 1];
  ir::Shape index(rank, 0);
  for (int64_t r = 0; r < ir::NumElements(inside) / row; ++r) {
    int64_t g = 0, t = 0;
    for (int64_t d = 0; d < rank; ++d) {
      g = g * whole[d] + offset[d] + index[d];
      t = t * box[d] + index[d];
    }
    copy(t * w, g * w, row * w);
    for (int64_t d = rank - 2; d >= 0 && ++index[d] == inside[d]; --d) index[d] = 0;
  }
}

}  // namespace

void ExtractTile(const Tensor& whole, const ir::Shape& offset, Tensor& tile) {
  ForEachRow(whole.shape(), offset, tile, [&](int64_t t, int64_t g, int64_t n) {
    std::memcpy(tile.mutable_raw() + t, whole.raw() + g, n);
  });
}

void InsertTile(const Tensor& tile, const ir::Shape& offset, Tensor& whole) {
  ForEachRow(whole.shape(), offset, tile, [&](int64_t t, int64_t g, int64_t n) {
    std::memcpy(whole.mutable_raw() + g, tile.raw() + t, n);
  });
}

}  // namespace tpusim
