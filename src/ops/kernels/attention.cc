#include "ops/kernels/attention.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <utility>

#include "ops/kernels/dnnl_kernels.h"
#include "ops/util/parallel.h"
#include "tpusim/numerics/float_arrays.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;
using numerics::MatmulPrecision;

constexpr int64_t kR = kAttentionRows, kK = kAttentionKeys;
constexpr float kInf = std::numeric_limits<float>::infinity();

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ------------------------------------------------------------ block dots

// How the dots round their operands: f32 (parts == 0), or each operand as
// `parts` bf16 planes whose sum approximates it (the TPU's passes).
struct Mode {
  int parts = 0;
  bool allow_dnnl = true;
};

// One operand of a block dot: f32 values, or the first of `parts` bf16
// planes `plane` elements apart.
struct Operand {
  const float* f32 = nullptr;
  const uint16_t* bf16 = nullptr;
  int64_t plane = 0;
};

// A [m, k] x [k, n] product of strided views ({matrix, row, col} strides).
struct DotShape {
  int64_t m, k, n;
  std::array<int64_t, 3> a_strides, b_strides;
};

// The three shapes every call has (d = head_dim): scores and dp
// ([R, d] x [d, K], the right side a transposed [K, d] block), P.V and dS.K
// ([R, K] x [K, d]), and the key gradients P^T.dO and dS^T.Q ([K, R]
// x [R, d], the left side a transposed [R, K] block).
DotShape RowsByKeys(int64_t d) { return {kR, d, kK, {kR * d, d, 1}, {kK * d, 1, d}}; }
DotShape RowsByDim(int64_t d) { return {kR, kK, d, {kR * kK, kK, 1}, {kK * d, d, 1}}; }
DotShape KeysByDim(int64_t d) { return {kK, kR, d, {kR * kK, 1, kK}, {kR * d, d, 1}}; }

// The (lhs part, rhs part) products of the TPU's passes, smallest first, as
// ops/kernels/matmul.cc runs them for 1, 2 (HIGH: 3 passes) and 3 (HIGHEST:
// 6 passes) parts.
std::span<const std::pair<int, int>> Passes(int parts) {
  static constexpr std::pair<int, int> kOne[] = {{0, 0}};
  static constexpr std::pair<int, int> kTwo[] = {{1, 0}, {0, 1}, {0, 0}};
  static constexpr std::pair<int, int> kThree[] = {{2, 0}, {0, 2}, {1, 1}, {1, 0}, {0, 1}, {0, 0}};
  if (parts == 3) return kThree;
  if (parts == 2) return kTwo;
  return kOne;
}

// out (+)= a.b in plain loops, k in order: where oneDNN has no kernel.
void PortableDot(const Mode& mode, const DotShape& s, const Operand& a, const Operand& b,
                 float* out, bool accumulate) {
  auto at = [](const Operand& o, int part, int64_t i) {
    return o.f32 ? o.f32[i] : numerics::Bf16ToFloat(o.bf16[part * o.plane + i]);
  };
  bool first = !accumulate;
  const int parts = std::max(mode.parts, 1);
  for (auto [pa, pb] : Passes(parts)) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        float sum = 0;
        for (int64_t x = 0; x < s.k; ++x) {
          sum += at(a, pa, i * s.a_strides[1] + x * s.a_strides[2]) *
                 at(b, pb, x * s.b_strides[1] + j * s.b_strides[2]);
        }
        out[i * s.n + j] = first ? sum : out[i * s.n + j] + sum;
      }
    }
    first = false;
  }
}

// out = a.b, or out += a.b when `accumulate`.
Status Dot(const Mode& mode, const DotShape& s, const Operand& a, const Operand& b, float* out,
           bool accumulate) {
  if (!mode.allow_dnnl) {
    PortableDot(mode, s, a, b, out, accumulate);
    return Status::Ok();
  }
  DnnlMatmul mm{.m = s.m,
                .k = s.k,
                .n = s.n,
                .a_strides = s.a_strides,
                .b_strides = s.b_strides,
                .accumulate = accumulate};
  Status status;
  if (mode.parts == 0) {
    status = RunDnnlMatmulOnThread(mm, a.f32, b.f32, out);
  } else {
    mm.a_type = mm.b_type = DnnlType::kBF16;
    bool first = true;
    for (auto [pa, pb] : Passes(mode.parts)) {
      mm.accumulate = accumulate || !first;
      status = RunDnnlMatmulOnThread(mm, a.bf16 + pa * a.plane, b.bf16 + pb * b.plane, out);
      if (!status.ok()) break;
      first = false;
    }
  }
  if (status.code() == StatusCode::kUnimplemented) {
    // Nothing was written: the first call is the one that finds no kernel.
    PortableDot(mode, s, a, b, out, accumulate);
    return Status::Ok();
  }
  return status;
}

