#include "tpusim/hw/systolic_array.h"

#include <algorithm>

#include "tpusim/numerics/float_formats.h"

namespace tpusim::hw {
namespace {

float ToBf16(float x) { return numerics::Bf16ToFloat(numerics::FloatToBf16(x)); }

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Weight-stationary grid. Tile u covers weight rows [kt*R, kt*R+R) and
// columns [nt*C, nt*C+C) with u = nt * k_tiles + kt, so the k-tiles of one
// output block are consecutive and accumulate in order.
class WeightStationaryGrid {
 public:
  WeightStationaryGrid(const MxuSpec& mxu, const MatmulDims& d, const std::vector<float>& a,
                       const std::vector<float>& b)
      : R(mxu.rows), C(mxu.cols), M(d.m), K(d.k), N(d.n), double_buffered_(mxu.double_buffered),
        a_(a), b_(b), k_tiles_(CeilDiv(K, R)), tiles_(k_tiles_ * CeilDiv(N, C)),
        cells_(static_cast<size_t>(R) * C), next_(cells_.size()) {
    out_.assign(static_cast<size_t>(M) * N, 0.0f);
    starts_.assign(tiles_, -1);
  }

  StatusOr<SystolicRun> Run() {
    for (int64_t cycle = 0;; ++cycle) {
      Control(cycle);
      TPUSIM_RETURN_IF_ERROR(Step(cycle));
      if (finished_) {
        return SystolicRun{cycle + 1, tiles_, std::move(out_)};
      }
    }
  }

 private:
  struct Cell {
    float active = 0, shadow = 0;
    int64_t active_tile = -1, shadow_tile = -1;
    float a = 0;
    int64_t a_tile = -1, a_m = -1;  // the LHS value held, if a_tile >= 0
    float psum = 0;
    int64_t p_tile = -1, p_m = -1;
  };

  Cell& at(std::vector<Cell>& g, int64_t i, int64_t j) { return g[i * C + j]; }

  float Weight(int64_t tile, int64_t row, int64_t col) const {
    int64_t k = (tile % k_tiles_) * R + row, n = (tile / k_tiles_) * C + col;
    return k < K && n < N ? ToBf16(b_[k * N + n]) : 0.0f;
  }

  // Starts weight loads and tiles on signals observed at the cycle's start.
  void Control(int64_t cycle) {
    if (load_tile_ < tiles_ && !loading_ && LoadMayStart()) {
      loading_ = true;
      load_step_ = 0;
    }
    int64_t next = stream_tile_ + 1;
    if (next < tiles_ && loaded_tile_ >= next &&
        (stream_tile_ < 0 || cycle >= starts_[stream_tile_] + M)) {
      stream_tile_ = next;
      starts_[next] = cycle;
    }
  }

  bool LoadMayStart() const {
    if (load_tile_ == 0) return true;
    const Cell& corner = cells_[C - 1];  // row 0, last column
    if (double_buffered_) return corner.active_tile == load_tile_ - 1;
    // Without a shadow, wait until the previous tile's last MAC is done.
    return last_mac_tile_ == load_tile_ - 1;
  }

  Status Step(int64_t cycle) {
    next_ = cells_;
    TPUSIM_RETURN_IF_ERROR(ShiftWeights());
    for (int64_t i = 0; i < R; ++i) {
      for (int64_t j = 0; j < C; ++j) TPUSIM_RETURN_IF_ERROR(StepPe(cycle, i, j));
    }
    cells_.swap(next_);
    return Status::Ok();
  }

  // One load step: the rows holding the new tile shift down one, and row 0
  // takes the next weight row (bottom row first).
  Status ShiftWeights() {
    if (!loading_) return Status::Ok();
    const int64_t q = load_step_;
    for (int64_t i = std::min<int64_t>(q, R - 1); i >= 0; --i) {
      for (int64_t j = 0; j < C; ++j) {
        Cell& dst = at(next_, i, j);
        const Cell& up = at(cells_, std::max<int64_t>(i - 1, 0), j);
        float value = i == 0 ? Weight(load_tile_, R - 1 - q, j)
                             : (double_buffered_ ? up.shadow : up.active);
        TPUSIM_RETURN_IF_ERROR(WriteWeight(dst, value));
      }
    }
    if (++load_step_ == R) {
      loading_ = false;
      loaded_tile_ = load_tile_++;
    }
    return Status::Ok();
  }

