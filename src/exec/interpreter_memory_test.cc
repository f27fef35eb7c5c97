// The interpreter drops each value after its last use, so a long chain of
// ops holds only a few tensors at a time.
#include <gtest/gtest.h>

#include <algorithm>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::exec {
namespace {

class PeakMemory : public OpObserver {
 public:
  void OnOp(const ir::Operation&, std::span<const Tensor>, std::span<const Tensor>) override {
    peak = std::max(peak, HostMemoryInUse());
  }
  int64_t peak = 0;
};

TEST(InterpreterMemory, ChainHoldsOnlyLiveValues) {
  constexpr int kLinks = 12;
  const std::string t = "tensor<1048576xf32>";  // 4 MiB
  std::string text = "func.func @main() -> " + t + " {\n  %v0 = stablehlo.constant dense<1.0> : " +
                     t + "\n";
  for (int i = 1; i <= kLinks; ++i) {
    std::string prev = "%v" + std::to_string(i - 1);
    text += "  %v" + std::to_string(i) + " = stablehlo.add " + prev + ", " + prev + " : " + t +
            "\n";
  }
  text += "  func.return %v" + std::to_string(kLinks) + " : " + t + "\n}\n";
  auto module = frontend::ParseStableHlo(text, "chain.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ASSERT_TRUE(verify::VerifyModule(**module).ok());

  int64_t before = HostMemoryInUse();
  PeakMemory observer;
  Interpreter interpreter(**module, {});
  interpreter.set_observer(&observer);
  auto results = interpreter.Run("main", {});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].data<float>()[0], 4096.0f);  // 2^12
  // Each add sees its operand and its result; everything older is gone.
  EXPECT_LE(observer.peak - before, 3 * (int64_t{4} << 20));
}

}  // namespace
}  // namespace tpusim::exec
