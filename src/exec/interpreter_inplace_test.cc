// The interpreter hands an op the operands it reads last, so that the op can
// write its result into their storage: values stay those of ops that
// allocate, the caller's arguments are never written, and a loop that fills a
// stacked buffer one slice per iteration holds one buffer, not a copy per
// iteration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::exec {
namespace {

using ir::ElementType;

class PeakMemory : public OpObserver {
 public:
  void OnOp(const ir::Operation&, std::span<const Tensor>, std::span<const Tensor>) override {
    peak = std::max(peak, HostMemoryInUse());
  }
  int64_t peak = 0;
};

StatusOr<std::vector<Tensor>> RunText(const std::string& text, const std::vector<Tensor>& args,
                                      OpObserver* observer = nullptr) {
  auto module = frontend::ParseStableHlo(text, "inplace.mlir");
  if (!module.ok()) return module.status();
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(**module));
  Interpreter interpreter(**module, {});
  interpreter.set_observer(observer);
  return interpreter.Run("main", args);
}

Tensor Ramp(ElementType e, int64_t n, float scale) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(e, {n})).value();
  for (int64_t i = 0; i < n; ++i) {
    const float v = std::sin(static_cast<float>(i) * scale) * 3.0f;
    if (e == ElementType::kF32)
      t.mutable_data<float>()[i] = v;
    else
      t.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16);
  }
  return t;
}

// A chain where each op's operand dies at it (written in place), one read
// twice by one op, and one that stays live for a later op.
constexpr char kChain[] = R"(
  func.func @main(%a: tensor<200000xbf16>, %b: tensor<200000xbf16>) -> (tensor<200000xbf16>, tensor<200000xbf16>) {
    %0 = stablehlo.multiply %a, %b : tensor<200000xbf16>
    %1 = stablehlo.exponential %0 : tensor<200000xbf16>
    %2 = stablehlo.add %1, %1 : tensor<200000xbf16>
    %3 = stablehlo.subtract %b, %2 : tensor<200000xbf16>
    %4 = stablehlo.logistic %3 : tensor<200000xbf16>
    %5 = stablehlo.divide %4, %3 : tensor<200000xbf16>
    %6 = stablehlo.maximum %5, %a : tensor<200000xbf16>
    return %6, %1 : tensor<200000xbf16>, tensor<200000xbf16>
  })";

// The same ops one per function call, each on arguments its caller keeps:
// nothing can be reused.
StatusOr<Tensor> Step(const std::string& op, const std::vector<Tensor>& args) {
  const std::string t = "tensor<200000xbf16>";
  std::string params = "%x: " + t, operands = "%x";
  if (args.size() == 2) params += ", %y: " + t, operands += ", %y";
  TPUSIM_ASSIGN_OR_RETURN(
      std::vector<Tensor> r,
      RunText("func.func @main(" + params + ") -> " + t + " {\n  %r = stablehlo." + op + " " +
                  operands + " : " + t + "\n  return %r : " + t + "\n}",
              args));
  return r[0];
}

TEST(InterpreterInPlaceTest, ChainGivesTheValuesOfSeparateOps) {
  const Tensor a = Ramp(ElementType::kBF16, 200000, 0.001f);
  const Tensor b = Ramp(ElementType::kBF16, 200000, 0.0037f);
  const Tensor a_before = a.Clone().value(), b_before = b.Clone().value();
  auto chained = RunText(kChain, {a, b});
  ASSERT_TRUE(chained.ok()) << chained.status().ToString();

  Tensor v0 = Step("multiply", {a, b}).value();
  Tensor v1 = Step("exponential", {v0}).value();
  Tensor v2 = Step("add", {v1, v1}).value();
  Tensor v3 = Step("subtract", {b, v2}).value();
  Tensor v4 = Step("logistic", {v3}).value();
  Tensor v5 = Step("divide", {v4, v3}).value();
  Tensor v6 = Step("maximum", {v5, a}).value();
  EXPECT_TRUE((*chained)[0].BitwiseEquals(v6));
  EXPECT_TRUE((*chained)[1].BitwiseEquals(v1));
  // The caller's arguments are its own.
  EXPECT_TRUE(a.BitwiseEquals(a_before));
  EXPECT_TRUE(b.BitwiseEquals(b_before));
}

// A scan-like loop writing slice i of a 4 MiB stack at iteration i.
constexpr char kFill[] = R"(
  func.func @main(%stack: tensor<16x65536xf32>, %x: tensor<1x65536xf32>) -> tensor<16x65536xf32> {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.while(%i = %zero, %s = %stack) : tensor<i32>, tensor<16x65536xf32>
    cond {
      %n = stablehlo.constant dense<16> : tensor<i32>
      %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
      %fb = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<1x65536xf32>
      %y = stablehlo.add %x, %fb : tensor<1x65536xf32>
      %u = stablehlo.dynamic_update_slice %s, %y, %i, %z : (tensor<16x65536xf32>, tensor<1x65536xf32>, tensor<i32>, tensor<i32>) -> tensor<16x65536xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %u : tensor<i32>, tensor<16x65536xf32>
    }
    return %r#1 : tensor<16x65536xf32>
  })";

