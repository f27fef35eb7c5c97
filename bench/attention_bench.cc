// Flash attention forward + backward through tpusim (a parsed program of
// tpusim.flash_attention and tpusim.flash_attention_grad run by the
// interpreter, reference numerics) against the same math as plain oneDNN
// primitives on both cores in the same run: batched matmuls over (batch,
// head) with the whole [S, T] probabilities in memory, oneDNN's softmax
// forward and backward. Causal, batch 4, 64-wide heads, sequences of 256
// and 512, 8 and 12 heads. Prints the best of several runs and the ratio
// oneDNN time / tpusim time (above 1: tpusim is faster); TPU-numerics
// times (bf16 MXU operands) for information. Then the kernels alone
// (ops/kernels/attention.h), forward and backward: on one thread in CPU
// time, which a loaded machine's other work does not inflate, and on all.
//
//   build/bench/attention_bench [repeats] [kernels]   (kernels: that part only)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "clock.h"
#include "ops/kernels/attention.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/verify/verifier.h"

namespace {

using tpusim::Tensor;
using tpusim::ir::ElementType;

// Best wall time of `repeats` runs of f (after one warm-up), in seconds;
// with `cpu`, the process's CPU time instead (which a loaded machine's
// other work does not inflate; meaningful for one thread).
double BestSeconds(int repeats, const std::function<void()>& f, bool cpu = false) {
  if (!cpu) return tpusim::bench::BestSeconds(repeats, f, /*warmups=*/1);
  f();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const std::clock_t start = std::clock();
    f();
    best = std::min(best, double(std::clock() - start) / CLOCKS_PER_SEC);
  }
  return best;
}

struct Shape {
  int64_t b, s, h, d;
};

Tensor Random(const tpusim::ir::Shape& shape, uint32_t seed) {
  Tensor t = Tensor::Allocate(tpusim::ir::Type::Tensor(ElementType::kF32, shape)).value();
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0, 1);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = normal(rng);
  return t;
}

std::string Program(const Shape& s) {
  auto dims = [](std::initializer_list<int64_t> d) {
    std::string t = "tensor<";
    for (int64_t x : d) t += std::to_string(x) + "x";
    return t + "f32>";
  };
  const std::string q = dims({s.b, s.s, s.h, s.d}), lse = dims({s.b, s.h, s.s});
  const std::string attrs =
      "{causal = true, scale = " + std::to_string(1 / std::sqrt(double(s.d))) + " : f64}";
  return "func.func @main(%q: " + q + ", %k: " + q + ", %v: " + q + ", %do: " + q + ") -> (" + q +
         ", " + q + ", " + q + ", " + q + ") {\n" +
         "  %o:2 = \"tpusim.flash_attention\"(%q, %k, %v) " + attrs + " : (" + q + ", " + q + ", " +
         q + ") -> (" + q + ", " + lse + ")\n" +
         "  %g:3 = \"tpusim.flash_attention_grad\"(%q, %k, %v, %o#0, %o#1, %do) " + attrs + " : (" +
         q + ", " + q + ", " + q + ", " + q + ", " + lse + ", " + q + ") -> (" + q + ", " + q +
         ", " + q + ")\n" + "  return %o#0, %g#0, %g#1, %g#2 : " + q + ", " + q + ", " + q + ", " +
         q + "\n}\n";
}

double TimeTpusim(const Shape& s, tpusim::ops::Numerics numerics, int repeats) {
  auto module = tpusim::frontend::ParseStableHlo(Program(s), "attention.mlir");
  if (!module.ok() || !tpusim::verify::VerifyModule(**module).ok()) {
    std::fprintf(stderr, "bad program\n");
    std::exit(1);
  }
  const tpusim::ir::Shape shape = {s.b, s.s, s.h, s.d};
  std::vector<Tensor> in = {Random(shape, 1), Random(shape, 2), Random(shape, 3), Random(shape, 4)};
  tpusim::ops::EvalOptions options;
  options.numerics = numerics;
  tpusim::exec::Interpreter run(**module, options);
  return BestSeconds(repeats, [&] {
    auto out = run.Run("main", in);
    if (!out.ok()) {
      std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
      std::exit(1);
    }
  });
}