// p = exp(x) for n values, NaN kept NaN.
Status Exp(const Mode& mode, int64_t n, const float* x, float* p) {
  Status s = mode.allow_dnnl ? RunDnnlExp(n, x, p) : Unimplemented("oneDNN off");
  if (s.code() == StatusCode::kUnimplemented) {
    for (int64_t i = 0; i < n; ++i) p[i] = std::exp(x[i]);
    return Status::Ok();
  }
  TPUSIM_RETURN_IF_ERROR(s);
  for (int64_t i = 0; i < n; ++i) p[i] = x[i] != x[i] ? x[i] : p[i];
  return Status::Ok();
}

// The bf16 parts of n f32 values into `parts` planes `plane` apart.
void SplitParts(int parts, const float* in, int64_t n, uint16_t* out, int64_t plane) {
  if (parts == 1) {
    numerics::TpuFloatToBf16Array(in, out, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    float part[3];
    numerics::SplitBf16(in[i], parts, part);
    for (int p = 0; p < parts; ++p) out[p * plane + i] = numerics::FloatToBf16(part[p]);
  }
}

// ------------------------------------------------------------ operands

// n elements of t from element `at`, as f32.
void LoadF32(const Tensor& t, int64_t at, int64_t n, float* out) {
  switch (t.element()) {
    case ElementType::kBF16:
      numerics::Bf16ToFloatArray(t.data<uint16_t>() + at, out, n);
      return;
    case ElementType::kF16:
      numerics::HalfToFloatArray(t.data<uint16_t>() + at, out, n);
      return;
    default:
      std::memcpy(out, t.data<float>() + at, static_cast<size_t>(n) * sizeof(float));
  }
}

StatusOr<Tensor> Scratch(ElementType t, ir::Shape shape) {
  TPUSIM_RETURN_IF_ERROR(CheckedByteSize(shape, ir::StorageBytes(t)).status());
  return Tensor::AllocateUninitialized(ir::Type::Tensor(t, std::move(shape)));
}

// One head's rows of an op operand ([batch, len, heads, d]) as a dense
// [rows, d] matrix of this thread, zero past the operand's rows: f32, or
// `parts` bf16 planes in the TPU's numerics. Reused from task to task.
class Panel {
 public:
  // Rows [r0, r0 + rows) of head h of batch b.
  void Load(const Mode& mode, const Tensor& t, int64_t b, int64_t len, int64_t heads, int64_t h,
            int64_t r0, int64_t rows, int64_t d) {
    f32_.resize(static_cast<size_t>(rows * d));
    const int64_t have = std::clamp<int64_t>(len - r0, 0, rows);
    for (int64_t r = 0; r < have; ++r) {
      LoadF32(t, ((b * len + r0 + r) * heads + h) * d, d, &f32_[r * d]);
    }
    std::fill(f32_.begin() + have * d, f32_.end(), 0.0f);
    parts_ = mode.parts;
    d_ = d;
    if (parts_ == 0) return;
    plane_ = rows * d;
    bits_.resize(static_cast<size_t>(parts_ * plane_));
    SplitParts(parts_, f32_.data(), plane_, bits_.data(), plane_);
  }
  // Rows from r as a dot operand.
  Operand At(int64_t r) const {
    if (parts_ == 0) return {.f32 = f32_.data() + r * d_};
    return {.bf16 = bits_.data() + r * d_, .plane = plane_};
  }

 private:
  std::vector<float> f32_;
  std::vector<uint16_t> bits_;
  int parts_ = 0;
  int64_t d_ = 0, plane_ = 0;
};

// f32 values into a tensor of `type` (rounded once; the TPU's bf16
// rounding in its numerics).
StatusOr<Tensor> Narrow(Tensor f32, ElementType type, bool tpu) {
  if (type == ElementType::kF32) return f32;
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Scratch(type, f32.shape()));
  const int64_t n = f32.num_elements();
  const float* in = f32.data<float>();
  ParallelFor(n, kParallelElements, [&](int64_t begin, int64_t end) {
    uint16_t* o = out.mutable_data<uint16_t>() + begin;
    if (type == ElementType::kF16) {
      numerics::FloatToHalfArray(in + begin, o, end - begin);
    } else if (tpu) {
      numerics::TpuFloatToBf16Array(in + begin, o, end - begin);
    } else {
      numerics::FloatToBf16Array(in + begin, o, end - begin);
    }
  });
  return out;
}