  Status WriteWeight(Cell& dst, float value) {
    if (double_buffered_) {
      // The shadow may hold only a value of this load or one already swapped in.
      if (dst.shadow_tile >= 0 && dst.shadow_tile != load_tile_ &&
          dst.active_tile < dst.shadow_tile) {
        return Internal("systolic array: shadow weight overwritten before use");
      }
      dst.shadow = value;
      dst.shadow_tile = load_tile_;
    } else {
      dst.active = value;
      dst.active_tile = load_tile_;
    }
    return Status::Ok();
  }

  // The LHS value entering row i this cycle (skewed by i), if any. Tiles
  // start at least M cycles apart, so at most one is entering any row.
  bool Inject(int64_t cycle, int64_t i, float& value, int64_t& tile, int64_t& m) {
    for (int64_t t = stream_tile_; t >= 0 && starts_[t] + M + R > cycle; --t) {
      int64_t mm = cycle - starts_[t] - i;
      if (mm < 0 || mm >= M) continue;
      int64_t k = (t % k_tiles_) * R + i;
      value = k < K ? ToBf16(a_[mm * K + k]) : 0.0f;
      tile = t;
      m = mm;
      return true;
    }
    return false;
  }

  Status StepPe(int64_t cycle, int64_t i, int64_t j) {
    Cell& n = at(next_, i, j);
    float a = 0;
    int64_t tile = -1, m = -1;
    if (j == 0) {
      if (!Inject(cycle, i, a, tile, m)) tile = -1;
    } else {
      const Cell& left = at(cells_, i, j - 1);
      a = left.a, tile = left.a_tile, m = left.a_m;
    }
    n.a = a, n.a_tile = tile, n.a_m = m;
    n.p_tile = -1;
    if (tile < 0) return Status::Ok();
    if (n.active_tile != tile) {
      if (!double_buffered_ || n.shadow_tile != tile) {
        return Internal("systolic array: tile " + std::to_string(tile) +
                        " reached a PE without its weights");
      }
      n.active = n.shadow;  // the swap rides on the tile's first value
      n.active_tile = tile;
    }
    float in = 0;
    if (i > 0) {
      const Cell& up = at(cells_, i - 1, j);
      if (up.p_tile != tile || up.p_m != m) return Internal("systolic array: psum out of step");
      in = up.psum;
    }
    n.psum = in + a * n.active;
    n.p_tile = tile, n.p_m = m;
    if (i == R - 1) Emit(tile, m, j, n.psum);
    return Status::Ok();
  }

  void Emit(int64_t tile, int64_t m, int64_t j, float psum) {
    int64_t n = (tile / k_tiles_) * C + j;
    if (n < N) out_[m * N + n] += psum;
    if (j == C - 1 && m == M - 1) {
      last_mac_tile_ = tile;
      finished_ = tile == tiles_ - 1;
    }
  }

  const int64_t R, C, M, K, N;
  const bool double_buffered_;
  const std::vector<float>& a_;
  const std::vector<float>& b_;
  const int64_t k_tiles_, tiles_;
  std::vector<Cell> cells_, next_;
  std::vector<float> out_;
  std::vector<int64_t> starts_;
  bool loading_ = false;
  int64_t load_step_ = 0, load_tile_ = 0, loaded_tile_ = -1;
  int64_t stream_tile_ = -1, last_mac_tile_ = -1;
  bool finished_ = false;
};

// Output-stationary grid: PE(i, j) accumulates out[m0 + i][n0 + j] while
// LHS values move right and weights move down, both skewed; when the tile's
// last MAC is done, the accumulators shift down and out, one row a cycle.
class OutputStationaryGrid {
 public:
  OutputStationaryGrid(const MxuSpec& mxu, const MatmulDims& d, const std::vector<float>& a,
                       const std::vector<float>& b)
      : R(mxu.rows), C(mxu.cols), M(d.m), K(d.k), N(d.n), a_(a), b_(b),
        n_tiles_(CeilDiv(N, C)), tiles_(CeilDiv(M, R) * n_tiles_),
        cells_(static_cast<size_t>(R) * C), next_(cells_.size()) {
    out_.assign(static_cast<size_t>(M) * N, 0.0f);
  }

  StatusOr<SystolicRun> Run() {
    for (int64_t cycle = 0;; ++cycle) {
      if (draining_ < 0 && start_ < 0) start_ = cycle;  // tile_ begins
      next_ = cells_;
      if (draining_ >= 0) {
        Drain();
      } else {
        for (int64_t i = 0; i < R; ++i) {
          for (int64_t j = 0; j < C; ++j) TPUSIM_RETURN_IF_ERROR(StepPe(cycle, i, j));
        }
      }
      cells_.swap(next_);
      if (tile_ == tiles_) return SystolicRun{cycle + 1, tiles_, std::move(out_)};
    }
  }