// Attention as a framework without a fused kernel computes it on oneDNN:
// q, k, v, do in [b, h, s, d]; P = softmax(scale q k^T + mask) kept whole.
class PlainOneDnn {
 public:
  explicit PlainOneDnn(const Shape& s) : s_(s), eng_(dnnl::engine::kind::cpu, 0), stream_(eng_) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const int64_t bh = s.b * s.h;
    const dnnl::memory::dims x = {bh, s.s, s.d}, p = {bh, s.s, s.s}, mask = {1, s.s, s.s};
    x_ = dnnl::memory::desc(x, dt::f32, tag::abc);
    xt_ = dnnl::memory::desc({bh, s.d, s.s}, dt::f32, tag::acb);  // k^T, v^T views
    p_ = dnnl::memory::desc(p, dt::f32, tag::abc);
    pt_ = dnnl::memory::desc(p, dt::f32, tag::acb);  // P^T, dS^T views
    mask_ = dnnl::memory::desc(mask, dt::f32, tag::abc);
    for (auto* buf : {&q_, &k_, &v_, &o_, &do_, &dq_, &dk_, &dv_})
      buf->assign(bh * s.s * s.d, 0.5f);
    for (auto* buf : {&p_buf_, &dp_, &ds_}) buf->assign(bh * s.s * s.s, 0);
    mask_buf_.assign(s.s * s.s, 0);
    for (int64_t i = 0; i < s.s; ++i) {
      for (int64_t j = i + 1; j < s.s; ++j) mask_buf_[i * s.s + j] = -INFINITY;
    }
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0, 1);
    for (auto* buf : {&q_, &k_, &v_, &do_}) {
      for (float& f : *buf) f = normal(rng);
    }
    const float scale = 1 / std::sqrt(float(s.d));
    dnnl::post_ops scaled;
    scaled.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, scale, 0.f);
    dnnl::primitive_attr scaled_attr;
    scaled_attr.set_post_ops(scaled);
    // The mask as its own broadcast add: a matmul with a binary post-op
    // falls to oneDNN's reference loops.
    qk_ = Matmul(x_, xt_, p_, scaled_attr);
    mask_add_ = dnnl::binary(dnnl::binary::primitive_desc(
        dnnl::binary::desc(dnnl::algorithm::binary_add, p_, mask_, p_), eng_));
    pv_ = Matmul(p_, x_, x_, {});
    ptdo_ = Matmul(pt_, x_, x_, {});
    dovt_ = Matmul(x_, xt_, p_, {});
    dsk_ = Matmul(p_, x_, x_, scaled_attr);
    dstq_ = Matmul(pt_, x_, x_, scaled_attr);
    auto sm = dnnl::softmax_forward::primitive_desc(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, p_, 2), eng_);
    softmax_ = dnnl::softmax_forward(sm);
    softmax_back_ = dnnl::softmax_backward(
        dnnl::softmax_backward::primitive_desc(dnnl::softmax_backward::desc(p_, p_, 2), eng_, sm));
  }

  void Step() {
    auto m = [&](const dnnl::memory::desc& d, std::vector<float>& b) {
      return dnnl::memory(d, eng_, b.data());
    };
    qk_.execute(
        stream_,
        {{DNNL_ARG_SRC, m(x_, q_)}, {DNNL_ARG_WEIGHTS, m(xt_, k_)}, {DNNL_ARG_DST, m(p_, p_buf_)}});
    mask_add_.execute(stream_, {{DNNL_ARG_SRC_0, m(p_, p_buf_)},
                                {DNNL_ARG_SRC_1, m(mask_, mask_buf_)},
                                {DNNL_ARG_DST, m(p_, p_buf_)}});
    softmax_.execute(stream_, {{DNNL_ARG_SRC, m(p_, p_buf_)}, {DNNL_ARG_DST, m(p_, p_buf_)}});
    pv_.execute(
        stream_,
        {{DNNL_ARG_SRC, m(p_, p_buf_)}, {DNNL_ARG_WEIGHTS, m(x_, v_)}, {DNNL_ARG_DST, m(x_, o_)}});
    ptdo_.execute(stream_, {{DNNL_ARG_SRC, m(pt_, p_buf_)},
                            {DNNL_ARG_WEIGHTS, m(x_, do_)},
                            {DNNL_ARG_DST, m(x_, dv_)}});
    dovt_.execute(
        stream_,
        {{DNNL_ARG_SRC, m(x_, do_)}, {DNNL_ARG_WEIGHTS, m(xt_, v_)}, {DNNL_ARG_DST, m(p_, dp_)}});
    softmax_back_.execute(stream_, {{DNNL_ARG_DST, m(p_, p_buf_)},
                                    {DNNL_ARG_DIFF_DST, m(p_, dp_)},
                                    {DNNL_ARG_DIFF_SRC, m(p_, ds_)}});
    dsk_.execute(
        stream_,
        {{DNNL_ARG_SRC, m(p_, ds_)}, {DNNL_ARG_WEIGHTS, m(x_, k_)}, {DNNL_ARG_DST, m(x_, dq_)}});
    dstq_.execute(
        stream_,
        {{DNNL_ARG_SRC, m(pt_, ds_)}, {DNNL_ARG_WEIGHTS, m(x_, q_)}, {DNNL_ARG_DST, m(x_, dk_)}});
    stream_.wait();
  }

 private:
  dnnl::matmul Matmul(const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                      const dnnl::memory::desc& c, const dnnl::primitive_attr& attr) {
    return dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, eng_));
  }

  Shape s_;
  dnnl::engine eng_;
  dnnl::stream stream_;
  dnnl::memory::desc x_, xt_, p_, pt_, mask_;
  dnnl::matmul qk_, pv_, ptdo_, dovt_, dsk_, dstq_;
  dnnl::binary mask_add_;
  dnnl::softmax_forward softmax_;
  dnnl::softmax_backward softmax_back_;
  std::vector<float> q_, k_, v_, o_, do_, dq_, dk_, dv_, p_buf_, dp_, ds_, mask_buf_;
};

