// Copies between a whole array and one tile of it (a box at an offset), as
// sharded arrays are cut into devices' tiles and put back together.
#ifndef TPUSIM_TENSOR_TILE_H_
#define TPUSIM_TENSOR_TILE_H_

#include "tpusim/tensor/tensor.h"

namespace tpusim {

// Fills `tile` with the box of `whole` that starts at `offset`. Where the
// box reaches past `whole` (a padded tile of an uneven sharding), `tile`
// keeps what it held. REQUIRES: same element type and rank.
void ExtractTile(const Tensor& whole, const ir::Shape& offset, Tensor& tile);

// Writes `tile` into `whole` at `offset`, but for what lies past `whole`.
// REQUIRES: as for ExtractTile.
void InsertTile(const Tensor& tile, const ir::Shape& offset, Tensor& whole);

}  // namespace tpusim

#endif  // TPUSIM_TENSOR_TILE_H_
