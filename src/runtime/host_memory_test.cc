// The host-memory estimate against what the interpreter really holds.
#include "runtime/host_memory.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/tensor/tensor.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::runtime {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

class PeakMemory : public exec::OpObserver {
 public:
  void OnOp(const ir::Operation&, std::span<const Tensor>, std::span<const Tensor>) override {
    peak = std::max(peak, HostMemoryInUse());
  }
  int64_t peak = 0;
};

std::unique_ptr<ir::Module> Parse(const std::string& text) {
  auto module = frontend::ParseStableHlo(text, "host_memory.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  EXPECT_TRUE(verify::VerifyModule(**module).ok());
  return std::move(module).value();
}

// The peak the interpreter reaches running @main on zero-filled arguments,
// above what was in use before.
int64_t MeasuredPeak(const ir::Module& module) {
  const ir::Function& f = *module.Lookup("main");
  std::vector<Tensor> args;
  for (const ir::Type& t : f.type().inputs) args.push_back(Tensor::Allocate(t).value());
  const int64_t before = HostMemoryInUse();
  PeakMemory observer;
  int64_t peak = 0;
  {
    exec::Interpreter interpreter(module, {});
    interpreter.set_observer(&observer);
    auto results = interpreter.Run("main", args);
    EXPECT_TRUE(results.ok()) << results.status().ToString();
    peak = std::max(observer.peak, HostMemoryInUse());
  }
  int64_t arg_bytes = 0;
  for (const Tensor& a : args) arg_bytes += a.size_bytes();
  return peak - before + arg_bytes;
}

// 1 MiB f32 vectors: %a + %a, then four ops of which only two values are
// live at once, then a result that keeps %b.
TEST(HostMemory, FollowsLastUses) {
  auto module = Parse(R"(
func.func @main(%a: tensor<262144xf32>) -> (tensor<262144xf32>, tensor<262144xf32>) {
  %b = stablehlo.add %a, %a : tensor<262144xf32>
  %c = stablehlo.multiply %b, %b : tensor<262144xf32>
  %d = stablehlo.exponential %c : tensor<262144xf32>
  %e = stablehlo.negate %d : tensor<262144xf32>
  return %b, %e : tensor<262144xf32>, tensor<262144xf32>
})");
  ASSERT_NE(module, nullptr);
  HostNeed need = HostPeakBytes(*module, *module->Lookup("main"));
  EXPECT_EQ(need.argument_bytes, 1 * kMiB);
  // %a, %b and two of %c, %d, %e at a time.
  EXPECT_EQ(need.peak_bytes, 4 * kMiB);
  EXPECT_LE(MeasuredPeak(*module), need.peak_bytes);
}

// A loop body's values count while the loop runs, with its carried values.
TEST(HostMemory, CountsNestedRegions) {
  auto module = Parse(R"(
func.func @main(%a: tensor<262144xf32>) -> tensor<262144xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %x = %a) : tensor<i32>, tensor<262144xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      %y = stablehlo.multiply %x, %x : tensor<262144xf32>
      %z = stablehlo.add %y, %x : tensor<262144xf32>
      stablehlo.return %j, %z : tensor<i32>, tensor<262144xf32>
    }
  return %r#1 : tensor<262144xf32>
})");
  ASSERT_NE(module, nullptr);
  HostNeed need = HostPeakBytes(*module, *module->Lookup("main"));
  // %a, the body's %x, %y, %z and the loop's result.
  EXPECT_GE(need.peak_bytes, 5 * kMiB);
  EXPECT_LE(need.peak_bytes, 5 * kMiB + 64);
  EXPECT_LE(MeasuredPeak(*module), need.peak_bytes);
}

TEST(HostMemory, RefusesPastTheLimit) {
  const int64_t saved = HostMemoryLimit();
  SetHostMemoryLimit(HostMemoryInUse() + 10 * kMiB);
  EXPECT_TRUE(CheckHostMemory(5 * kMiB, "x").ok());
  Status st = CheckHostMemory(HostMemoryLimit() + 1, "arguments 3 GiB");
  SetHostMemoryLimit(saved);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("arguments 3 GiB"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace tpusim::runtime