// ------------------------------------------------------------ row loops

// Row reductions over a block's kK values in 16 lanes, combined in a fixed
// order: vectorized, and the same arithmetic for every row.
constexpr int64_t kLanes = 16;
static_assert(kK % kLanes == 0);

float RowMax(const float* x) {
  float lane[kLanes];
  std::copy_n(x, kLanes, lane);
  for (int64_t j = kLanes; j < kK; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = x[j + l] > lane[l] ? x[j + l] : lane[l];
  }
  for (int64_t w = kLanes / 2; w > 0; w /= 2) {
    for (int64_t l = 0; l < w; ++l) lane[l] = lane[l + w] > lane[l] ? lane[l + w] : lane[l];
  }
  return lane[0];
}

float RowSum(const float* x) {
  float lane[kLanes];
  std::copy_n(x, kLanes, lane);
  for (int64_t j = kLanes; j < kK; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += x[j + l];
  }
  for (int64_t w = kLanes / 2; w > 0; w /= 2) {
    for (int64_t l = 0; l < w; ++l) lane[l] += lane[l + w];
  }
  return lane[0];
}

// x[j] = s[j] * scale - shift for the n keys seen, -inf for the rest.
void Shifted(const float* s, float scale, float shift, int64_t n, float* x) {
  for (int64_t j = 0; j < kK; ++j) x[j] = j < n ? s[j] * scale - shift : -kInf;
}

// ------------------------------------------------------------ the kernel

// Per-thread buffers: panels of q, k, v, do and block scratch.
struct Work {
  Panel q, k, v, dout;
  int64_t kv_loaded = -1;  // the (batch, kv head) k and v hold
  std::vector<float> s = std::vector<float>(kR * kK), x = s, p = s, dp = s;
  std::vector<uint16_t> bits;  // p or ds as bf16 planes
  std::vector<float> tmp, acc, dk, dv;
  float m[kR], l[kR], corr[kR];
  int64_t end[kR];  // each row's visible keys: [0, end)
  Work(int64_t d, int parts)
      : bits(static_cast<size_t>(std::max(parts, 1) * kR * kK)),
        tmp(static_cast<size_t>(kR * d)),
        acc(tmp.size()) {}
};

// While alive, oneDNN's calls from this thread run on it alone (OpenMP's
// thread count for the thread set to 1): a block's dots are microseconds,
// less than waking other threads for them, and the tasks already fill the
// cores (ParallelFor's threads run them; called inline, ParallelFor has
// found the cores busy).
class OneDnnOnThisThread {
 public:
  OneDnnOnThisThread() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneDnnOnThisThread() { omp_set_num_threads(saved_); }
  OneDnnOnThisThread(const OneDnnOnThisThread&) = delete;
  OneDnnOnThisThread& operator=(const OneDnnOnThisThread&) = delete;

 private:
  int saved_;
};

// Runs task(t, work) for t in [0, n) over the cores; the first error.
template <class Task>
Status RunTasks(int64_t n, int64_t dim, int parts, int max_threads, const Task& task) {
  std::mutex mu;
  Status first;
  auto chunk = [&](int64_t begin, int64_t end) {
    OneDnnOnThisThread one;
    Work w(dim, parts);
    for (int64_t t = begin; t < end; ++t) {
      Status s = task(t, w);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first.ok()) first = s;
        return;
      }
    }
  };
  if (max_threads == 1) {
    chunk(0, n);
  } else {
    ParallelFor(n, 1, chunk);
  }
  return first;
}

