// The blocked attention kernels against attention spelled out in f64: within
// f32 rounding in the reference numerics, within bf16 rounding in the TPU's;
// each query row's results the same bits however the rows are split or
// threaded; odd sizes, grouped kv heads, positions, NaN and unseen rows.
#include "ops/kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  int64_t b = 2, s = 70, t = 70, h = 4, kv = 2, d = 24;
  bool causal = true;
  std::vector<int64_t> pos;  // empty: 0..s-1
  AttentionDims Dims() const {
    return {.batch = b,
            .q_len = s,
            .kv_len = t,
            .heads = h,
            .kv_heads = kv,
            .head_dim = d,
            .causal = causal,
            .scale = 1 / std::sqrt(static_cast<double>(d)),
            .row_pos = pos};
  }
};

Case WithPositions(Case c) {
  if (c.pos.empty()) {
    for (int64_t i = 0; i < c.s; ++i) c.pos.push_back(i + (c.t - c.s));  // the last rows
  }
  return c;
}

Tensor Random(ElementType t, ir::Shape shape, uint32_t seed, double sd = 1.0) {
  Tensor x = *Tensor::Allocate(ir::Type::Tensor(ElementType::kF32, shape));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0, static_cast<float>(sd));
  for (int64_t i = 0; i < x.num_elements(); ++i) x.mutable_data<float>()[i] = normal(rng);
  if (t == ElementType::kF32) return x;
  Tensor y = *Tensor::Allocate(ir::Type::Tensor(t, shape));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    y.mutable_data<uint16_t>()[i] = numerics::FloatToBf16(x.data<float>()[i]);
  }
  return y;
}

double At(const Tensor& t, int64_t i) {
  if (t.element() == ElementType::kBF16) return numerics::Bf16ToFloat(t.data<uint16_t>()[i]);
  return t.data<float>()[i];
}

struct Inputs {
  Tensor q, k, v, dout;
  explicit Inputs(const Case& c, ElementType t = ElementType::kF32, uint32_t seed = 1)
      : q(Random(t, {c.b, c.s, c.h, c.d}, seed)),
        k(Random(t, {c.b, c.t, c.kv, c.d}, seed + 1)),
        v(Random(t, {c.b, c.t, c.kv, c.d}, seed + 2)),
        dout(Random(t, {c.b, c.s, c.h, c.d}, seed + 3)) {}
};

// Attention and its gradients spelled out in f64 (the op's former exact
// evaluation): o, lse, dq, dk, dv as flat arrays.
struct Exact {
  std::vector<double> o, lse, dq, dk, dv;
};

Exact Spelled(const Case& c, const Inputs& in) {
  Exact e;
  e.o.assign(c.b * c.s * c.h * c.d, 0);
  e.dq = e.o;
  e.lse.assign(c.b * c.h * c.s, 0);
  e.dk.assign(c.b * c.t * c.kv * c.d, 0);
  e.dv = e.dk;
  const double scale = 1 / std::sqrt(static_cast<double>(c.d));
  auto qi = [&](int64_t b, int64_t i, int64_t h, int64_t x) {
    return ((b * c.s + i) * c.h + h) * c.d + x;
  };
  auto ki = [&](int64_t b, int64_t j, int64_t g, int64_t x) {
    return ((b * c.t + j) * c.kv + g) * c.d + x;
  };
  std::vector<double> p(c.t);
  for (int64_t b = 0; b < c.b; ++b) {
    for (int64_t h = 0; h < c.h; ++h) {
      const int64_t g = h / (c.h / c.kv);
      for (int64_t i = 0; i < c.s; ++i) {
        const int64_t pos = c.pos.empty() ? i : c.pos[i];
        double top = -kInf;
        for (int64_t j = 0; j < c.t; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x)
            dot += At(in.q, qi(b, i, h, x)) * At(in.k, ki(b, j, g, x));
          p[j] = c.causal && j > pos ? -kInf : scale * dot;
          top = std::max(top, p[j]);
        }
        if (top == -kInf) {
          e.lse[(b * c.h + h) * c.s + i] = -kInf;
          continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < c.t; ++j) sum += std::exp(p[j] - top);
        const double lse = top + std::log(sum);
        e.lse[(b * c.h + h) * c.s + i] = lse;
        for (int64_t j = 0; j < c.t; ++j) p[j] = std::exp(p[j] - lse);
        double delta = 0;
        for (int64_t x = 0; x < c.d; ++x) {
          double o = 0;
          for (int64_t j = 0; j < c.t; ++j) o += p[j] * At(in.v, ki(b, j, g, x));
          e.o[qi(b, i, h, x)] = o;
          delta += o * At(in.dout, qi(b, i, h, x));
        }
        for (int64_t j = 0; j < c.t; ++j) {
          double dp = 0;
          for (int64_t x = 0; x < c.d; ++x)
            dp += At(in.dout, qi(b, i, h, x)) * At(in.v, ki(b, j, g, x));
          const double ds = p[j] * (dp - delta) * scale;
          for (int64_t x = 0; x < c.d; ++x) {
            e.dq[qi(b, i, h, x)] += ds * At(in.k, ki(b, j, g, x));
            e.dk[ki(b, j, g, x)] += ds * At(in.q, qi(b, i, h, x));
            e.dv[ki(b, j, g, x)] += p[j] * At(in.dout, qi(b, i, h, x));
          }
        }
      }
    }
  }
  return e;
}

