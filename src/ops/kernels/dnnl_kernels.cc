#include "ops/kernels/dnnl_kernels.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

namespace tpusim::ops {
namespace {

dnnl::memory::data_type ToDnnl(DnnlType t) {
  return t == DnnlType::kBF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

dnnl::engine& Engine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

struct Compiled {
  dnnl::matmul prim;
  dnnl::memory::desc a, b, dst, scratch;
};

// A primitive splits its work for the threads there are when it is made,
// so the thread count is part of its key.
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, DnnlType, DnnlType, DnnlType,
                       std::array<int64_t, 3>, std::array<int64_t, 3>, bool, int>;

Key KeyOf(const DnnlMatmul& mm) {
  return {mm.batch, mm.m, mm.k, mm.n, mm.a_type, mm.b_type, mm.dst_type,
          mm.a_strides, mm.b_strides, mm.accumulate, omp_get_max_threads()};
}

bool IsDense(const DnnlMatmul& mm) {
  return mm.a_strides == std::array<int64_t, 3>{mm.m * mm.k, mm.k, 1} &&
         mm.b_strides == std::array<int64_t, 3>{mm.k * mm.n, mm.n, 1};
}

// Builds the primitive; a null result means oneDNN has no implementation,
// or only its slow reference one for a strided layout (packing the operands
// densely is then much faster).
std::shared_ptr<const Compiled> Compile(const DnnlMatmul& mm) {
  using dims = dnnl::memory::dims;
  auto c = std::make_shared<Compiled>();
  c->a = dnnl::memory::desc(dims{mm.batch, mm.m, mm.k}, ToDnnl(mm.a_type),
                            dims(mm.a_strides.begin(), mm.a_strides.end()));
  c->b = dnnl::memory::desc(dims{mm.batch, mm.k, mm.n}, ToDnnl(mm.b_type),
                            dims(mm.b_strides.begin(), mm.b_strides.end()));
  c->dst = dnnl::memory::desc(dims{mm.batch, mm.m, mm.n}, ToDnnl(mm.dst_type),
                              dims{mm.m * mm.n, mm.n, 1});
  dnnl::primitive_attr attr;
  // A scratchpad per call (not per primitive) lets threads share primitives.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (mm.accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  try {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(c->a, c->b, c->dst), attr, Engine());
    if (!IsDense(mm) && std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return nullptr;
    c->scratch = pd.scratchpad_desc();
    c->prim = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return c;
}

// Cached compiled primitives; a failed compilation is cached as null too.
std::shared_ptr<const Compiled> Lookup(const DnnlMatmul& mm) {
  static std::mutex mu;
  static auto* cache = new std::map<Key, std::shared_ptr<const Compiled>>();
  Key key = KeyOf(mm);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  // Compile outside the lock: it can take milliseconds. Two threads racing on
  // one new shape both compile; the first insertion wins.
  std::shared_ptr<const Compiled> compiled = Compile(mm);
  std::lock_guard<std::mutex> lock(mu);
  return cache->emplace(key, std::move(compiled)).first->second;
}

// Per-thread scratchpad, grown on demand and 64-byte aligned.
void* Scratch(size_t bytes) {
  struct Buffer {
    void* p = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(p); }
  };
  thread_local Buffer buf;
  if (bytes > buf.size) {
    std::free(buf.p);
    buf.size = (bytes + 63) / 64 * 64;
    buf.p = std::aligned_alloc(64, buf.size);
    if (!buf.p) buf.size = 0;
  }
  return buf.p;
}

// Cached exp primitives, one per length; a failed creation is cached as null.
std::shared_ptr<const dnnl::eltwise_forward> LookupExp(int64_t n) {
  static std::mutex mu;
  static auto* cache = new std::map<int64_t, std::shared_ptr<const dnnl::eltwise_forward>>();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(n);
    if (it != cache->end()) return it->second;
  }
  std::shared_ptr<const dnnl::eltwise_forward> prim;
  try {
    dnnl::memory::desc d(dnnl::memory::dims{n}, dnnl::memory::data_type::f32,
                         dnnl::memory::format_tag::a);
    dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                    dnnl::algorithm::eltwise_exp, d, 0.f, 0.f),
        Engine());
    prim = std::make_shared<const dnnl::eltwise_forward>(pd);
  } catch (const dnnl::error&) {
  }
  std::lock_guard<std::mutex> lock(mu);
  return cache->emplace(n, std::move(prim)).first->second;
}

// A primitive ready to run on this thread: its memory objects made once,
// their buffers swapped in per call.
struct OnThread {
  dnnl::stream stream;
  std::unordered_map<int, dnnl::memory> args;
};

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

