#include "testing/test_util.h"
#include "tpusim/compiler/buffer_assignment.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/best_fit_heap.h"
#include "tpusim/base/bytes.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/printer.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::compiler {
namespace {

using test::ParseVerified;
using test::V5e;

// f32[8,128] fills one (8,128) tile exactly: 4 KiB.
constexpr int64_t kTile = 4096;

// The plan of @main, or a default plan after a test failure.
MemoryPlan PlanMain(std::string_view text) {
  std::unique_ptr<ir::Module> module = ParseVerified(text);
  if (module == nullptr) return {};
  StatusOr<MemoryPlan> plan = PlanMemory(*module, *module->Lookup("main"), V5e());
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? *plan : MemoryPlan{};
}

// a -> b -> c -> d -> e, each one exponential of the last.
constexpr std::string_view kChain = R"(
func.func @main(%a: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %b = stablehlo.exponential %a : tensor<8x128xf32>
  %c = stablehlo.exponential %b : tensor<8x128xf32>
  %d = stablehlo.exponential %c : tensor<8x128xf32>
  %e = stablehlo.exponential %d : tensor<8x128xf32>
  func.return %e : tensor<8x128xf32>
})";

TEST(BufferAssignment, ChainReusesDeadBuffers) {
  MemoryPlan plan = PlanMain(kChain);
  // At most an op's operand, its result and the argument are live at once;
  // d takes b's place and e grows the heap back where c was.
  EXPECT_EQ(plan.peak_bytes, 3 * kTile);
  EXPECT_EQ(plan.max_live_bytes, 3 * kTile);
  EXPECT_EQ(plan.sum_of_buffers, 5 * kTile);
  EXPECT_EQ(plan.num_buffers, 5);
  EXPECT_EQ(plan.argument_bytes, kTile);
  EXPECT_EQ(plan.temp_bytes, 2 * kTile);
  EXPECT_EQ(plan.result_bytes, 0);
  EXPECT_EQ(plan.fragmentation_bytes, 0);
  EXPECT_EQ(plan.peak_at, "stablehlo.exponential %c at test.mlir:4:3");
  EXPECT_EQ(plan.function, "main");
  EXPECT_EQ(plan.capacity_bytes, V5e().memory.hbm_bytes);
}

TEST(BufferAssignment, LiveBytesFollowProgramOrder) {
  // Before the first op only %a; each exponential adds its result while its
  // operand is live; the return keeps %a and the result %e.
  MemoryPlan plan = PlanMain(kChain);
  EXPECT_EQ(plan.live_bytes, (std::vector<int64_t>{kTile, 2 * kTile, 3 * kTile, 3 * kTile,
                                                    3 * kTile, 2 * kTile}));
  EXPECT_EQ(plan.peak_index, 2);  // at %c, the op peak_at names
}

TEST(BufferAssignment, ArgumentsAndResultsLiveAllProgram) {
  // %b is returned, so it outlives its last use; %unused is never read.
  MemoryPlan plan = PlanMain(R"(
func.func @main(%a: tensor<8x128xf32>, %unused: tensor<8x128xf32>)
    -> (tensor<8x128xf32>, tensor<8x128xf32>) {
  %b = stablehlo.exponential %a : tensor<8x128xf32>
  %c = stablehlo.exponential %b : tensor<8x128xf32>
  %d = stablehlo.exponential %c : tensor<8x128xf32>
  func.return %b, %d : tensor<8x128xf32>, tensor<8x128xf32>
})");
  EXPECT_EQ(plan.peak_bytes, 5 * kTile);
  EXPECT_EQ(plan.argument_bytes, 2 * kTile);
  EXPECT_EQ(plan.result_bytes, 2 * kTile);
  EXPECT_EQ(plan.temp_bytes, kTile);
  ASSERT_EQ(plan.live_at_peak.size(), 5u);
  EXPECT_EQ(plan.live_at_peak[0].value, "%a");  // as the program names it
  EXPECT_EQ(plan.live_at_peak[0].op, "parameter 0");
  EXPECT_EQ(plan.live_at_peak[0].kind, BufferKind::kArgument);
}