TEST(InterpreterInPlaceTest, LoopUpdatesItsStackInPlace) {
  Tensor stack = Tensor::Allocate(ir::Type::Tensor(ElementType::kF32, {16, 65536})).value();
  for (int64_t i = 0; i < stack.num_elements(); ++i) stack.mutable_data<float>()[i] = -1.0f;
  const Tensor x = Ramp(ElementType::kF32, 65536, 0.01f).Reshaped({1, 65536});
  const int64_t before = HostMemoryInUse();
  PeakMemory observer;
  auto r = RunText(kFill, {stack, x}, &observer);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (int64_t s = 0; s < 16; ++s) {
    for (int64_t i = 0; i < 65536; i += 4099) {
      ASSERT_EQ((*r)[0].data<float>()[s * 65536 + i], x.data<float>()[i] + static_cast<float>(s))
          << s << ", " << i;
    }
  }
  EXPECT_EQ(stack.data<float>()[0], -1.0f);  // the argument is the caller's
  // One copy of the stack (the argument stays the caller's) and a few
  // slices; a copy per update would hold two stacks at once.
  EXPECT_LE(observer.peak - before, (int64_t{4} << 20) + 8 * (int64_t{256} << 10));
}

// A value read by an op and by a region nested in it is not handed over, nor
// one an enclosing loop's next iteration reads again.
TEST(InterpreterInPlaceTest, ValuesLiveInRegionsAreNotReused) {
  constexpr char kNested[] = R"(
    func.func @main(%a: tensor<100000xf32>) -> tensor<100000xf32> {
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %e = stablehlo.exponential %a : tensor<100000xf32>
      %r:2 = stablehlo.while(%i = %zero, %s = %e) : tensor<i32>, tensor<100000xf32>
      cond {
        %n = stablehlo.constant dense<3> : tensor<i32>
        %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %t = stablehlo.add %s, %e : tensor<100000xf32>
        %one = stablehlo.constant dense<1> : tensor<i32>
        %j = stablehlo.add %i, %one : tensor<i32>
        stablehlo.return %j, %t : tensor<i32>, tensor<100000xf32>
      }
      return %r#1 : tensor<100000xf32>
    })";
  const Tensor a = Ramp(ElementType::kF32, 100000, 0.001f);
  auto r = RunText(kNested, {a});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (int64_t i = 0; i < 100000; i += 997) {
    const float e = static_cast<float>(std::exp(static_cast<double>(a.data<float>()[i])));
    ASSERT_EQ((*r)[0].data<float>()[i], ((e + e) + e) + e) << i;
  }
}

// Large splat constants and broadcasts of one element that only elementwise
// binary ops and select read are never expanded; the values are the same.
TEST(InterpreterInPlaceTest, SplatsReadByBinaryOpsStayUnexpanded) {
  constexpr char kSplats[] = R"(
    func.func @main(%a: tensor<5000xf32>, %s: tensor<f32>) -> (tensor<5000xf32>, tensor<5000xf32>, tensor<5000xf32>) {
      %two = stablehlo.constant dense<2.0> : tensor<5000xf32>
      %half = stablehlo.constant dense<0.5> : tensor<5000xf32>
      %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<5000xf32>
      %0 = stablehlo.multiply %a, %two : tensor<5000xf32>
      %1 = stablehlo.subtract %b, %0 : tensor<5000xf32>
      %2 = stablehlo.divide %two, %b : tensor<5000xf32>
      %p = stablehlo.compare GT, %1, %half : (tensor<5000xf32>, tensor<5000xf32>) -> tensor<5000xi1>
      %3 = stablehlo.select %p, %b, %1 : tensor<5000xi1>, tensor<5000xf32>
      %4 = stablehlo.add %3, %2 : tensor<5000xf32>
      %5 = stablehlo.exponential %half : tensor<5000xf32>
      %three = stablehlo.constant dense<3.0> : tensor<5000xf32>
      %6 = stablehlo.multiply %three, %4 : tensor<5000xf32>
      return %6, %5, %two : tensor<5000xf32>, tensor<5000xf32>, tensor<5000xf32>
    })";
  const Tensor a = Ramp(ElementType::kF32, 5000, 0.01f);
  Tensor s = Tensor::Allocate(ir::Type::Tensor(ElementType::kF32, {})).value();
  s.mutable_data<float>()[0] = 1.25f;
  auto r = RunText(kSplats, {a, s});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const float e = static_cast<float>(std::exp(0.5));
  for (int64_t i = 0; i < 5000; ++i) {
    const float v1 = 1.25f - a.data<float>()[i] * 2.0f;
    const float v3 = v1 > 0.5f ? 1.25f : v1;
    ASSERT_EQ((*r)[0].data<float>()[i], 3.0f * (v3 + 2.0f / 1.25f)) << i;
    ASSERT_EQ((*r)[1].data<float>()[i], e) << i;
    ASSERT_EQ((*r)[2].data<float>()[i], 2.0f) << i;
  }
}

}  // namespace
}  // namespace tpusim::exec
