// The interpreter's ops on 16M-element tensors against plain loops doing the
// same work in the same run: elementwise add, multiply and exp, reductions,
// transposes and a broadcast in f32 and bf16, and a while loop that fills a
// stacked buffer one slice per iteration (in place when the loop owns it).
// Prints each case's best time, the bytes it moves per second, and the ratios
// tpusim / plain loop, with the plain loop writing into a buffer it wrote
// before ("plain") and into a new one ("plain+new": the kernel maps and zeroes
// its pages on first touch, as it does for tpusim's fresh results). The plain
// loops use one thread; tpusim every core, so ratios below 1 are possible.
//
//   build/ops_bench            # all cases
//   build/ops_bench transpose  # the cases whose label contains "transpose"
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "clock.h"
#include "plain_bf16.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/verify/verifier.h"

namespace {

using tpusim::Tensor;
using tpusim::ir::ElementType;
using u16 = uint16_t;
constexpr int64_t kSide = 4096;  // 4096 x 4096 = 16M elements
constexpr int64_t kN = kSide * kSide;
constexpr int kRepeats = 5;

double BestSeconds(const std::function<void()>& f) {
  return tpusim::bench::BestSeconds(kRepeats, f);
}

using tpusim::bench::Bf16ToF32;
using tpusim::bench::F32ToBf16;

Tensor Random(ElementType e, const tpusim::ir::Shape& shape, uint32_t seed) {
  Tensor t = Tensor::Allocate(tpusim::ir::Type::Tensor(e, shape)).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    float v = dist(rng);
    if (e == ElementType::kF32)
      t.mutable_data<float>()[i] = v;
    else
      t.mutable_data<u16>()[i] = F32ToBf16(v);
  }
  return t;
}

struct Case {
  std::string label;
  std::string program;               // a module whose @main the case runs
  std::vector<Tensor> args;          // @main's arguments
  double bytes;                      // bytes the work reads and writes
  double out_bytes;                  // bytes of the result
  std::function<void(void*)> plain;  // the work as a plain loop writing its result here
};

// Runs one case; false if its program fails.
bool RunCase(const Case& c) {
  auto module = tpusim::frontend::ParseStableHlo(c.program, "ops_bench");
  tpusim::Status st = module.ok() ? tpusim::verify::VerifyModule(**module) : module.status();
  if (!st.ok()) {
    std::fprintf(stderr, "%s: %s\n", c.label.c_str(), st.ToString().c_str());
    return false;
  }
  tpusim::exec::Interpreter interp(**module, {});
  bool ok = true;
  const double sim = BestSeconds([&] { ok = ok && interp.Run("main", c.args).ok(); });
  if (!ok) {
    std::fprintf(stderr, "%s: run failed\n", c.label.c_str());
    return false;
  }
  // The plain loop into a buffer it has written before, and into a new one
  // (whose pages the kernel maps and zeroes on first touch, as it does for
  // tpusim's fresh results).
  std::vector<uint8_t> warm(static_cast<size_t>(c.out_bytes));
  c.plain(warm.data());
  const double plain = BestSeconds([&] { c.plain(warm.data()); });
  const double fresh = BestSeconds([&] {
    void* out = std::malloc(static_cast<size_t>(c.out_bytes));
    c.plain(out);
    std::free(out);
  });
  std::printf(
      "%-28s tpusim %7.2f ms %5.1f GB/s | plain %7.2f ms %5.1f GB/s ratio %5.2f | "
      "plain+new %7.2f ms ratio %5.2f\n",
      c.label.c_str(), sim * 1e3, c.bytes / sim / 1e9, plain * 1e3, c.bytes / plain / 1e9,
      sim / plain, fresh * 1e3, sim / fresh);
  return true;
}

std::string TypeOf(const std::string& e, const std::vector<int64_t>& shape) {
  std::string s = "tensor<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s + e + ">";
}

// @main applying `op` (with `attrs`) to its arguments.
std::string OneOp(const std::string& op, const std::vector<std::string>& in, const std::string& out,
                  const std::string& attrs = "") {
  std::string params, operands, types;
  for (size_t i = 0; i < in.size(); ++i) {
    params += (i ? ", %a" : "%a") + std::to_string(i) + ": " + in[i];
    operands += (i ? ", %a" : "%a") + std::to_string(i);
    types += (i ? ", " : "") + in[i];
  }
  return "func.func @main(" + params + ") -> " + out + " {\n  %0 = \"stablehlo." + op + "\"(" +
         operands + ") " + attrs + " : (" + types + ") -> " + out + "\n  return %0 : " + out +
         "\n}\n";
}