 private:
  struct Cell {
    float a = 0, b = 0, acc = 0;
    int64_t a_k = -1, b_k = -1;  // contraction index of the held values
  };

  Cell& at(std::vector<Cell>& g, int64_t i, int64_t j) { return g[i * C + j]; }

  float Lhs(int64_t i, int64_t k) const {
    int64_t m = (tile_ / n_tiles_) * R + i;
    return m < M ? ToBf16(a_[m * K + k]) : 0.0f;
  }
  float Rhs(int64_t k, int64_t j) const {
    int64_t n = (tile_ % n_tiles_) * C + j;
    return n < N ? ToBf16(b_[k * N + n]) : 0.0f;
  }

  Status StepPe(int64_t cycle, int64_t i, int64_t j) {
    Cell& n = at(next_, i, j);
    int64_t ka = j == 0 ? cycle - start_ - i : at(cells_, i, j - 1).a_k;
    int64_t kb = i == 0 ? cycle - start_ - j : at(cells_, i - 1, j).b_k;
    if (ka < 0 || ka >= K) ka = -1;
    if (kb < 0 || kb >= K) kb = -1;
    n.a = ka < 0 ? 0 : (j == 0 ? Lhs(i, ka) : at(cells_, i, j - 1).a);
    n.b = kb < 0 ? 0 : (i == 0 ? Rhs(kb, j) : at(cells_, i - 1, j).b);
    n.a_k = ka, n.b_k = kb;
    if (ka != kb) return Internal("systolic array: operands out of step");
    if (ka < 0) return Status::Ok();
    n.acc = (ka == 0 ? 0.0f : n.acc) + n.a * n.b;
    if (i == R - 1 && j == C - 1 && ka == K - 1) draining_ = 0;
    return Status::Ok();
  }

  // Bottom row leaves the array; every other row moves down one.
  void Drain() {
    int64_t row = (tile_ / n_tiles_) * R + (R - 1 - draining_);
    for (int64_t j = 0; j < C; ++j) {
      int64_t col = (tile_ % n_tiles_) * C + j;
      if (row < M && col < N) out_[row * N + col] = at(cells_, R - 1, j).acc;
      for (int64_t i = R - 1; i > 0; --i) at(next_, i, j).acc = at(cells_, i - 1, j).acc;
      at(next_, 0, j).acc = 0;
      for (int64_t i = 0; i < R; ++i) at(next_, i, j).a_k = at(next_, i, j).b_k = -1;
    }
    if (++draining_ == R) {
      draining_ = -1;
      start_ = -1;
      ++tile_;
    }
  }

  const int64_t R, C, M, K, N;
  const std::vector<float>& a_;
  const std::vector<float>& b_;
  const int64_t n_tiles_, tiles_;
  std::vector<Cell> cells_, next_;
  std::vector<float> out_;
  int64_t tile_ = 0, start_ = -1, draining_ = -1;
};

std::vector<float> Transpose(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> t(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  }
  return t;
}

}  // namespace

StatusOr<SystolicRun> SimulateSystolic(const MxuSpec& mxu, const MatmulDims& dims,
                                       const std::vector<float>& a,
                                       const std::vector<float>& b) {
  if (dims.m < 1 || dims.k < 1 || dims.n < 1 ||
      static_cast<int64_t>(a.size()) != dims.m * dims.k ||
      static_cast<int64_t>(b.size()) != dims.k * dims.n) {
    return InvalidArgument("systolic simulation: operand sizes do not match the dims");
  }
  switch (mxu.dataflow) {
    case Dataflow::kWeightStationary:
      return WeightStationaryGrid(mxu, dims, a, b).Run();
    case Dataflow::kOutputStationary:
      return OutputStationaryGrid(mxu, dims, a, b).Run();
    case Dataflow::kInputStationary: {
      // out^T = b^T a^T on a weight-stationary grid holding a^T.
      std::vector<float> bt = Transpose(b, dims.k, dims.n), at = Transpose(a, dims.m, dims.k);
      MatmulDims td{dims.n, dims.k, dims.m};
      TPUSIM_ASSIGN_OR_RETURN(SystolicRun run, WeightStationaryGrid(mxu, td, bt, at).Run());
      run.out = Transpose(run.out, dims.n, dims.m);
      return run;
    }
  }
  return Internal("unknown dataflow");
}

}  // namespace tpusim::hw
