// The TPU's tiled HBM layout: the minor two dimensions of an array are stored
// in (sublanes x 128) tiles whose height depends on the element width, so
// (8, 128) for 32-bit types, (16, 128) for 16-bit and (32, 128) for 8-bit.
// A dimension that does not fill its tile is padded, and padding costs
// memory, bandwidth and vector-unit slots like real data.
#ifndef TPUSIM_HW_LAYOUT_H_
#define TPUSIM_HW_LAYOUT_H_

#include <cstdint>

#include "tpusim/ir/type.h"

namespace tpusim::hw {

struct Tile {
  int64_t rows;  // second-minor dimension
  int64_t cols;  // minor dimension
};

// The tile of an element type: (8 * 4 / bytes, 128); sub-byte types use the
// 8-bit tile, 64-bit and complex types the 32-bit one (stored as pairs).
Tile TileFor(ir::ElementType t);

// Elements of `t` once its minor two dimensions (by its layout, row-major
// unless assigned) are padded to whole tiles.
// A rank-1 array is one row ((1, n), padded to 128 along n); a scalar takes a
// full 128-element row. Tuples sum their elements.
int64_t PaddedElements(const ir::Type& t);
// Bytes of `t` as stored in HBM, padding included.
int64_t PaddedBytes(const ir::Type& t);

}  // namespace tpusim::hw

#endif  // TPUSIM_HW_LAYOUT_H_