// A sum over `dims` with an add body.
std::string Reduce(const std::string& e, const std::string& dims) {
  const std::string in = TypeOf(e, {kSide, kSide}), out = TypeOf(e, {kSide});
  const std::string s = TypeOf(e, {});
  return "func.func @main(%a: " + in + ", %z: " + s + ") -> " + out +
         " {\n  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [" +
         dims + "] : (" + in + ", " + s + ") -> " + out + "\n  return %0 : " + out + "\n}\n";
}

// A while loop writing `slices` slices of [rows, cols] f32 into a stacked
// buffer it carries, one per iteration.
std::string FillStack(int64_t slices, int64_t rows, int64_t cols) {
  const std::string stack = TypeOf("f32", {slices, rows, cols});
  const std::string slice = TypeOf("f32", {1, rows, cols});
  const std::string i32 = "tensor<i32>";
  return "func.func @main(%stack: " + stack + ", %x: " + slice + ") -> " + stack + " {\n" +
         "  %zero = stablehlo.constant dense<0> : " + i32 + "\n" +
         "  %r:2 = stablehlo.while(%i = %zero, %s = %stack) : " + i32 + ", " + stack + "\n" +
         "  cond {\n" + "    %n = stablehlo.constant dense<" + std::to_string(slices) +
         "> : " + i32 + "\n" + "    %c = stablehlo.compare LT, %i, %n : (" + i32 + ", " + i32 +
         ") -> tensor<i1>\n" + "    stablehlo.return %c : tensor<i1>\n" + "  } do {\n" +
         "    %z = stablehlo.constant dense<0> : " + i32 + "\n" +
         "    %u = stablehlo.dynamic_update_slice %s, %x, %i, %z, %z : (" + stack + ", " + slice +
         ", " + i32 + ", " + i32 + ", " + i32 + ") -> " + stack + "\n" +
         "    %one = stablehlo.constant dense<1> : " + i32 + "\n" +
         "    %j = stablehlo.add %i, %one : " + i32 + "\n" +
         "    stablehlo.return %j, %u : " + i32 + ", " + stack + "\n" + "  }\n" +
         "  return %r#1 : " + stack + "\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  const Tensor fa = Random(ElementType::kF32, {kSide, kSide}, 1);
  const Tensor fb = Random(ElementType::kF32, {kSide, kSide}, 2);
  const Tensor ha = Random(ElementType::kBF16, {kSide, kSide}, 3);
  const Tensor hb = Random(ElementType::kBF16, {kSide, kSide}, 4);
  const Tensor fz = Random(ElementType::kF32, {}, 5);
  const Tensor hz = Random(ElementType::kBF16, {}, 6);
  const Tensor frow = Random(ElementType::kF32, {kSide}, 7);
  const float* x = fa.data<float>();
  const float* y = fb.data<float>();
  const u16* hx = ha.data<u16>();
  const u16* hy = hb.data<u16>();
  const std::string f2 = TypeOf("f32", {kSide, kSide}), h2 = TypeOf("bf16", {kSide, kSide});
  const double f4 = 4.0 * kN, h2b = 2.0 * kN;  // bytes of one f32 or bf16 tensor
  const double frow_bytes = 4.0 * kSide, hrow_bytes = 2.0 * kSide;
  auto F = [](void* p) { return static_cast<float*>(p); };
  auto H = [](void* p) { return static_cast<u16*>(p); };

  std::vector<Case> cases;
  cases.push_back({"add f32", OneOp("add", {f2, f2}, f2), {fa, fb}, 3 * f4, f4, [&](void* out) {
                     float* o = F(out);
                     for (int64_t i = 0; i < kN; ++i) o[i] = x[i] + y[i];
                   }});
  cases.push_back(
      {"multiply f32", OneOp("multiply", {f2, f2}, f2), {fa, fb}, 3 * f4, f4, [&](void* out) {
         float* o = F(out);
         for (int64_t i = 0; i < kN; ++i) o[i] = x[i] * y[i];
       }});
  cases.push_back(
      {"exponential f32", OneOp("exponential", {f2}, f2), {fa}, 2 * f4, f4, [&](void* out) {
         float* o = F(out);
         for (int64_t i = 0; i < kN; ++i) o[i] = std::exp(x[i]);
       }});
  cases.push_back({"add bf16", OneOp("add", {h2, h2}, h2), {ha, hb}, 3 * h2b, h2b, [&](void* out) {
                     u16* o = H(out);
                     for (int64_t i = 0; i < kN; ++i) {
                       o[i] = F32ToBf16(Bf16ToF32(hx[i]) + Bf16ToF32(hy[i]));
                     }
                   }});
  cases.push_back(
      {"multiply bf16", OneOp("multiply", {h2, h2}, h2), {ha, hb}, 3 * h2b, h2b, [&](void* out) {
         u16* o = H(out);
         for (int64_t i = 0; i < kN; ++i) {
           o[i] = F32ToBf16(Bf16ToF32(hx[i]) * Bf16ToF32(hy[i]));
         }
       }});
  cases.push_back(
      {"exponential bf16", OneOp("exponential", {h2}, h2), {ha}, 2 * h2b, h2b, [&](void* out) {
         u16* o = H(out);
         for (int64_t i = 0; i < kN; ++i) o[i] = F32ToBf16(std::exp(Bf16ToF32(hx[i])));
       }});
  cases.push_back(
      {"reduce f32 rows (dim 1)", Reduce("f32", "1"), {fa, fz}, f4, frow_bytes, [&](void* out) {
         float* o = F(out);
         for (int64_t r = 0; r < kSide; ++r) {
           float acc = fz.data<float>()[0];
           for (int64_t c = 0; c < kSide; ++c) acc += x[r * kSide + c];
           o[r] = acc;
         }
       }});
  cases.push_back(
      {"reduce f32 columns (dim 0)", Reduce("f32", "0"), {fa, fz}, f4, frow_bytes, [&](void* out) {
         float* o = F(out);
         std::fill(o, o + kSide, fz.data<float>()[0]);
         for (int64_t r = 0; r < kSide; ++r) {
           for (int64_t c = 0; c < kSide; ++c) o[c] += x[r * kSide + c];
         }
       }});
  cases.push_back(
      {"reduce bf16 rows (dim 1)", Reduce("bf16", "1"), {ha, hz}, h2b, hrow_bytes, [&](void* out) {
         u16* o = H(out);
         for (int64_t r = 0; r < kSide; ++r) {
           u16 acc = hz.data<u16>()[0];
           for (int64_t c = 0; c < kSide; ++c) {
             acc = F32ToBf16(Bf16ToF32(acc) + Bf16ToF32(hx[r * kSide + c]));
           }
           o[r] = acc;
         }
       }});
  const std::string perm = "{permutation = array<i64: 1, 0>}";
  cases.push_back(
      {"transpose f32", OneOp("transpose", {f2}, f2, perm), {fa}, 2 * f4, f4, [&](void* out) {
         float* o = F(out);
         for (int64_t r = 0; r < kSide; ++r) {
           for (int64_t c = 0; c < kSide; ++c) o[c * kSide + r] = x[r * kSide + c];
         }
       }});
  cases.push_back(
      {"transpose bf16", OneOp("transpose", {h2}, h2, perm), {ha}, 2 * h2b, h2b, [&](void* out) {
         u16* o = H(out);
         for (int64_t r = 0; r < kSide; ++r) {
           for (int64_t c = 0; c < kSide; ++c) o[c * kSide + r] = hx[r * kSide + c];
         }
       }});
  cases.push_back({"broadcast_in_dim f32 (rows)",
                   OneOp("broadcast_in_dim", {TypeOf("f32", {kSide})}, f2,
                         "{broadcast_dimensions = array<i64: 1>}"),
                   {frow},
                   f4,
                   f4,
                   [&](void* out) {
                     for (int64_t r = 0; r < kSide; ++r) {
                       std::memcpy(F(out) + r * kSide, frow.data<float>(), kSide * 4);
                     }
                   }});
  // 64 slices of 1 MiB into a 64 MiB stack: in place, one copy of the stack
  // (the argument stays the caller's) and 64 MiB of slices; a copy of the
  // stack per update would move 4 GiB.
  constexpr int64_t kSlices = 64, kRows = 256, kCols = 1024;
  const Tensor stack = Random(ElementType::kF32, {kSlices, kRows, kCols}, 8);
  const Tensor slice = Random(ElementType::kF32, {1, kRows, kCols}, 9);
  const double stack_bytes = 4.0 * kSlices * kRows * kCols;
  cases.push_back({"while: dynamic_update_slice",
                   FillStack(kSlices, kRows, kCols),
                   {stack, slice},
                   2 * stack_bytes,
                   stack_bytes,
                   [&](void* out) {
                     std::memcpy(out, stack.raw(), stack.size_bytes());
                     for (int64_t s = 0; s < kSlices; ++s) {
                       std::memcpy(F(out) + s * kRows * kCols, slice.raw(), slice.size_bytes());
                     }
                   }});

  std::printf("ops on %lld-element tensors, %d threads (best of %d); plain: one thread\n",
              static_cast<long long>(kN), omp_get_max_threads(), kRepeats);
  int failures = 0;
  for (const Case& c : cases) {
    if (!only.empty() && c.label.find(only) == std::string::npos) continue;
    failures += RunCase(c) ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
