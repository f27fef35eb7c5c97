// Square matmuls through tpusim (a parsed StableHLO dot_general run by the
// interpreter, reference numerics) against the same matmul called directly
// on oneDNN, for f32 and bf16 at 1024^3 and 4096^3. Prints GFLOP/s and the
// ratio tpusim / oneDNN (the target is >= 0.7); TPU-numerics f32 rows (bf16
// MXU passes) are shown for information, against the oneDNN f32 time.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "clock.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/verify/verifier.h"

namespace {

using tpusim::Tensor;
using tpusim::ir::ElementType;

// Best wall time of `repeats` runs of f (after one warm-up), in seconds.
double BestSeconds(int repeats, const std::function<void()>& f) {
  return tpusim::bench::BestSeconds(repeats, f, /*warmups=*/1);
}

Tensor RandomMatrix(ElementType e, int64_t n, uint32_t seed) {
  Tensor t = Tensor::Allocate(tpusim::ir::Type::Tensor(e, {n, n})).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < n * n; ++i) {
    float v = dist(rng);
    if (e == ElementType::kF32) {
      t.mutable_data<float>()[i] = v;
    } else {
      t.mutable_data<uint16_t>()[i] = tpusim::numerics::FloatToBf16(v);
    }
  }
  return t;
}

// Seconds per run of tpusim on `program`'s @main.
double TimeTpusim(int64_t n, ElementType e, tpusim::ops::Numerics numerics, int repeats) {
  const std::string t = "tensor<" + std::to_string(n) + "x" + std::to_string(n) + "x" +
                        std::string(tpusim::ir::ElementTypeName(e)) + ">";
  const std::string text = "func.func @main(%a: " + t + ", %b: " + t + ") -> " + t + " {\n" +
                           "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]"
                           " : (" + t + ", " + t + ") -> " + t + "\n  return %0 : " + t + "\n}\n";
  auto module = tpusim::frontend::ParseStableHlo(text, "bench.mlir");
  if (!module.ok() || !tpusim::verify::VerifyModule(**module).ok()) {
    std::fprintf(stderr, "bench program does not parse or verify\n");
    std::exit(1);
  }
  tpusim::exec::Interpreter interp(**module, {.numerics = numerics});
  std::vector<Tensor> args = {RandomMatrix(e, n, 1), RandomMatrix(e, n, 2)};
  return BestSeconds(repeats, [&] {
    auto r = interp.Run("main", args);
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
      std::exit(1);
    }
  });
}

// Seconds per run of the same matmul on oneDNN directly (dst of the
// operands' type, as the StableHLO program computes).
double TimeDnnl(int64_t n, ElementType e, int repeats) {
  using dt = dnnl::memory::data_type;
  const dt type = e == ElementType::kF32 ? dt::f32 : dt::bf16;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc md({n, n}, type, dnnl::memory::format_tag::ab);
  Tensor a = RandomMatrix(e, n, 1), b = RandomMatrix(e, n, 2), c = RandomMatrix(e, n, 3);
  dnnl::memory am(md, engine, a.mutable_raw()), bm(md, engine, b.mutable_raw()),
      cm(md, engine, c.mutable_raw());
  dnnl::matmul mm(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), engine));
  return BestSeconds(repeats, [&] {
    mm.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream.wait();
  });
}

}  // namespace

int main() {
  std::printf("%-6s %-22s %12s %12s %8s\n", "n", "case", "tpusim GF/s", "oneDNN GF/s", "ratio");
  for (int64_t n : {1024, 4096}) {
    const int repeats = n == 1024 ? 10 : 3;
    const double flops = 2.0 * n * n * n;
    struct Case {
      const char* name;
      ElementType type;
      tpusim::ops::Numerics numerics;
    };
    const Case cases[] = {
        {"f32 reference", ElementType::kF32, tpusim::ops::Numerics::kReference},
        {"bf16 reference", ElementType::kBF16, tpusim::ops::Numerics::kReference},
        {"f32 tpu DEFAULT (info)", ElementType::kF32, tpusim::ops::Numerics::kTpu},
    };
    for (const Case& c : cases) {
      const double ours = TimeTpusim(n, c.type, c.numerics, repeats);
      const double theirs = TimeDnnl(n, c.type, repeats);
      std::printf("%-6lld %-22s %12.1f %12.1f %8.2f\n", static_cast<long long>(n), c.name,
                  flops / ours * 1e-9, flops / theirs * 1e-9, theirs / ours);
      std::fflush(stdout);
    }
  }
  return 0;
}