Status RunOnThread(const dnnl::primitive& prim, OnThread& ready,
                   std::initializer_list<std::pair<int, const void*>> buffers) {
  try {
    for (const auto& [arg, p] : buffers) ready.args.at(arg).set_data_handle(const_cast<void*>(p));
    prim.execute(ready.stream, ready.args);
    ready.stream.wait();
  } catch (const dnnl::error& e) {
    return Internal(std::string("oneDNN failed: ") + e.what());
  } catch (const std::out_of_range&) {
    return Internal("oneDNN argument missing");
  }
  return Status::Ok();
}

}  // namespace

Status RunDnnlMatmulOnThread(const DnnlMatmul& mm, const void* a, const void* b, void* dst) {
  struct Ready {
    std::shared_ptr<const Compiled> compiled;
    OnThread on;
  };
  thread_local std::map<Key, Ready> ready;
  auto it = ready.find(KeyOf(mm));
  if (it == ready.end()) {
    Ready r{Lookup(mm), {}};
    if (!r.compiled) return Unimplemented("oneDNN has no matmul kernel for this problem");
    const Compiled& c = *r.compiled;
    try {
      r.on.stream = ThreadStream();
      r.on.args = {{DNNL_ARG_SRC, dnnl::memory(c.a, Engine(), DNNL_MEMORY_NONE)},
                   {DNNL_ARG_WEIGHTS, dnnl::memory(c.b, Engine(), DNNL_MEMORY_NONE)},
                   {DNNL_ARG_DST, dnnl::memory(c.dst, Engine(), DNNL_MEMORY_NONE)}};
      const size_t scratch = c.scratch.get_size();
      if (scratch > 0) {
        void* s = Scratch(scratch);
        if (!s) return ResourceExhausted("oneDNN matmul scratchpad allocation failed");
        r.on.args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(c.scratch, Engine(), s));
      }
    } catch (const dnnl::error& e) {
      return Internal(std::string("oneDNN matmul failed: ") + e.what());
    }
    it = ready.emplace(KeyOf(mm), std::move(r)).first;
  }
  Ready& r = it->second;
  auto scratch = r.on.args.find(DNNL_ARG_SCRATCHPAD);
  if (scratch != r.on.args.end()) {
    // The thread's scratchpad may have moved when another problem grew it.
    void* s = Scratch(r.compiled->scratch.get_size());
    if (!s) return ResourceExhausted("oneDNN matmul scratchpad allocation failed");
    scratch->second.set_data_handle(s);
  }
  return RunOnThread(r.compiled->prim, r.on,
                     {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, dst}});
}

Status RunDnnlExp(int64_t n, const float* src, float* dst) {
  if (n == 0) return Status::Ok();
  struct Ready {
    std::shared_ptr<const dnnl::eltwise_forward> prim;
    OnThread on;
  };
  thread_local std::map<int64_t, Ready> ready;
  auto it = ready.find(n);
  if (it == ready.end()) {
    Ready r{LookupExp(n), {}};
    if (!r.prim) return Unimplemented("oneDNN has no exp kernel");
    try {
      const dnnl::memory::desc d(dnnl::memory::dims{n}, dnnl::memory::data_type::f32,
                                 dnnl::memory::format_tag::a);
      r.on.stream = ThreadStream();
      r.on.args = {{DNNL_ARG_SRC, dnnl::memory(d, Engine(), DNNL_MEMORY_NONE)},
                   {DNNL_ARG_DST, dnnl::memory(d, Engine(), DNNL_MEMORY_NONE)}};
    } catch (const dnnl::error& e) {
      return Internal(std::string("oneDNN exp failed: ") + e.what());
    }
    it = ready.emplace(n, std::move(r)).first;
  }
  return RunOnThread(*it->second.prim, it->second.on, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
}


Status RunDnnlMatmul(const DnnlMatmul& mm, const void* a, const void* b, void* dst) {
  std::shared_ptr<const Compiled> c = Lookup(mm);
  if (!c) return Unimplemented("oneDNN has no matmul kernel for this problem");
  try {
    dnnl::stream stream(Engine());
    dnnl::memory am(c->a, Engine(), const_cast<void*>(a));
    dnnl::memory bm(c->b, Engine(), const_cast<void*>(b));
    dnnl::memory dm(c->dst, Engine(), dst);
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, dm}};
    size_t scratch_bytes = c->scratch.get_size();
    if (scratch_bytes > 0) {
      void* s = Scratch(scratch_bytes);
      if (!s) return ResourceExhausted("oneDNN matmul scratchpad allocation failed");
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(c->scratch, Engine(), s));
    }
    c->prim.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& e) {
    return Internal(std::string("oneDNN matmul failed: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace tpusim::ops