// jax.jit(f, donate_argnums=0): the update is written into %p's buffer.
TEST(BufferAssignment, DonatedArgumentsHoldTheirResults) {
  MemoryPlan donated = PlanMain(R"(
func.func @main(%p: tensor<8x128xf32> {tf.aliasing_output = 0 : i32}, %g: tensor<8x128xf32>)
    -> tensor<8x128xf32> {
  %q = stablehlo.subtract %p, %g : tensor<8x128xf32>
  func.return %q : tensor<8x128xf32>
})");
  EXPECT_EQ(donated.argument_bytes, 2 * kTile);
  EXPECT_EQ(donated.result_bytes, 0);
  EXPECT_EQ(donated.peak_bytes, 2 * kTile);
}

TEST(BufferAssignment, ReturningAnArgumentAddsNothing) {
  MemoryPlan plan = PlanMain(R"(
func.func @main(%a: tensor<8x128xf32>) -> tensor<8x128xf32> {
  func.return %a : tensor<8x128xf32>
})");
  EXPECT_EQ(plan.peak_bytes, kTile);
  EXPECT_EQ(plan.argument_bytes, kTile);
  EXPECT_EQ(plan.result_bytes, 0);
  EXPECT_EQ(plan.peak_at, "the start of @main");
}

constexpr std::string_view kAliases = R"(
func.func @main(%a: tensor<8x128xf32>) -> tensor<1x8x128xf32> {
  %b = stablehlo.exponential %a : tensor<8x128xf32>
  %t = "stablehlo.tuple"(%a, %b) : (tensor<8x128xf32>, tensor<8x128xf32>)
      -> tuple<tensor<8x128xf32>, tensor<8x128xf32>>
  %g = "stablehlo.get_tuple_element"(%t) {index = 1 : i32}
      : (tuple<tensor<8x128xf32>, tensor<8x128xf32>>) -> tensor<8x128xf32>
  %o = "stablehlo.optimization_barrier"(%g) : (tensor<8x128xf32>) -> tensor<8x128xf32>
  %r = stablehlo.reshape %o : (tensor<8x128xf32>) -> tensor<1x8x128xf32>
  func.return %r : tensor<1x8x128xf32>
})";

TEST(BufferAssignment, AliasingOpsTakeNoMemory) {
  // tuple, get_tuple_element, optimization_barrier and a reshape that keeps
  // the tiles all name %b's buffer, which is therefore the result.
  MemoryPlan plan = PlanMain(kAliases);
  EXPECT_EQ(plan.peak_bytes, 2 * kTile);
  EXPECT_EQ(plan.sum_of_buffers, 2 * kTile);
  EXPECT_EQ(plan.num_buffers, 2);
  EXPECT_EQ(plan.result_bytes, kTile);
}

TEST(BufferAssignment, PaddedSizes) {
  // f32[3] pads to a 128-element row (512 B); bf16[9,130] to (16,256) tiles
  // (8 KiB); an f32 scalar takes a full row (512 B). The splat %c is a
  // broadcast's temporary, as XLA computes it.
  MemoryPlan plan = PlanMain(R"(
func.func @main(%a: tensor<3xf32>, %s: tensor<f32>) -> tensor<9x130xbf16> {
  %b = stablehlo.exponential %a : tensor<3xf32>
  %c = stablehlo.constant dense<1.0> : tensor<9x130xbf16>
  %d = stablehlo.add %c, %c : tensor<9x130xbf16>
  func.return %d : tensor<9x130xbf16>
})");
  EXPECT_EQ(plan.argument_bytes, 512 + 512);
  EXPECT_EQ(plan.constant_bytes, 0);
  EXPECT_EQ(plan.temp_bytes, 8192);
  EXPECT_EQ(plan.result_bytes, 8192);
  // %b dies at once at the top of the heap, which shrinks back for %d.
  EXPECT_EQ(plan.peak_bytes, 1024 + 8192 + 8192);
  EXPECT_EQ(plan.sum_of_buffers, 1024 + 512 + 8192 + 8192);
}

TEST(BufferAssignment, LargestFirstAvoidsTheHoleOfProgramOrder) {
  // In program order %c frees %b's 4 KiB, too small for %d, which grows the
  // heap to 20 KiB; placing %d first puts %b and %c around it in 16 KiB.
  MemoryPlan plan = PlanMain(R"(
func.func @main(%a: tensor<8x128xf32>) -> tensor<16x128xf32> {
  %b = stablehlo.exponential %a : tensor<8x128xf32>
  %c = stablehlo.exponential %b : tensor<8x128xf32>
  %d = "stablehlo.concatenate"(%c, %c) {dimension = 0 : i64}
      : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<16x128xf32>
  func.return %d : tensor<16x128xf32>
})");
  EXPECT_EQ(plan.peak_bytes, 4 * kTile);
  EXPECT_EQ(plan.max_live_bytes, 4 * kTile);
  EXPECT_EQ(plan.fragmentation_bytes, 0);
  EXPECT_EQ(plan.result_bytes, 2 * kTile);
}

