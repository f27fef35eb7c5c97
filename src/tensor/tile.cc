#include "tpusim/tensor/tile.h"

#include <cstring>

namespace tpusim {
namespace {

// Calls copy(tile_byte, whole_byte, row_bytes) for each row of the box
// that `tile` is within an array of shape `whole` at `offset`.
template <typename Copy>
void ForEachRow(const ir::Shape& whole, const ir::Shape& offset, const Tensor& tile,
                const Copy& copy) {
  const ir::Shape& box = tile.shape();
  const int64_t w = ir::StorageBytes(tile.element());
  const int64_t rank = static_cast<int64_t>(box.size());
  const int64_t row = rank == 0 ? 1 : box[rank - 1];
  if (tile.num_elements() == 0) return;
  ir::Shape index(rank, 0);
  for (int64_t r = 0; r < tile.num_elements() / row; ++r) {
    int64_t g = 0;
    for (int64_t d = 0; d < rank; ++d) g = g * whole[d] + offset[d] + index[d];
    copy(r * row * w, g * w, row * w);
    for (int64_t d = rank - 2; d >= 0 && ++index[d] == box[d]; --d) index[d] = 0;
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