class Attention {
 public:
  Attention(const AttentionDims& dims, const AttentionNumerics& num, const Tensor& q,
            const Tensor& k, const Tensor& v)
      : d_(dims),
        q_(q),
        k_(k),
        v_(v),
        tpu_(num.tpu),
        max_threads_(num.max_threads),
        scale_(static_cast<float>(dims.scale)),
        group_(dims.heads / dims.kv_heads),
        row_blocks_(CeilDiv(dims.q_len, kR)),
        t_pad_(CeilDiv(dims.kv_len, kK) * kK) {
    mode_.allow_dnnl = num.allow_dnnl;
    if (num.tpu) {
      // f32 operands take the precision's passes; narrower ones are bf16
      // already (or f16, rounded like p), one pass.
      const bool f32 = q.element() == ElementType::kF32 || k.element() == ElementType::kF32;
      mode_.parts = !f32                                         ? 1
                    : num.precision == MatmulPrecision::kHighest ? 3
                    : num.precision == MatmulPrecision::kHigh    ? 2
                                                                 : 1;
    }
  }

  StatusOr<std::vector<Tensor>> Forward(ElementType o_type);
  StatusOr<std::vector<Tensor>> Backward(const Tensor& o, const Tensor& lse, const Tensor& dout);

 private:
  int64_t VisibleEnd(int64_t row) const {
    if (!d_.causal) return d_.kv_len;
    const int64_t pos = d_.row_pos.empty() ? row : d_.row_pos[row];
    return std::clamp<int64_t>(pos + 1, 0, d_.kv_len);
  }
  // Fills w.end for row block rb; returns the number of key blocks any of
  // its rows sees.
  int64_t RowBlock(int64_t rb, Work& w) const {
    int64_t blocks = 0;
    for (int64_t i = 0; i < kR; ++i) {
      const int64_t row = rb * kR + i;
      w.end[i] = row < d_.q_len ? VisibleEnd(row) : 0;
      blocks = std::max(blocks, CeilDiv(w.end[i], kK));
    }
    return blocks;
  }
  // How many keys of block kb row i sees (a prefix of the block).
  static int64_t Seen(const Work& w, int64_t i, int64_t kb) {
    return std::clamp<int64_t>(w.end[i] - kb * kK, 0, kK);
  }
  // Loads the keys and values of kv head g of batch b, unless loaded.
  void LoadKv(int64_t b, int64_t g, Work& w) const {
    const int64_t at = b * d_.kv_heads + g;
    if (w.kv_loaded == at) return;
    w.k.Load(mode_, k_, b, d_.kv_len, d_.kv_heads, g, 0, t_pad_, d_.head_dim);
    w.v.Load(mode_, v_, b, d_.kv_len, d_.kv_heads, g, 0, t_pad_, d_.head_dim);
    w.kv_loaded = at;
  }
  // An f32 block [kR, kK] of this thread as a dot operand (bf16 parts in
  // the TPU's numerics).
  Operand BlockOperand(const float* f, Work& w) const {
    if (mode_.parts == 0) return {.f32 = f};
    SplitParts(mode_.parts, f, kR * kK, w.bits.data(), kR * kK);
    return {.bf16 = w.bits.data(), .plane = kR * kK};
  }

  Status ForwardTask(int64_t b, int64_t h, Work& w, float* o, float* lse) const;
  Status ForwardBlock(int64_t kb, Work& w) const;
  Status BackwardTask(int64_t b, int64_t g, Work& w, const Tensor& dout, const float* delta,
                      const float* lse, float* dq, float* dk, float* dv) const;
  Status BackwardBlock(int64_t kb, const float* lse, const float* delta, Work& w) const;

  const AttentionDims& d_;
  const Tensor &q_, &k_, &v_;
  bool tpu_;
  int max_threads_;
  Mode mode_;
  float scale_;
  int64_t group_, row_blocks_, t_pad_;
};