// The kernels alone (no interpreter): forward and backward seconds.
std::pair<double, double> TimeKernels(const Shape& s, int repeats, int threads) {
  const bool cpu = threads == 1;
  const tpusim::ir::Shape shape = {s.b, s.s, s.h, s.d};
  const Tensor q = Random(shape, 1), k = Random(shape, 2), v = Random(shape, 3),
               dout = Random(shape, 4);
  const tpusim::ops::AttentionDims dims{.batch = s.b,
                                        .q_len = s.s,
                                        .kv_len = s.s,
                                        .heads = s.h,
                                        .kv_heads = s.h,
                                        .head_dim = s.d,
                                        .causal = true,
                                        .scale = 1 / std::sqrt(double(s.d))};
  const tpusim::ops::AttentionNumerics num{.max_threads = threads};
  std::vector<Tensor> fwd;
  const double f = BestSeconds(
      repeats,
      [&] { fwd = tpusim::ops::AttentionForward(dims, num, q, k, v, ElementType::kF32).value(); },
      cpu);
  const double b = BestSeconds(
      repeats,
      [&] { tpusim::ops::AttentionBackward(dims, num, q, k, v, fwd[0], fwd[1], dout).value(); },
      cpu);
  return {f, b};
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 5;
  const bool kernels_only = argc > 2 && std::string(argv[2]) == "kernels";
  std::printf("flash attention fwd+bwd, causal, f32, best of %d (ms)\n", repeats);
  std::printf("%-22s %10s %10s %8s %12s\n", "shape b,s,h,d", "tpusim", "oneDNN", "ratio",
              "tpusim TPU");
  for (const Shape s :
       {Shape{4, 256, 8, 64}, Shape{4, 256, 12, 64}, Shape{4, 512, 8, 64}, Shape{4, 512, 12, 64}}) {
    if (kernels_only) break;
    PlainOneDnn plain(s);
    const double ref = BestSeconds(repeats, [&] { plain.Step(); });
    const double ours = TimeTpusim(s, tpusim::ops::Numerics::kReference, repeats);
    const double tpu = TimeTpusim(s, tpusim::ops::Numerics::kTpu, repeats);
    char name[64];
    std::snprintf(name, sizeof(name), "%lld,%lld,%lld,%lld", (long long)s.b, (long long)s.s,
                  (long long)s.h, (long long)s.d);
    std::printf("%-22s %10.2f %10.2f %8.2f %12.2f\n", name, ours * 1e3, ref * 1e3, ref / ours,
                tpu * 1e3);
  }
  std::printf("ratio = oneDNN time / tpusim time (above 1: tpusim faster)\n\n");
  std::printf("the kernels alone (ms): forward, backward; one thread (CPU time), all (wall)\n");
  for (const Shape s : {Shape{4, 256, 8, 64}, Shape{4, 512, 8, 64}}) {
    auto [f1, b1] = TimeKernels(s, repeats, 1);
    auto [f, b] = TimeKernels(s, repeats, 0);
    std::printf("%lld,%lld,%lld,%lld  %8.2f %8.2f   %8.2f %8.2f\n", (long long)s.b, (long long)s.s,
                (long long)s.h, (long long)s.d, f1 * 1e3, b1 * 1e3, f * 1e3, b * 1e3);
  }
  return 0;
}
