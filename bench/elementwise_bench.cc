// Elementwise ops through the interpreter against plain C++ loops doing the
// same work, on 16M-element f32 and bf16 tensors. Prints each op's time and
// the ratio tpusim / plain loop (the target is <= 3).
#include <algorithm>
#include <cmath>
#include <cstdio>
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
constexpr int64_t kN = int64_t{1} << 24;
constexpr int kRepeats = 5;

// Best wall time of kRepeats runs of f, in milliseconds.
double BestMs(const std::function<void()>& f) {
  return 1e3 * tpusim::bench::BestSeconds(kRepeats, f);
}

// The plain loops' bf16 helpers: what a hand-written loop would use.
using tpusim::bench::Bf16ToF32;
using tpusim::bench::F32ToBf16;

std::string Program(const std::string& op, const std::string& in, const std::string& out,
                    bool binary) {
  std::string t_in = "tensor<" + std::to_string(kN) + "x" + in + ">";
  std::string t_out = "tensor<" + std::to_string(kN) + "x" + out + ">";
  std::string args = binary ? "%a: " + t_in + ", %b: " + t_in : "%a: " + t_in;
  std::string operands = binary ? "%a, %b" : "%a";
  std::string types =
      (binary ? "(" + t_in + ", " + t_in + ")" : "(" + t_in + ")") + " -> " + t_out;
  return "func.func @main(" + args + ") -> " + t_out + " {\n  %0 = \"stablehlo." + op + "\"(" +
         operands + ") : " + types + "\n  return %0 : " + t_out + "\n}\n";
}

Tensor Random(tpusim::ir::ElementType e, uint32_t seed) {
  Tensor t = Tensor::Allocate(tpusim::ir::Type::Tensor(e, {kN})).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (int64_t i = 0; i < kN; ++i) {
    float v = dist(rng);
    if (e == tpusim::ir::ElementType::kF32) t.mutable_data<float>()[i] = v;
    else t.mutable_data<uint16_t>()[i] = F32ToBf16(v);
  }
  return t;
}

struct Case {
  std::string label, op, in, out;
  bool binary;
  std::function<void(const Tensor&, const Tensor&)> plain;
};

// Runs one case; returns false if the program fails.
bool RunCase(const Case& c, const Tensor& a, const Tensor& b) {
  auto module = tpusim::frontend::ParseStableHlo(Program(c.op, c.in, c.out, c.binary), "bench");
  if (!module.ok()) {
    std::fprintf(stderr, "%s: %s\n", c.label.c_str(), module.status().ToString().c_str());
    return false;
  }
  tpusim::Status st = tpusim::verify::VerifyModule(**module);
  if (!st.ok()) {
    std::fprintf(stderr, "%s: %s\n", c.label.c_str(), st.ToString().c_str());
    return false;
  }
  tpusim::exec::Interpreter interp(**module, {});
  std::vector<Tensor> args = c.binary ? std::vector<Tensor>{a, b} : std::vector<Tensor>{a};
  bool ok = true;
  double sim = BestMs([&] {
    auto r = interp.Run("main", args);
    if (!r.ok()) ok = false;
  });
  if (!ok) {
    std::fprintf(stderr, "%s: run failed\n", c.label.c_str());
    return false;
  }
  double plain = BestMs([&] { c.plain(a, b); });
  std::printf("%-22s tpusim %8.2f ms   plain %8.2f ms   ratio %5.2f\n", c.label.c_str(), sim,
              plain, sim / plain);
  return true;
}

// A plain loop writing a fresh output vector, as the op writes a fresh tensor.
template <class In, class Out, class F>
std::function<void(const Tensor&, const Tensor&)> Loop(F f) {
  return [f](const Tensor& a, const Tensor& b) {
    std::vector<Out> out(kN);
    const In* x = a.data<In>();
    const In* y = b.data<In>();
    for (int64_t i = 0; i < kN; ++i) out[i] = f(x[i], y[i]);
    volatile Out sink = out[kN / 2];
    (void)sink;
  };
}

}  // namespace

int main() {
  using tpusim::ir::ElementType;
  using u16 = uint16_t;
  Tensor fa = Random(ElementType::kF32, 1), fb = Random(ElementType::kF32, 2);
  Tensor ha = Random(ElementType::kBF16, 3), hb = Random(ElementType::kBF16, 4);
  auto add = [](float x, float y) { return x + y; };
  auto mul = [](float x, float y) { return x * y; };
  auto exp = [](float x, float) { return std::exp(x); };
  auto to_bf16 = [](float x, float) { return F32ToBf16(x); };
  auto add16 = [](u16 x, u16 y) { return F32ToBf16(Bf16ToF32(x) + Bf16ToF32(y)); };
  auto mul16 = [](u16 x, u16 y) { return F32ToBf16(Bf16ToF32(x) * Bf16ToF32(y)); };
  auto exp16 = [](u16 x, u16) { return F32ToBf16(std::exp(Bf16ToF32(x))); };
  auto to_f32 = [](u16 x, u16) { return Bf16ToF32(x); };
  const std::vector<Case> f32_cases = {
      {"add f32", "add", "f32", "f32", true, Loop<float, float>(add)},
      {"multiply f32", "multiply", "f32", "f32", true, Loop<float, float>(mul)},
      {"exponential f32", "exponential", "f32", "f32", false, Loop<float, float>(exp)},
      {"convert f32->bf16", "convert", "f32", "bf16", false, Loop<float, u16>(to_bf16)},
  };
  const std::vector<Case> bf16_cases = {
      {"add bf16", "add", "bf16", "bf16", true, Loop<u16, u16>(add16)},
      {"multiply bf16", "multiply", "bf16", "bf16", true, Loop<u16, u16>(mul16)},
      {"exponential bf16", "exponential", "bf16", "bf16", false, Loop<u16, u16>(exp16)},
      {"convert bf16->f32", "convert", "bf16", "f32", false, Loop<u16, float>(to_f32)},
  };
  std::printf("elementwise ops on %lld elements (best of %d)\n", static_cast<long long>(kN),
              kRepeats);
  int failures = 0;
  for (const Case& c : f32_cases) failures += RunCase(c, fa, fb) ? 0 : 1;
  for (const Case& c : bf16_cases) failures += RunCase(c, ha, hb) ? 0 : 1;
  return failures == 0 ? 0 : 1;
}