// One key block of the online softmax: per row a running max m, sum l and
// output acc, rescaled by exp(m_old - m_new) when the max grows. A row that
// sees no key of the block keeps its state exactly.
Status Attention::ForwardBlock(int64_t kb, Work& w) const {
  const int64_t dim = d_.head_dim;
  TPUSIM_RETURN_IF_ERROR(
      Dot(mode_, RowsByKeys(dim), w.q.At(0), w.k.At(kb * kK), w.s.data(), false));
  for (int64_t i = 0; i < kR; ++i) {
    const int64_t n = Seen(w, i, kb);
    float* x = &w.x[i * kK];
    Shifted(&w.s[i * kK], scale_, 0.0f, n, x);
    if (n == 0) {  // p = 0, and the row's state and correction unused below
      w.corr[i] = 0.0f;
      continue;
    }
    const float m = std::max(w.m[i], RowMax(x));
    for (int64_t j = 0; j < kK; ++j) x[j] -= m;
    w.corr[i] = w.m[i] - m;
    w.m[i] = m;
  }
  TPUSIM_RETURN_IF_ERROR(Exp(mode_, kR * kK, w.x.data(), w.p.data()));
  for (int64_t i = 0; i < kR; ++i) w.corr[i] = std::exp(w.corr[i]);
  const Operand p = BlockOperand(w.p.data(), w);
  TPUSIM_RETURN_IF_ERROR(Dot(mode_, RowsByDim(dim), p, w.v.At(kb * kK), w.tmp.data(), false));
  for (int64_t i = 0; i < kR; ++i) {
    if (Seen(w, i, kb) == 0) continue;
    const float c = w.corr[i];
    w.l[i] = w.l[i] * c + RowSum(&w.p[i * kK]);
    float* acc = &w.acc[i * dim];
    const float* pv = &w.tmp[i * dim];
    for (int64_t x = 0; x < dim; ++x) acc[x] = acc[x] * c + pv[x];
  }
  return Status::Ok();
}