constexpr std::string_view kWhile = R"(
func.func @main(%a: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %w = "stablehlo.while"(%a) ({
    ^bb0(%i: tensor<8x128xf32>):
      %p = stablehlo.constant dense<false> : tensor<i1>
      stablehlo.return %p : tensor<i1>
  }, {
    ^bb0(%i: tensor<8x128xf32>):
      %x = stablehlo.exponential %i : tensor<8x128xf32>
      %y = stablehlo.exponential %x : tensor<8x128xf32>
      stablehlo.return %y : tensor<8x128xf32>
  }) : (tensor<8x128xf32>) -> tensor<8x128xf32>
  func.return %w : tensor<8x128xf32>
})";

TEST(BufferAssignment, WhileBodyTemporariesCountAtTheLoop) {
  // The loop state %w is the while's result; the body's %x is a temporary
  // while the loop runs, and %y, which the body returns, is stored in %w.
  MemoryPlan plan = PlanMain(kWhile);
  // An i1 scalar is one row of an (32,128) 8-bit tile: 128 B.
  EXPECT_EQ(plan.peak_bytes, 3 * kTile + 128);
  EXPECT_EQ(plan.argument_bytes, kTile);
  EXPECT_EQ(plan.result_bytes, kTile);
  EXPECT_EQ(plan.constant_bytes, 128);
  EXPECT_EQ(plan.temp_bytes, kTile);
  EXPECT_EQ(plan.sum_of_buffers, 3 * kTile + 128);
  EXPECT_EQ(plan.num_buffers, 4);
  ASSERT_EQ(plan.live_at_peak.size(), 4u);
  EXPECT_EQ(plan.live_at_peak[2].value, "%x");  // the body's
  EXPECT_EQ(plan.live_at_peak[2].op, "stablehlo.exponential at test.mlir:9:7");
  EXPECT_EQ(plan.live_at_peak[3].kind, BufferKind::kConstant);
}

// A scan's stacked outputs: a zero-filled state the loop writes in place.
TEST(BufferAssignment, LoopsUpdateTheirStateInPlace) {
  constexpr std::string_view kScan = R"(
func.func @main(%a: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<8x128xf32>
  %w = "stablehlo.while"(%z) ({
    ^bb0(%i: tensor<8x128xf32>):
      %p = stablehlo.constant dense<false> : tensor<i1>
      stablehlo.return %p : tensor<i1>
  }, {
    ^bb0(%i: tensor<8x128xf32>):
      %y = stablehlo.add %i, %a : tensor<8x128xf32>
      stablehlo.return %y : tensor<8x128xf32>
  }) : (tensor<8x128xf32>) -> tensor<8x128xf32>
  %r = stablehlo.add %w, %USE : tensor<8x128xf32>
  func.return %r : tensor<8x128xf32>
})";
  auto scan = [&](const char* use) {
    std::string text(kScan);
    text.replace(text.find("%USE"), 4, use);
    return PlanMain(text);
  };
  // %a, %z = %w (one buffer), %r; the body's %y is stored in %w.
  MemoryPlan in_place = scan("%a");
  EXPECT_EQ(in_place.constant_bytes, 128);  // the predicate alone
  EXPECT_EQ(in_place.peak_bytes, 3 * kTile + 128);
  // %z read after the loop: the loop's state needs a buffer of its own.
  MemoryPlan copied = scan("%z");
  EXPECT_EQ(copied.peak_bytes, 4 * kTile + 128);
}

