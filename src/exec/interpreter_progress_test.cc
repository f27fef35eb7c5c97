// The interpreter counts its ops and loop iterations and stops when asked,
// even inside a loop that never ends.
#include <gtest/gtest.h>

#include <thread>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::exec {
namespace {

// A loop of `trips` iterations (-1: endless) adding 1 to a counter.
std::unique_ptr<ir::Module> Loop(int trips) {
  const std::string cond =
      trips < 0 ? "      %t = stablehlo.constant dense<true> : tensor<i1>\n"
                : "      %n = stablehlo.constant dense<" + std::to_string(trips) +
                      "> : tensor<i32>\n"
                      "      %t = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> "
                      "tensor<i1>\n";
  const std::string text =
      "func.func @main(%x: tensor<i32>) -> tensor<i32> {\n"
      "  %r = stablehlo.while(%i = %x) : tensor<i32>\n"
      "    cond {\n" +
      cond +
      "      stablehlo.return %t : tensor<i1>\n"
      "    } do {\n"
      "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "      %j = stablehlo.add %i, %one : tensor<i32>\n"
      "      stablehlo.return %j : tensor<i32>\n"
      "    }\n"
      "  return %r : tensor<i32>\n"
      "}\n";
  auto m = frontend::ParseStableHlo(text, "loop.mlir");
  EXPECT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(verify::VerifyModule(**m).ok());
  return std::move(*m);
}

std::vector<Tensor> Zero() {
  Tensor x = Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kSI32, {})).value();
  *x.mutable_data<int32_t>() = 0;
  return {x};
}

TEST(InterpreterProgress, CountsOpsAndIterations) {
  auto m = Loop(5);
  Progress progress;
  Interpreter interp(*m, {});
  interp.set_progress(&progress);
  auto results = interp.Run("main", Zero());
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ(*(*results)[0].data<int32_t>(), 5);
  // The while, six tests of its condition and five bodies (two ops each).
  EXPECT_EQ(progress.ops.load(), 1 + 6 * 2 + 5 * 2);
  EXPECT_EQ(progress.iteration.load(), 5);  // the sixth began, and ended the loop
  ASSERT_NE(progress.loop.load(), nullptr);
  EXPECT_EQ(progress.loop.load()->name_str(), "stablehlo.while");
}

TEST(InterpreterProgress, StopsAnEndlessLoopWithItsLocation) {
  auto m = Loop(-1);
  Progress progress;
  Interpreter interp(*m, {});
  interp.set_progress(&progress);
  std::thread stopper([&] {
    while (progress.iteration.load() < 1000) std::this_thread::yield();
    progress.stop.store(true);
  });
  Status st = interp.Run("main", Zero()).status();
  stopper.join();
  EXPECT_EQ(st.code(), StatusCode::kCancelled);
  EXPECT_EQ(st.ExitCode(), 130);
  EXPECT_EQ(st.message().rfind("loop.mlir:", 0), 0u) << st.message();
  EXPECT_GE(progress.iteration.load(), 1000);
}

}  // namespace
}  // namespace tpusim::exec