struct Results {
  std::vector<Tensor> fwd, bwd;  // o, lse; dq, dk, dv
};

Results RunKernels(const Case& c, const Inputs& in, AttentionNumerics num = {}) {
  Results r;
  const AttentionDims dims = c.Dims();
  auto fwd = AttentionForward(dims, num, in.q, in.k, in.v, in.q.element());
  EXPECT_TRUE(fwd.ok()) << fwd.status().ToString();
  if (!fwd.ok()) return r;
  r.fwd = std::move(*fwd);
  auto bwd = AttentionBackward(dims, num, in.q, in.k, in.v, r.fwd[0], r.fwd[1], in.dout);
  EXPECT_TRUE(bwd.ok()) << bwd.status().ToString();
  if (bwd.ok()) r.bwd = std::move(*bwd);
  return r;
}

// |got - want| <= tol * (largest |want| of the array): f32 rounding of sums
// whose terms are about as large as the result's largest element.
void ExpectNear(const Tensor& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size())) << what;
  double largest = 0;
  for (double w : want) {
    if (std::isfinite(w)) largest = std::max(largest, std::abs(w));
  }
  ASSERT_GT(largest, 0) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    const double g = At(got, static_cast<int64_t>(i));
    if (std::isinf(want[i])) {
      EXPECT_EQ(g, want[i]) << what << " [" << i << "]";
      continue;
    }
    if (!(std::abs(g - want[i]) <= tol * largest)) {
      ++bad;
      ADD_FAILURE() << what << " [" << i << "]: " << g << " vs " << want[i] << " (largest "
                    << largest << ")";
    }
  }
}

void ExpectMatches(const Case& c, const Inputs& in, const Results& r, double tol) {
  ASSERT_EQ(r.fwd.size(), 2u);
  ASSERT_EQ(r.bwd.size(), 3u);
  const Exact e = Spelled(c, in);
  ExpectNear(r.fwd[0], e.o, tol, "o");
  ExpectNear(r.fwd[1], e.lse, tol, "lse");
  ExpectNear(r.bwd[0], e.dq, tol, "dq");
  ExpectNear(r.bwd[1], e.dk, tol, "dk");
  ExpectNear(r.bwd[2], e.dv, tol, "dv");
}

// f32 dots over 24..131 terms and a softmax in f32: relative errors of a
// few units in 2^-24 times the terms' count, far below 1e-5.
constexpr double kF32Tol = 1e-5;

TEST(AttentionKernel, CausalGroupedOddSizesMatchTheSpelledOutAttention) {
  Case c;  // 70 rows: a whole block and 6; d = 24; 2 query heads per kv head
  Inputs in(c);
  ExpectMatches(c, in, RunKernels(c, in), kF32Tol);
}

TEST(AttentionKernel, FullAttentionWithMoreKeysThanRows) {
  Case c{.b = 1, .s = 37, .t = 131, .h = 3, .kv = 1, .d = 16, .causal = false};
  Inputs in(c, ElementType::kF32, 5);
  ExpectMatches(c, in, RunKernels(c, in), kF32Tol);
}

TEST(AttentionKernel, CausalRowsAtGivenPositions) {
  // 50 rows that are the last of 150 keys, and rows in a scattered order.
  Case c = WithPositions({.b = 1, .s = 50, .t = 150, .h = 2, .kv = 2, .d = 8});
  Inputs in(c, ElementType::kF32, 9);
  ExpectMatches(c, in, RunKernels(c, in), kF32Tol);
  Case scattered{.b = 1, .s = 5, .t = 150, .h = 2, .kv = 1, .d = 8, .pos = {149, 0, 63, 64, 100}};
  Inputs in2(scattered, ElementType::kF32, 11);
  ExpectMatches(scattered, in2, RunKernels(scattered, in2), kF32Tol);
}