// Weights a loop carries and returns unchanged (a decode or layer loop's)
// stay in their argument's buffer: counted once, even when read after the
// loop.
TEST(BufferAssignment, StateALoopPassesThroughIsNotCopied) {
  MemoryPlan plan = PlanMain(R"(
func.func @main(%w: tensor<8x128xf32>, %x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %r:2 = "stablehlo.while"(%w, %x) ({
    ^bb0(%a: tensor<8x128xf32>, %b: tensor<8x128xf32>):
      %p = stablehlo.constant dense<false> : tensor<i1>
      stablehlo.return %p : tensor<i1>
  }, {
    ^bb0(%a: tensor<8x128xf32>, %b: tensor<8x128xf32>):
      %y = stablehlo.add %a, %b : tensor<8x128xf32>
      stablehlo.return %a, %y : tensor<8x128xf32>, tensor<8x128xf32>
  }) : (tensor<8x128xf32>, tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<8x128xf32>)
  %s = stablehlo.add %r#0, %w : tensor<8x128xf32>
  %t = stablehlo.add %s, %r#1 : tensor<8x128xf32>
  func.return %t : tensor<8x128xf32>
})");
  // %w and %x (arguments), the loop's %b state (%x is read-only, so a new
  // buffer), %s and %t; no second copy of %w.
  EXPECT_EQ(plan.argument_bytes, 2 * kTile);
  EXPECT_EQ(plan.sum_of_buffers, 5 * kTile + 128);
  EXPECT_EQ(plan.num_buffers, 6);
}

// A forward loop stacks each layer's value, a backward loop reads them back;
// `to_host` and `to_device` are how %y and %r move (or not), up to the type.
std::string Stacking(const std::string& to_host, const std::string& to_device) {
  std::string text = R"(
func.func @main(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<4x8x128xf32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %f:3 = "stablehlo.while"(%i0, %x, %z) ({
    ^bb0(%i: tensor<i32>, %h: tensor<8x128xf32>, %s: tensor<4x8x128xf32>):
      %n = stablehlo.constant dense<4> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
  }, {
    ^bb0(%i: tensor<i32>, %h: tensor<8x128xf32>, %s: tensor<4x8x128xf32>):
      %y = stablehlo.exponential %h : tensor<8x128xf32>
      %m = TO_HOST tensor<8x128xf32>
      %r = stablehlo.reshape %m : (tensor<8x128xf32>) -> tensor<1x8x128xf32>
      %c0 = stablehlo.constant dense<0> : tensor<i32>
      %u = stablehlo.dynamic_update_slice %s, %r, %i, %c0, %c0 : (tensor<4x8x128xf32>, tensor<1x8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x8x128xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %y, %u : tensor<i32>, tensor<8x128xf32>, tensor<4x8x128xf32>
  }) : (tensor<i32>, tensor<8x128xf32>, tensor<4x8x128xf32>) -> (tensor<i32>, tensor<8x128xf32>, tensor<4x8x128xf32>)
  %b:3 = "stablehlo.while"(%i0, %f#1, %f#2) ({
    ^bb0(%i: tensor<i32>, %h: tensor<8x128xf32>, %s: tensor<4x8x128xf32>):
      %n = stablehlo.constant dense<4> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
  }, {
    ^bb0(%i: tensor<i32>, %h: tensor<8x128xf32>, %s: tensor<4x8x128xf32>):
      %c0 = stablehlo.constant dense<0> : tensor<i32>
      %d = stablehlo.dynamic_slice %s, %i, %c0, %c0, sizes = [1, 8, 128] : (tensor<4x8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x128xf32>
      %r = stablehlo.reshape %d : (tensor<1x8x128xf32>) -> tensor<8x128xf32>
      %m = TO_DEVICE tensor<8x128xf32>
      %g = stablehlo.add %h, %m : tensor<8x128xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %g, %s : tensor<i32>, tensor<8x128xf32>, tensor<4x8x128xf32>
  }) : (tensor<i32>, tensor<8x128xf32>, tensor<4x8x128xf32>) -> (tensor<i32>, tensor<8x128xf32>, tensor<4x8x128xf32>)
  func.return %b#1 : tensor<8x128xf32>
})";
  for (const auto& [macro, with] : {std::pair{"TO_HOST", to_host}, {"TO_DEVICE", to_device}}) {
    const size_t at = text.find(macro);
    text.replace(at, std::string(macro).size(), with);
  }
  return text;
}

std::string Move(const std::string& value, const std::string& space) {
  return "stablehlo.custom_call @annotate_device_placement(" + value +
         ") {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = \"" +
         space + "\"}} : (tensor<8x128xf32>) ->";
}

