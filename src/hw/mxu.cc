#include "tpusim/hw/mxu.h"

#include <algorithm>

namespace tpusim::hw {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The stationary dimension pairs and the streamed length of each dataflow,
// expressed as weight-stationary: tiles of `rows_dim` x `cols_dim`, each
// streaming `stream` vectors.
struct Folded {
  int64_t rows_dim, cols_dim, stream;
};

Folded Fold(Dataflow d, const MatmulDims& x) {
  switch (d) {
    case Dataflow::kWeightStationary: return {x.k, x.n, x.m};
    case Dataflow::kInputStationary: return {x.k, x.m, x.n};
    case Dataflow::kOutputStationary: return {x.m, x.n, x.k};
  }
  return {x.k, x.n, x.m};
}

}  // namespace

int64_t NumTiles(const MxuSpec& mxu, const MatmulDims& dims) {
  Folded f = Fold(mxu.dataflow, dims);
  return CeilDiv(f.rows_dim, mxu.rows) * CeilDiv(f.cols_dim, mxu.cols);
}

MxuTiming ArrayCycles(const MxuSpec& mxu, const MatmulDims& dims, int64_t tiles_override) {
  const int64_t r = mxu.rows, c = mxu.cols;
  Folded f = Fold(mxu.dataflow, dims);
  MxuTiming t;
  t.tiles = tiles_override > 0 ? tiles_override : NumTiles(mxu, dims);
  const int64_t s = f.stream;
  // From a tile's first input entering row 0 to its last result leaving.
  const int64_t tile_latency = s + r + c - 2;
  t.stream_cycles = t.tiles * s;
  if (mxu.dataflow == Dataflow::kOutputStationary) {
    // Each tile computes, then shifts its r rows of results out of the array.
    const int64_t gap = tile_latency + r;
    t.cycles = t.tiles * gap;
    t.fill_drain_cycles = r + c - 2;
    t.stall_cycles = t.tiles * r;
    return t;
  }
  // Weight- and input-stationary: r cycles to shift in the first tile. With
  // double buffering the next tile's load starts once the previous swap has
  // crossed row 0 (c cycles after it started) and takes r cycles; without it,
  // the load waits until the previous tile's last MAC.
  const int64_t gap = mxu.double_buffered ? std::max(s, r + c) : tile_latency + r;
  t.cycles = r + (t.tiles - 1) * gap + tile_latency;
  t.fill_drain_cycles = r + r + c - 2;  // first load, then fill and drain
  t.stall_cycles = r + (t.tiles - 1) * (gap - s);
  return t;
}

MxuTiming CoreCycles(const MxuSpec& mxu, const MatmulDims& dims, int cores) {
  MatmulDims per_core = dims;
  per_core.m = CeilDiv(dims.m, std::max(cores, 1));
  const int64_t tiles = NumTiles(mxu, per_core);
  const int64_t busiest = CeilDiv(tiles, mxu.per_core);
  MxuTiming t = ArrayCycles(mxu, per_core, busiest);
  t.tiles = tiles * std::max(cores, 1);
  return t;
}

}  // namespace tpusim::hw