// The rows of head h of batch b, block by block.
Status Attention::ForwardTask(int64_t b, int64_t h, Work& w, float* o, float* lse) const {
  const int64_t dim = d_.head_dim;
  LoadKv(b, h / group_, w);
  for (int64_t rb = 0; rb < row_blocks_; ++rb) {
    const int64_t blocks = RowBlock(rb, w);
    w.q.Load(mode_, q_, b, d_.q_len, d_.heads, h, rb * kR, kR, dim);
    std::fill_n(w.m, kR, -kInf);
    std::fill_n(w.l, kR, 0.0f);
    std::fill(w.acc.begin(), w.acc.end(), 0.0f);
    for (int64_t kb = 0; kb < blocks; ++kb) TPUSIM_RETURN_IF_ERROR(ForwardBlock(kb, w));
    for (int64_t i = 0; i < kR && rb * kR + i < d_.q_len; ++i) {
      const int64_t row = rb * kR + i;
      float* out = o + ((b * d_.q_len + row) * d_.heads + h) * dim;
      float& row_lse = lse[(b * d_.heads + h) * d_.q_len + row];
      if (w.end[i] == 0) {
        std::fill_n(out, dim, 0.0f);
        row_lse = -kInf;
        continue;
      }
      for (int64_t x = 0; x < dim; ++x) out[x] = w.acc[i * dim + x] / w.l[i];
      row_lse = w.m[i] + std::log(w.l[i]);
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> Attention::Forward(ElementType o_type) {
  const AttentionDims& d = d_;
  TPUSIM_ASSIGN_OR_RETURN(Tensor o, Scratch(ElementType::kF32, q_.shape()));
  TPUSIM_ASSIGN_OR_RETURN(Tensor lse, Scratch(ElementType::kF32, {d.batch, d.heads, d.q_len}));
  float* op = o.mutable_data<float>();
  float* lp = lse.mutable_data<float>();
  // (batch, head) tasks in that order: a thread's consecutive tasks share
  // their keys and values under grouped kv heads.
  TPUSIM_RETURN_IF_ERROR(RunTasks(
      d.batch * d.heads, d.head_dim, mode_.parts, max_threads_,
      [&](int64_t t, Work& w) { return ForwardTask(t / d.heads, t % d.heads, w, op, lp); }));
  TPUSIM_ASSIGN_OR_RETURN(Tensor narrow, Narrow(std::move(o), o_type, tpu_));
  return std::vector<Tensor>{std::move(narrow), std::move(lse)};
}

// One key block of the gradients: P again from lse, dV += P^T.dO, dP =
// dO.V^T, dS = P * (dP - delta) * scale, dQ += dS.K, dK += dS^T.Q. Rows
// that see no key of the block add nothing to their dq.
Status Attention::BackwardBlock(int64_t kb, const float* lse, const float* delta, Work& w) const {
  const int64_t dim = d_.head_dim;
  const Operand k = w.k.At(kb * kK), v = w.v.At(kb * kK), q = w.q.At(0), dout = w.dout.At(0);
  TPUSIM_RETURN_IF_ERROR(Dot(mode_, RowsByKeys(dim), q, k, w.s.data(), false));
  for (int64_t i = 0; i < kR; ++i) {
    const int64_t n = Seen(w, i, kb);
    Shifted(&w.s[i * kK], scale_, n == 0 ? 0.0f : lse[i], n, &w.x[i * kK]);
  }
  TPUSIM_RETURN_IF_ERROR(Exp(mode_, kR * kK, w.x.data(), w.p.data()));
  const Operand p = BlockOperand(w.p.data(), w);
  TPUSIM_RETURN_IF_ERROR(Dot(mode_, KeysByDim(dim), p, dout, &w.dv[kb * kK * dim], true));
  TPUSIM_RETURN_IF_ERROR(Dot(mode_, RowsByKeys(dim), dout, v, w.dp.data(), false));
  for (int64_t i = 0; i < kR; ++i) {
    const int64_t n = Seen(w, i, kb);
    const float dd = n == 0 ? 0.0f : delta[i];
    const float* pi = &w.p[i * kK];
    const float* dpi = &w.dp[i * kK];
    float* ds = &w.x[i * kK];
    for (int64_t j = 0; j < kK; ++j) ds[j] = j < n ? pi[j] * (dpi[j] - dd) * scale_ : 0.0f;
  }
  const Operand ds = BlockOperand(w.x.data(), w);
  TPUSIM_RETURN_IF_ERROR(Dot(mode_, RowsByDim(dim), ds, k, w.tmp.data(), false));
  for (int64_t i = 0; i < kR; ++i) {
    if (Seen(w, i, kb) == 0) continue;
    float* acc = &w.acc[i * dim];
    const float* t = &w.tmp[i * dim];
    for (int64_t x = 0; x < dim; ++x) acc[x] += t[x];
  }
  return Dot(mode_, KeysByDim(dim), ds, q, &w.dk[kb * kK * dim], true);
}

// A kv head's gradients: its dk and dv sum over the query heads it serves
// and their row blocks, in that order; each row's dq over its key blocks.
Status Attention::BackwardTask(int64_t b, int64_t g, Work& w, const Tensor& dout,
                               const float* delta, const float* lse, float* dq, float* dk,
                               float* dv) const {
  const int64_t dim = d_.head_dim;
  LoadKv(b, g, w);
  w.dk.assign(static_cast<size_t>(t_pad_ * dim), 0.0f);
  w.dv.assign(w.dk.size(), 0.0f);
  for (int64_t h = g * group_; h < (g + 1) * group_; ++h) {
    const int64_t rows = (b * d_.heads + h) * row_blocks_ * kR;  // this head's lse and delta
    for (int64_t rb = 0; rb < row_blocks_; ++rb) {
      const int64_t blocks = RowBlock(rb, w);
      w.q.Load(mode_, q_, b, d_.q_len, d_.heads, h, rb * kR, kR, dim);
      w.dout.Load(mode_, dout, b, d_.q_len, d_.heads, h, rb * kR, kR, dim);
      std::fill(w.acc.begin(), w.acc.end(), 0.0f);
      for (int64_t kb = 0; kb < blocks; ++kb) {
        TPUSIM_RETURN_IF_ERROR(BackwardBlock(kb, lse + rows + rb * kR, delta + rows + rb * kR, w));
      }
      for (int64_t i = 0; i < kR && rb * kR + i < d_.q_len; ++i) {
        const int64_t row = rb * kR + i;
        std::copy_n(&w.acc[i * dim], dim, dq + ((b * d_.q_len + row) * d_.heads + h) * dim);
      }
    }
  }
  for (int64_t j = 0; j < d_.kv_len; ++j) {
    const int64_t at = ((b * d_.kv_len + j) * d_.kv_heads + g) * dim;
    std::copy_n(&w.dk[j * dim], dim, dk + at);
    std::copy_n(&w.dv[j * dim], dim, dv + at);
  }
  return Status::Ok();
}

// delta[row] = sum_x dout[row, x] * o[row, x] in f32, x in order: the
// softmax's gradient term, per (batch, head) matrix of rows, padded with
// zeros to whole row blocks so that the backward's blocks read it whole.
StatusOr<std::vector<float>> RowDots(const AttentionDims& d, const Tensor& dout, const Tensor& o,
                                     int64_t rows) {
  std::vector<float> delta(static_cast<size_t>(d.batch * d.heads * rows), 0.0f);
  ParallelFor(d.batch * d.heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> a(static_cast<size_t>(d.head_dim)), b(a.size());
    for (int64_t mtx = begin; mtx < end; ++mtx) {
      const int64_t bi = mtx / d.heads, h = mtx % d.heads;
      for (int64_t r = 0; r < d.q_len; ++r) {
        const int64_t at = ((bi * d.q_len + r) * d.heads + h) * d.head_dim;
        LoadF32(dout, at, d.head_dim, a.data());
        LoadF32(o, at, d.head_dim, b.data());
        float sum = 0;
        for (int64_t x = 0; x < d.head_dim; ++x) sum += a[x] * b[x];
        delta[mtx * rows + r] = sum;
      }
    }
  });
  return delta;
}

StatusOr<std::vector<Tensor>> Attention::Backward(const Tensor& o, const Tensor& lse,
                                                  const Tensor& dout) {
  const AttentionDims& d = d_;
  // lse and delta per head padded to whole row blocks.
  const int64_t rows = row_blocks_ * kR;
  TPUSIM_ASSIGN_OR_RETURN(std::vector<float> delta, RowDots(d, dout, o, rows));
  std::vector<float> lse_rows(delta.size(), 0.0f);
  for (int64_t mtx = 0; mtx < d.batch * d.heads; ++mtx) {
    std::copy_n(lse.data<float>() + mtx * d.q_len, d.q_len, &lse_rows[mtx * rows]);
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor dq, Scratch(ElementType::kF32, q_.shape()));
  TPUSIM_ASSIGN_OR_RETURN(Tensor dk, Scratch(ElementType::kF32, k_.shape()));
  TPUSIM_ASSIGN_OR_RETURN(Tensor dv, Scratch(ElementType::kF32, v_.shape()));
  float* dqp = dq.mutable_data<float>();
  float* dkp = dk.mutable_data<float>();
  float* dvp = dv.mutable_data<float>();
  TPUSIM_RETURN_IF_ERROR(RunTasks(
      d.batch * d.kv_heads, d.head_dim, mode_.parts, max_threads_, [&](int64_t t, Work& w) {
        const int64_t b = t / d.kv_heads, g = t % d.kv_heads;
        return BackwardTask(b, g, w, dout, delta.data(), lse_rows.data(), dqp, dkp, dvp);
      }));
  std::vector<Tensor> out;
  for (auto [grad, type] :
       {std::pair{&dq, q_.element()}, {&dk, k_.element()}, {&dv, v_.element()}}) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor t, Narrow(std::move(*grad), type, tpu_));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

bool AttentionKernelTakes(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kBF16 || t == ElementType::kF16;
}

StatusOr<std::vector<Tensor>> AttentionForward(const AttentionDims& dims,
                                               const AttentionNumerics& num, const Tensor& q,
                                               const Tensor& k, const Tensor& v,
                                               ElementType o_type) {
  return Attention(dims, num, q, k, v).Forward(o_type);
}

StatusOr<std::vector<Tensor>> AttentionBackward(const AttentionDims& dims,
                                                const AttentionNumerics& num, const Tensor& q,
                                                const Tensor& k, const Tensor& v, const Tensor& o,
                                                const Tensor& lse, const Tensor& dout) {
  return Attention(dims, num, q, k, v).Backward(o, lse, dout);
}

}  // namespace tpusim::ops