// Offloaded, the stack lives in host memory, zeros and updates alike, and
// the plan counts its bytes there instead of in HBM.
TEST(BufferAssignment, AnOffloadedStackIsInHostMemoryNotHbm) {
  const std::string host = Stacking(Move("%y", "pinned_host"), Move("%r", "device"));
  const std::string hbm = Stacking("stablehlo.negate %y :", "stablehlo.negate %r :");
  MemoryPlan offloaded = PlanMain(host), kept = PlanMain(hbm);
  EXPECT_EQ(offloaded.host_bytes, 4 * kTile);
  EXPECT_EQ(kept.host_bytes, 0);
  // The stack, and the layer the backward loop slices: read from the host.
  EXPECT_EQ(kept.peak_bytes - offloaded.peak_bytes, 5 * kTile);
}

TEST(BufferAssignment, ValuesUsedInABodyLiveThroughTheLoop) {
  // %k's only use is inside the body, so it is live while the loop runs.
  MemoryPlan plan = PlanMain(R"(
func.func @main(%a: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %k = stablehlo.exponential %a : tensor<8x128xf32>
  %p = stablehlo.constant dense<true> : tensor<i1>
  %r = "stablehlo.if"(%p) ({
      %x = stablehlo.add %k, %k : tensor<8x128xf32>
      stablehlo.return %x : tensor<8x128xf32>
  }, {
      stablehlo.return %a : tensor<8x128xf32>
  }) : (tensor<i1>) -> tensor<8x128xf32>
  func.return %r : tensor<8x128xf32>
})");
  // %a, %p, %k and %r; the branches' returned values are %r itself.
  EXPECT_EQ(plan.peak_bytes, 3 * kTile + 128);
  EXPECT_EQ(plan.temp_bytes, kTile);
}

TEST(BufferAssignment, CalleeTemporariesCountAtTheCall) {
  MemoryPlan plan = PlanMain(R"(
func.func private @f(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %y = stablehlo.exponential %x : tensor<8x128xf32>
  %z = stablehlo.exponential %y : tensor<8x128xf32>
  func.return %z : tensor<8x128xf32>
}
func.func @main(%a: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %c = func.call @f(%a) : (tensor<8x128xf32>) -> tensor<8x128xf32>
  func.return %c : tensor<8x128xf32>
})");
  EXPECT_EQ(plan.peak_bytes, 3 * kTile);
  EXPECT_EQ(plan.temp_bytes, kTile);
  EXPECT_EQ(plan.sum_of_buffers, 3 * kTile);
  ASSERT_FALSE(plan.live_at_peak.empty());
  EXPECT_EQ(plan.live_at_peak.back().value, "%y in @f");
}

TEST(BufferAssignment, RecursionIsUnimplemented) {
  std::unique_ptr<ir::Module> module = ParseVerified(R"(
func.func @main(%a: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %c = func.call @main(%a) : (tensor<8x128xf32>) -> tensor<8x128xf32>
  func.return %c : tensor<8x128xf32>
})");
  ASSERT_NE(module, nullptr);
  StatusOr<MemoryPlan> plan = PlanMemory(*module, *module->Lookup("main"), V5e());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(plan.status().message().find("@main calls itself"), std::string::npos);
}

TEST(BufferAssignment, FusionBodiesStayOnChip) {
  MemoryPlan plan = PlanMain(R"(
func.func @main(%a: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %r = "tpusim.fusion"(%a) ({
    ^bb0(%x: tensor<8x128xf32>):
      %y = stablehlo.exponential %x : tensor<8x128xf32>
      %z = stablehlo.exponential %y : tensor<8x128xf32>
      stablehlo.return %z : tensor<8x128xf32>
  }) {kind = "kLoop", name = "fusion.0"} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  func.return %r : tensor<8x128xf32>
})");
  EXPECT_EQ(plan.peak_bytes, 2 * kTile);
  EXPECT_EQ(plan.num_buffers, 2);
}