// The portable loops (no oneDNN) compute the same within rounding.
TEST(AttentionKernel, PortableLoopsAgree) {
  Case c{.b = 1, .s = 65, .t = 65, .h = 2, .kv = 1, .d = 5};
  Inputs in(c, ElementType::kF32, 13);
  ExpectMatches(c, in, RunKernels(c, in, {.allow_dnnl = false}), kF32Tol);
  ExpectMatches(c, in, RunKernels(c, in, {.tpu = true, .allow_dnnl = false}), 2e-2);
}

void ExpectSameBits(const Tensor& a, const Tensor& b, const char* what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  const int64_t bytes = a.num_elements() * ir::StorageBytes(a.element());
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), static_cast<size_t>(bytes)), 0) << what;
}

TEST(AttentionKernel, ResultsDoNotDependOnTheThreadCount) {
  for (bool tpu : {false, true}) {
    Case c{.b = 2, .s = 130, .t = 130, .h = 4, .kv = 2, .d = 32};
    Inputs in(c, ElementType::kF32, 17);
    const Results one = RunKernels(c, in, {.tpu = tpu, .max_threads = 1});
    const Results all = RunKernels(c, in, {.tpu = tpu});
    ASSERT_EQ(one.bwd.size(), 3u);
    ASSERT_EQ(all.bwd.size(), 3u);
    for (int i = 0; i < 2; ++i) ExpectSameBits(one.fwd[i], all.fwd[i], "forward");
    for (int i = 0; i < 3; ++i) ExpectSameBits(one.bwd[i], all.bwd[i], "backward");
  }
}

// Rows taken out of a sequence with their positions (as a device holding
// them under context parallelism) get the bits the whole sequence's rows
// get: o, lse and dq. dk and dv are then partial sums (not compared).
TEST(AttentionKernel, EachRowsResultsDoNotDependOnTheOtherRows) {
  for (bool causal : {true, false}) {
    for (bool tpu : {false, true}) {
      SCOPED_TRACE(std::string(causal ? "causal" : "full") + (tpu ? " tpu" : " reference"));
      Case whole{.b = 1, .s = 150, .t = 150, .h = 2, .kv = 1, .d = 16, .causal = causal};
      Inputs in(whole, ElementType::kF32, 19);
      const Results w = RunKernels(whole, in, {.tpu = tpu});
      ASSERT_EQ(w.bwd.size(), 3u);
      const std::vector<int64_t> rows = {149, 3, 64, 65, 0, 100, 127, 128, 7};
      Case part = whole;
      part.s = static_cast<int64_t>(rows.size());
      part.pos = rows;
      Inputs sub(part, ElementType::kF32, 23);
      sub.k = in.k;
      sub.v = in.v;
      const int64_t row_size = whole.h * whole.d;
      for (size_t r = 0; r < rows.size(); ++r) {
        for (int64_t x = 0; x < row_size; ++x) {
          sub.q.mutable_data<float>()[r * row_size + x] =
              in.q.data<float>()[rows[r] * row_size + x];
          sub.dout.mutable_data<float>()[r * row_size + x] =
              in.dout.data<float>()[rows[r] * row_size + x];
        }
      }
      // The part's backward takes the whole run's o and lse rows.
      const AttentionDims dims = part.Dims();
      auto fwd = AttentionForward(dims, {.tpu = tpu}, sub.q, sub.k, sub.v, ElementType::kF32);
      ASSERT_TRUE(fwd.ok()) << fwd.status().ToString();
      auto bwd = AttentionBackward(dims, {.tpu = tpu}, sub.q, sub.k, sub.v, (*fwd)[0], (*fwd)[1],
                                   sub.dout);
      ASSERT_TRUE(bwd.ok()) << bwd.status().ToString();
      for (size_t r = 0; r < rows.size(); ++r) {
        for (int64_t x = 0; x < row_size; ++x) {
          const int64_t wi = rows[r] * row_size + x, pi = static_cast<int64_t>(r) * row_size + x;
          ASSERT_EQ(w.fwd[0].data<float>()[wi], (*fwd)[0].data<float>()[pi]) << "o row " << rows[r];
          ASSERT_EQ(w.bwd[0].data<float>()[wi], (*bwd)[0].data<float>()[pi])
              << "dq row " << rows[r];
        }
        for (int64_t h = 0; h < whole.h; ++h) {
          ASSERT_EQ(w.fwd[1].data<float>()[h * whole.s + rows[r]],
                    (*fwd)[1].data<float>()[h * part.s + static_cast<int64_t>(r)])
              << "lse row " << rows[r];
        }
      }
    }
  }
}