TEST(BufferAssignment, TooLargeForTheChipIsResourceExhausted) {
  std::unique_ptr<ir::Module> module = ParseVerified(kChain);
  ASSERT_NE(module, nullptr);
  hw::ChipSpec chip = V5e();
  chip.name = "tiny";
  chip.memory.hbm_bytes = 10000;
  PassContext ctx{.chip = &chip};
  Status status = RunBufferAssignment(*module, ctx);
  ASSERT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "RESOURCE_EXHAUSTED: @main needs 12 KiB of HBM but tiny has 9.77 KiB (arguments 4 KiB, "
            "temporaries "
            "8 KiB); largest buffers live at the peak (at stablehlo.exponential %c at "
            "test.mlir:4:3): %a tensor<8x128xf32> 4 KiB argument from parameter 0; "
            "%b tensor<8x128xf32> 4 KiB temporary from stablehlo.exponential at test.mlir:3:3; "
            "%c tensor<8x128xf32> 4 KiB temporary from stablehlo.exponential at test.mlir:4:3");
  ASSERT_TRUE(ctx.memory.has_value());
  EXPECT_EQ(ctx.memory->peak_bytes, 3 * kTile);
}

// On v2, v3 and 7x each TensorCore is a device with half of the chip's HBM:
// a program that fits the chip's may not fit one device's.
TEST(BufferAssignment, EachCoreDeviceHasItsShareOfTheChip) {
  std::unique_ptr<ir::Module> module = ParseVerified(kChain);
  ASSERT_NE(module, nullptr);
  hw::ChipSpec chip = *hw::FindPreset("v2");
  chip.memory.hbm_bytes = 4 * kTile;  // the chain's 3 tiles fit; 2 a device do not
  auto plan = PlanMemory(*module, *module->Lookup("main"), chip);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->capacity_bytes, 2 * kTile);
  EXPECT_EQ(plan->devices_per_chip, 2);
  PassContext ctx{.chip = &chip};
  Status status = RunBufferAssignment(*module, ctx);
  ASSERT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(status.message().find("needs 12 KiB of HBM but v2 has 8 KiB per device (2 "
                                  "TensorCores per chip"),
            std::string::npos)
      << status.message();
  // A megacore chip's two cores are one device, with all of it.
  chip = *hw::FindPreset("v5p");
  chip.memory.hbm_bytes = 4 * kTile;
  EXPECT_EQ(PlanMemory(*module, *module->Lookup("main"), chip)->capacity_bytes, 4 * kTile);
}

TEST(BufferAssignment, PassAnnotatesAPlanThatPrintsAndParsesBack) {
  std::unique_ptr<ir::Module> module = ParseVerified(kAliases);
  ASSERT_NE(module, nullptr);
  hw::ChipSpec chip = V5e();
  PassContext ctx{.chip = &chip};
  ASSERT_TRUE(RunBufferAssignment(*module, ctx).ok());
  ASSERT_TRUE(ctx.memory.has_value());
  ASSERT_EQ(ctx.notes.size(), 1u);
  EXPECT_EQ(ctx.notes[0],
            "buffer assignment: @main needs 8 KiB of HBM (8 KiB without reuse, 2 buffers)");
  const ir::Function& main = *module->Lookup("main");
  EXPECT_EQ(main.arg_attrs()[0].Get("tpusim.buffers").AsInts(), (std::vector<int64_t>{0, kTile}));
  const auto& ops = main.entry().ops();
  std::vector<int64_t> b = {kTile, kTile};
  EXPECT_EQ(ops[0]->attr("tpusim.buffers").AsInts(), b);  // %b
  EXPECT_EQ(ops[1]->attr("tpusim.buffers").AsInts(),
            (std::vector<int64_t>{0, kTile, kTile, kTile}));
  EXPECT_EQ(ops[4]->attr("tpusim.buffers").AsInts(), b);  // the reshape
  EXPECT_EQ(main.attrs().Get("tpusim.hbm_peak_bytes").int_value(), 2 * kTile);

  // The dump is valid input, and planning it again gives the same plan.
  std::unique_ptr<ir::Module> again = ParseVerified(ir::PrintModule(*module));
  ASSERT_NE(again, nullptr);
  PassContext ctx2{.chip = &chip};
  ASSERT_TRUE(RunBufferAssignment(*again, ctx2).ok());
  EXPECT_EQ(ir::PrintModule(*again), ir::PrintModule(*module));
}

TEST(BufferAssignment, PassAnnotatesBodiesAtTheirLoopsOffsets) {
  std::unique_ptr<ir::Module> module = ParseVerified(kWhile);
  ASSERT_NE(module, nullptr);
  hw::ChipSpec chip = V5e();
  PassContext ctx{.chip = &chip};
  ASSERT_TRUE(RunBufferAssignment(*module, ctx).ok());
  const ir::Operation& loop = *module->Lookup("main")->entry().ops()[0];
  // %a at 0 and the constant after it; then %w, then the body's heap.
  EXPECT_EQ(loop.attr("tpusim.buffers").AsInts(), (std::vector<int64_t>{kTile + 128, kTile}));
  const auto& body = loop.region(1).front().ops();
  EXPECT_EQ(body[0]->attr("tpusim.buffers").AsInts(),
            (std::vector<int64_t>{2 * kTile + 128, kTile}));  // %x
  EXPECT_EQ(body[1]->attr("tpusim.buffers").AsInts(),
            (std::vector<int64_t>{kTile + 128, kTile}));  // %y is stored in %w
  const ir::Operation& predicate = *loop.region(0).front().ops()[0];
  EXPECT_EQ(predicate.attr("tpusim.buffers").AsInts(), (std::vector<int64_t>{kTile, 128}));
}

TEST(BufferAssignment, NoEntryIsNothingToPlan) {
  std::unique_ptr<ir::Module> module = ParseVerified(R"(
func.func private @f(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  func.return %x : tensor<8x128xf32>
})");
  ASSERT_NE(module, nullptr);
  hw::ChipSpec chip = V5e();
  PassContext ctx{.chip = &chip};
  EXPECT_TRUE(RunBufferAssignment(*module, ctx).ok());
  EXPECT_FALSE(ctx.memory.has_value());
  ctx.entry = "missing";
  EXPECT_EQ(RunBufferAssignment(*module, ctx).code(), StatusCode::kNotFound);
}

TEST(BufferBestFitHeap, TakesTheSmallestHoleThatFits) {
  BestFitHeap heap;
  EXPECT_EQ(heap.Allocate(300), 0);
  EXPECT_EQ(heap.Allocate(100), 300);
  EXPECT_EQ(heap.Allocate(200), 400);
  EXPECT_EQ(heap.Allocate(100), 600);
  heap.Free(0, 300);
  heap.Free(400, 200);
  EXPECT_EQ(heap.Allocate(150), 400);  // the 200-byte hole, not the 300
  EXPECT_EQ(heap.Allocate(400), 700);  // no hole fits: the heap grows
  EXPECT_EQ(heap.size(), 1100);
}

TEST(BufferBestFitHeap, MergesNeighbouringHolesAndShrinksAtTheTop) {
  BestFitHeap heap;
  heap.Allocate(100);
  heap.Allocate(100);
  heap.Allocate(100);
  heap.Free(0, 100);
  heap.Free(100, 100);
  EXPECT_EQ(heap.Allocate(200), 0);  // the two holes as one
  heap.Free(200, 100);
  EXPECT_EQ(heap.top(), 200);
  EXPECT_EQ(heap.Allocate(50), 200);
  EXPECT_EQ(heap.size(), 300);
}

TEST(BufferPlacement, LargestFirstCanBeatProgramOrder) {
  // The ranges of LargestFirstAvoidsTheHoleOfProgramOrder's buffers.
  std::vector<LiveRange> ranges = {{.bytes = 4, .start = -1, .end = 4},
                                   {.bytes = 4, .start = 0, .end = 1},
                                   {.bytes = 4, .start = 1, .end = 2},
                                   {.bytes = 8, .start = 2, .end = 4}};
  HeapPlacement in_order = PlaceInProgramOrder(ranges);
  EXPECT_EQ(in_order.offsets, (std::vector<int64_t>{0, 4, 8, 12}));
  EXPECT_EQ(in_order.size, 20);
  HeapPlacement by_size = PlaceLargestFirst(ranges);
  EXPECT_EQ(by_size.offsets, (std::vector<int64_t>{8, 0, 12, 0}));
  EXPECT_EQ(by_size.size, 16);
}

TEST(BufferFormat, BinaryUnits) {
  EXPECT_EQ(FormatBinaryBytes(512), "512 B");
  EXPECT_EQ(FormatBinaryBytes(4096), "4 KiB");
  EXPECT_EQ(FormatBinaryBytes(10000), "9.77 KiB");
  EXPECT_EQ(FormatBinaryBytes(int64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(FormatBinaryBytes(int64_t{16} << 30), "16 GiB");
  EXPECT_EQ(FormatBinaryBytes(int64_t{1023} << 20), "1023 MiB");
}

}  // namespace
}  // namespace tpusim::compiler