// The TPU's numerics: bf16 operands (one pass at DEFAULT) err by bf16's
// 2^-9; HIGHEST's six passes come back to f32 accuracy.
TEST(AttentionKernel, TpuNumericsRoundTheDotsOperands) {
  Case c{.b = 1, .s = 40, .t = 70, .h = 2, .kv = 2, .d = 16, .causal = false};
  Inputs in(c, ElementType::kF32, 29);
  const Results ref = RunKernels(c, in);
  const Results tpu = RunKernels(c, in, {.tpu = true});
  ExpectMatches(c, in, tpu, 2e-2);
  double diff = 0;
  for (int64_t i = 0; i < ref.fwd[0].num_elements(); ++i) {
    diff =
        std::max(diff, std::abs(double{ref.fwd[0].data<float>()[i]} - tpu.fwd[0].data<float>()[i]));
  }
  EXPECT_GT(diff, 1e-4) << "bf16 operands should show";
  ExpectMatches(c, in,
                RunKernels(c, in, {.tpu = true, .precision = numerics::MatmulPrecision::kHighest}),
                5e-5);
  ExpectMatches(
      c, in, RunKernels(c, in, {.tpu = true, .precision = numerics::MatmulPrecision::kHigh}), 5e-5);
}

// bf16 operands are computed in f32 and each result rounded once.
TEST(AttentionKernel, Bf16OperandsRoundTheirResultsOnce) {
  Case c{.b = 1, .s = 33, .t = 33, .h = 2, .kv = 1, .d = 8};
  Inputs narrow(c, ElementType::kBF16, 31);
  Inputs wide(c, ElementType::kF32, 31);
  for (Tensor* t : {&wide.q, &wide.k, &wide.v, &wide.dout}) {
    const Tensor& from = t == &wide.q   ? narrow.q
                         : t == &wide.k ? narrow.k
                         : t == &wide.v ? narrow.v
                                        : narrow.dout;
    for (int64_t i = 0; i < t->num_elements(); ++i) t->mutable_data<float>()[i] = At(from, i);
  }
  const Results n = RunKernels(c, narrow);
  const Results w = RunKernels(c, wide);
  ASSERT_EQ(n.fwd.size(), 2u);
  ASSERT_EQ(w.fwd.size(), 2u);
  EXPECT_EQ(n.fwd[0].element(), ElementType::kBF16);
  for (int64_t i = 0; i < w.fwd[0].num_elements(); ++i) {
    ASSERT_EQ(n.fwd[0].data<uint16_t>()[i], numerics::FloatToBf16(w.fwd[0].data<float>()[i])) << i;
  }
  ExpectSameBits(n.fwd[1], w.fwd[1], "lse");
  ExpectMatches(c, narrow, n, 1e-2);  // the backward reads the rounded o
}

// A row that sees no key (its position before the first) gets o = 0, lse
// = -inf and no gradient; a NaN in one query row stays in that row.
TEST(AttentionKernel, UnseenRowsAndNaN) {
  Case c{.b = 1, .s = 3, .t = 10, .h = 1, .kv = 1, .d = 4, .pos = {-1, 4, 9}};
  Inputs in(c, ElementType::kF32, 37);
  Results r = RunKernels(c, in);
  ASSERT_EQ(r.bwd.size(), 3u);
  EXPECT_EQ(r.fwd[1].data<float>()[0], -std::numeric_limits<float>::infinity());
  for (int x = 0; x < 4; ++x) {
    EXPECT_EQ(r.fwd[0].data<float>()[x], 0.0f);
    EXPECT_EQ(r.bwd[0].data<float>()[x], 0.0f);
  }
  in.q.mutable_data<float>()[4] = std::numeric_limits<float>::quiet_NaN();  // row 1
  r = RunKernels(c, in);
  ASSERT_EQ(r.bwd.size(), 3u);
  for (int x = 0; x < 4; ++x) {
    EXPECT_TRUE(std::isnan(r.fwd[0].data<float>()[4 + x])) << x;
    EXPECT_FALSE(std::isnan(r.fwd[0].data<float>()[8 + x])) << x;
    EXPECT_FALSE(std::isnan(r.bwd[0].data<float>()[8 + x])) << x;
  }
  EXPECT_TRUE(std::isnan(r.fwd[1].data<float>()[1]));
}

}  // namespace
}  // namespace tpusim::ops
