#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/layout_rules.h"
#include "testing/test_util.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/hlo/parser.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/hw/layout.h"
#include "tpusim/ir/printer.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/timing/timing.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::compiler {
namespace {

using test::ParseVerified;
using test::V5e;

// Runs the pass on `module`, then the verifier; returns the pass's note.
std::string Assign(ir::Module& module) {
  PassContext ctx{.chip = &V5e(), .entry = "main"};
  Status st = RunLayoutAssignment(module, ctx);
  EXPECT_TRUE(st.ok()) << st.ToString();
  st = verify::VerifyModule(module);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return ctx.notes.empty() ? "" : ctx.notes.back();
}

// The body of @main as printed.
std::string Body(const ir::Module& module) {
  std::string text = ir::PrintModule(module);
  size_t begin = text.find('\n', text.find("@main")) + 1;
  size_t end = text.rfind("  }");  // the function's closing brace
  return text.substr(begin, end - begin);
}

std::string Layout(const ir::Type& t) {
  return t.is_tensor() && t.rank() > 0 ? ir::LayoutString(t.MinorToMajor()) : "{}";
}

// @main's top-level ops, one per line, with the layouts of their operands
// and results: "%3 = stablehlo.add %1 %2 : {0,1} {0,1} -> {0,1}".
std::string Layouts(const ir::Module& module) {
  std::string s;
  for (const auto& op : module.Lookup("main")->entry().ops()) {
    std::string line, operands, results;
    for (int i = 0; i < op->num_results(); ++i) {
      line += (i ? ", %" : "%") + std::to_string(op->result(i).id());
      results += (i ? " " : "") + Layout(op->result(i).type());
    }
    line += (line.empty() ? "" : " = ") + op->name_str();
    for (ir::Value v : op->operands()) {
      line += " %" + std::to_string(v.id());
      operands += (operands.empty() ? "" : " ") + Layout(v.type());
    }
    s += line + " : " + operands + (results.empty() ? "" : " -> " + results) + "\n";
  }
  return s;
}

int64_t Count(const ir::Module& module, const std::string& name) {
  int64_t n = 0;
  ir::Walk(module.Lookup("main")->body(), [&](ir::Operation& op) { n += op.name_str() == name; });
  return n;
}

// @main's results on fixed inputs (each parameter's bytes 0, 1, 2, ...
// reinterpreted, so floats are tiny but distinct).
std::vector<Tensor> RunMain(const ir::Module& module) {
  std::vector<Tensor> args;
  for (const ir::Type& t : module.Lookup("main")->type().inputs) {
    Tensor a = Tensor::Allocate(t).value();
    for (int64_t i = 0; i < a.size_bytes(); ++i) a.mutable_raw()[i] = static_cast<uint8_t>(i * 7);
    args.push_back(std::move(a));
  }
  exec::Interpreter interpreter(module, {});
  auto r = interpreter.Run("main", args);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<Tensor>{};
}

void ExpectSameValues(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size_bytes(), b[i].size_bytes());
    EXPECT_EQ(std::memcmp(a[i].raw(), b[i].raw(), a[i].size_bytes()), 0) << "result " << i;
  }
}

struct Timed {
  int64_t padding_bytes = 0;  // over the timeline
  int64_t hbm_bytes = 0;
  double copy_seconds = 0;  // of tpusim.copy events
};

Timed Time(const ir::Module& module) {
  auto timeline = timing::TimeStatically(module, "main", V5e(), {});
  EXPECT_TRUE(timeline.ok()) << timeline.status().ToString();
  Timed t;
  if (!timeline.ok()) return t;
  for (const timing::OpEvent& e : timeline->events()) {
    t.padding_bytes += e.cost.padding_bytes * e.count;
    t.hbm_bytes += e.cost.hbm_bytes * e.count;
    if (e.op->name_str() == "tpusim.copy") t.copy_seconds += e.seconds();
  }
  return t;
}

// An elementwise chain on a skinny f32[4096,3] array: row-major pads the 3
// columns to 128 lanes (42.7x); {0,1} pads them to 8 sublanes (2.7x).
const char kSkinny[] = R"(
func.func public @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %b = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<4096x3xf32>
  %i = stablehlo.iota dim = 0 : tensor<4096x3xf32>
  %e = stablehlo.exponential %b : tensor<4096x3xf32>
  %m = stablehlo.multiply %e, %i : tensor<4096x3xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4096x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
)";

TEST(LayoutAssignmentTest, SkinnyChainGoesColumnMajor) {
  auto m = ParseVerified(kSkinny);
  ASSERT_NE(m, nullptr);
  const Timed before = Time(*m);
  const std::vector<Tensor> values = RunMain(*m);
  EXPECT_EQ(Assign(*m),
            "layout-assignment: 4 values laid out other than row-major (padded 8 MiB -> "
            "512 KiB), 0 copies inserted (0 B moved)");
  EXPECT_EQ(Layouts(*m), R"(%1 = stablehlo.broadcast_in_dim %0 : {0} -> {0,1}
%2 = stablehlo.iota :  -> {0,1}
%3 = stablehlo.exponential %1 : {0,1} -> {0,1}
%4 = stablehlo.multiply %3 %2 : {0,1} {0,1} -> {0,1}
%5 = stablehlo.constant :  -> {}
%6 = stablehlo.reduce %4 %5 : {0,1} {} -> {0}
func.return %6 : {0}
)");
  ExpectSameValues(RunMain(*m), values);
  const Timed after = Time(*m);
  // Four arrays of 2 MiB padded row-major, 128 KiB as {0,1}: 16.4 MB of
  // padding moved before, 0.66 MB after.
  EXPECT_LT(after.padding_bytes * 10, before.padding_bytes);
  EXPECT_LT(after.hbm_bytes * 10, before.hbm_bytes);
}

// x^T feeding an elementwise op: the transpose takes x's bytes as they lie
// ({0,1} of [4096,3] is [3,4096] row-major) and so is free.
TEST(LayoutAssignmentTest, TransposeIntoElementwiseBecomesBitcast) {
  auto m = ParseVerified(R"(
func.func public @main(%x: tensor<3x4096xf32>) -> tensor<3xf32> {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<3x4096xf32>) -> tensor<4096x3xf32>
  %e = stablehlo.exponential %t : tensor<4096x3xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4096x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
)");
  ASSERT_NE(m, nullptr);
  const std::vector<Tensor> values = RunMain(*m);
  Assign(*m);
  EXPECT_EQ(
      Body(*m),
      R"(    %1 = "stablehlo.transpose"(%arg0) {permutation = array<i64: 1, 0>} : (tensor<3x4096xf32>) -> tensor<4096x3xf32, #tpusim.layout<{0,1}>>
    %2 = "stablehlo.exponential"(%1) : (tensor<4096x3xf32, #tpusim.layout<{0,1}>>) -> tensor<4096x3xf32, #tpusim.layout<{0,1}>>
    %3 = "stablehlo.constant"() {value = dense<"0x00000000"> : tensor<f32>} : () -> tensor<f32>
    %4 = "stablehlo.reduce"(%2, %3) ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %7 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%7) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>} : (tensor<4096x3xf32, #tpusim.layout<{0,1}>>, tensor<f32>) -> tensor<3xf32>
    "func.return"(%4) : (tensor<3xf32>) -> ()
)");
  ExpectSameValues(RunMain(*m), values);
  auto timeline = timing::TimeStatically(*m, "main", V5e(), {});
  ASSERT_TRUE(timeline.ok()) << timeline.status().ToString();
  EXPECT_EQ(timeline->events().front().op->name_str(), "stablehlo.transpose");
  EXPECT_EQ(timeline->events().front().cost.bound, hw::Bound::kFree);
}

// The MXU reads either orientation, so x^T feeds the dot as x's bytes lie.
TEST(LayoutAssignmentTest, TransposeIntoDotBecomesBitcast) {
  auto m = ParseVerified(R"(
func.func public @main(%x: tensor<256x128xf32>, %w: tensor<256x512xf32>) -> tensor<128x512xf32> {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<256x128xf32>) -> tensor<128x256xf32>
  %d = stablehlo.dot_general %t, %w, contracting_dims = [1] x [0] : (tensor<128x256xf32>, tensor<256x512xf32>) -> tensor<128x512xf32>
  return %d : tensor<128x512xf32>
}
)");
  ASSERT_NE(m, nullptr);
  const std::vector<Tensor> values = RunMain(*m);
  Assign(*m);
  EXPECT_EQ(Layouts(*m), R"(%2 = stablehlo.transpose %0 : {1,0} -> {0,1}
%3 = stablehlo.dot_general %2 %1 : {0,1} {1,0} -> {1,0}
func.return %3 : {1,0}
)");
  ExpectSameValues(RunMain(*m), values);
}

// A dot needs its matrix dimensions minor: a batch-minor parameter is copied.
TEST(LayoutAssignmentTest, DotOperandWithBatchMinorIsCopied) {
  auto m = ParseVerified(R"(
func.func public @main(%a: tensor<4x8x128xf32, #tpusim.layout<{0,2,1}>>, %b: tensor<4x128x128xf32>) -> tensor<4x8x128xf32> {
  %d = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x8x128xf32, #tpusim.layout<{0,2,1}>>, tensor<4x128x128xf32>) -> tensor<4x8x128xf32>
  return %d : tensor<4x8x128xf32>
}
)");
  ASSERT_NE(m, nullptr);
  const std::vector<Tensor> values = RunMain(*m);
  Assign(*m);
  EXPECT_EQ(Layouts(*m), R"(%2 = tpusim.copy %0 : {0,2,1} -> {2,1,0}
%3 = stablehlo.dot_general %2 %1 : {2,1,0} {2,1,0} -> {2,1,0}
func.return %3 : {2,1,0}
)");
  ExpectSameValues(RunMain(*m), values);
}

// x is needed as {0,1} by two ops of the chain and e as row-major by the
// reshape and the return: one copy each.
TEST(LayoutAssignmentTest, OneCopyPerValueAndLayout) {
  auto m = ParseVerified(R"(
func.func public @main(%x: tensor<4096x3xf32>) -> (tensor<4096x3xf32>, tensor<3x4096xf32>) {
  %a = stablehlo.exponential %x : tensor<4096x3xf32>
  %b = stablehlo.log %x : tensor<4096x3xf32>
  %c = stablehlo.add %a, %b : tensor<4096x3xf32>
  %d = stablehlo.multiply %c, %c : tensor<4096x3xf32>
  %e = stablehlo.subtract %d, %a : tensor<4096x3xf32>
  %r = stablehlo.reshape %e : (tensor<4096x3xf32>) -> tensor<3x4096xf32>
  return %e, %r : tensor<4096x3xf32>, tensor<3x4096xf32>
}
)");
  ASSERT_NE(m, nullptr);
  const Timed before = Time(*m);
  const std::vector<Tensor> values = RunMain(*m);
  Assign(*m);
  EXPECT_EQ(Layouts(*m), R"(%1 = tpusim.copy %0 : {1,0} -> {0,1}
%2 = stablehlo.exponential %1 : {0,1} -> {0,1}
%3 = stablehlo.log %1 : {0,1} -> {0,1}
%4 = stablehlo.add %2 %3 : {0,1} {0,1} -> {0,1}
%5 = stablehlo.multiply %4 %4 : {0,1} {0,1} -> {0,1}
%6 = stablehlo.subtract %5 %2 : {0,1} {0,1} -> {0,1}
%7 = tpusim.copy %6 : {0,1} -> {1,0}
%8 = stablehlo.reshape %7 : {1,0} -> {1,0}
func.return %7 %8 : {1,0} {1,0}
)");
  ExpectSameValues(RunMain(*m), values);
  const Timed after = Time(*m);
  EXPECT_GT(after.copy_seconds, 0);  // copies are priced, not free
  EXPECT_LT(after.hbm_bytes, before.hbm_bytes);
  EXPECT_LT(after.padding_bytes, before.padding_bytes);
}

// The entry's parameters and results keep their layouts; a reshape of a
// {0,1} parameter reads a row-major copy.
TEST(LayoutAssignmentTest, EntryInterfaceKept) {
  auto m = ParseVerified(R"(
func.func public @main(%x: tensor<4096x3xf32, #tpusim.layout<{0,1}>>, %y: tensor<64x256xf32>) -> (tensor<4096x3xf32, #tpusim.layout<{0,1}>>, tensor<3x4096xf32>, tensor<64x256xf32>) {
  %n = stablehlo.negate %x : tensor<4096x3xf32, #tpusim.layout<{0,1}>>
  %r = stablehlo.reshape %x : (tensor<4096x3xf32, #tpusim.layout<{0,1}>>) -> tensor<3x4096xf32>
  %s = stablehlo.sqrt %y : tensor<64x256xf32>
  return %n, %r, %s : tensor<4096x3xf32, #tpusim.layout<{0,1}>>, tensor<3x4096xf32>, tensor<64x256xf32>
}
)");
  ASSERT_NE(m, nullptr);
  const std::string signature = m->Lookup("main")->type().ToString();
  const std::vector<Tensor> values = RunMain(*m);
  Assign(*m);
  EXPECT_EQ(m->Lookup("main")->type().ToString(), signature);
  EXPECT_EQ(Layouts(*m), R"(%2 = tpusim.copy %0 : {0,1} -> {1,0}
%3 = stablehlo.negate %0 : {0,1} -> {0,1}
%4 = stablehlo.reshape %2 : {1,0} -> {1,0}
%5 = stablehlo.sqrt %1 : {1,0} -> {1,0}
func.return %3 %4 %5 : {0,1} {1,0} {1,0}
)");
  ExpectSameValues(RunMain(*m), values);
}

// Layouts inside a while body are chosen too; the body's arguments and
// results stay row-major.
TEST(LayoutAssignmentTest, NestedRegionsKeepRowMajorArguments) {
  auto m = ParseVerified(R"(
func.func public @main(%x: tensor<4096x3xf32>) -> tensor<4096x3xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %v = %x) : tensor<i32>, tensor<4096x3xf32>
   cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %a = stablehlo.exponential %v : tensor<4096x3xf32>
    %b = stablehlo.multiply %a, %a : tensor<4096x3xf32>
    %d = stablehlo.subtract %b, %a : tensor<4096x3xf32>
    %e = stablehlo.multiply %d, %b : tensor<4096x3xf32>
    stablehlo.return %j, %e : tensor<i32>, tensor<4096x3xf32>
  }
  return %0#1 : tensor<4096x3xf32>
}
)");
  ASSERT_NE(m, nullptr);
  const std::vector<Tensor> values = RunMain(*m);
  Assign(*m);
  EXPECT_EQ(Count(*m, "tpusim.copy"), 2);  // into the chain and back
  ir::Walk(m->Lookup("main")->body(), [](ir::Operation& op) {
    if (op.name_str() != "stablehlo.multiply") return;
    EXPECT_EQ(op.result(0).type().layout(), (std::vector<int64_t>{0, 1}));
  });
  ExpectSameValues(RunMain(*m), values);
}

// Functions other than the entry take and return row-major arrays.
TEST(LayoutAssignmentTest, OtherFunctionsBecomeRowMajor) {
  auto m = ParseVerified(R"(
func.func public @main(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %r = func.call @f(%x) : (tensor<8x3xf32>) -> tensor<8x3xf32>
  return %r : tensor<8x3xf32>
}
func.func private @f(%a: tensor<8x3xf32, #tpusim.layout<{0,1}>>) -> tensor<8x3xf32, #tpusim.layout<{0,1}>> {
  return %a : tensor<8x3xf32, #tpusim.layout<{0,1}>>
}
)");
  ASSERT_NE(m, nullptr);
  Assign(*m);
  EXPECT_EQ(m->Lookup("f")->type().ToString(), "(tensor<8x3xf32>) -> tensor<8x3xf32>");
  EXPECT_EQ(m->Lookup("f")->entry().argument(0).type().ToString(), "tensor<8x3xf32>");
}

// XLA HLO carries a layout on every array: the entry's are kept, the
// others chosen afresh (here the HLO's own {0,1} chain is kept, and its
// transpose of a row-major [3,4096] is a bitcast).
TEST(LayoutAssignmentTest, HloLayoutsInsideAreChosenAfresh) {
  auto m = frontend::ParseHlo(R"(
HloModule m, entry_computation_layout={(f32[4096,3]{0,1}, f32[3,4096]{1,0})->f32[4096,3]{1,0}}

ENTRY main {
  p0 = f32[4096,3]{0,1} parameter(0)
  p1 = f32[3,4096]{1,0} parameter(1)
  t = f32[4096,3]{1,0} transpose(p1), dimensions={1,0}
  e = f32[4096,3]{1,0} exponential(p0)
  ROOT a = f32[4096,3]{1,0} add(e, t)
}
)",
                              "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(verify::VerifyModule(**m).ok());
  const std::string signature = (*m)->Lookup("main")->type().ToString();
  const std::vector<Tensor> values = RunMain(**m);
  Assign(**m);
  EXPECT_EQ((*m)->Lookup("main")->type().ToString(), signature);
  EXPECT_EQ(Layouts(**m), R"(%2 = stablehlo.transpose %1 : {1,0} -> {0,1}
%3 = stablehlo.exponential %0 : {0,1} -> {0,1}
%4 = stablehlo.add %3 %2 : {0,1} {0,1} -> {0,1}
%5 = tpusim.copy %4 : {0,1} -> {1,0}
func.return %5 : {1,0}
)");
  ExpectSameValues(RunMain(**m), values);
}

TEST(LayoutVerifierTest, NamesTheOpBreakingARule) {
  auto m = ParseVerified(R"(
func.func public @main(%x: tensor<4x3xf32, #tpusim.layout<{0,1}>>) -> tensor<4x3xf32> {
  %y = stablehlo.add %x, %x : (tensor<4x3xf32, #tpusim.layout<{0,1}>>, tensor<4x3xf32, #tpusim.layout<{0,1}>>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
)");
  ASSERT_NE(m, nullptr);
  Status st = VerifyLayouts(*m, "main");
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("stablehlo.add at test.mlir:3:"), std::string::npos) << st.ToString();
  Assign(*m);
  EXPECT_TRUE(VerifyLayouts(*m, "main").ok());
}

TEST(LayoutVerifierTest, RowMajorResultsOfReshapes) {
  auto m = ParseVerified(R"(
func.func public @main(%x: tensor<4x3xf32>) -> tensor<3x4xf32, #tpusim.layout<{0,1}>> {
  %y = stablehlo.reshape %x : (tensor<4x3xf32>) -> tensor<3x4xf32, #tpusim.layout<{0,1}>>
  return %y : tensor<3x4xf32, #tpusim.layout<{0,1}>>
}
)");
  ASSERT_NE(m, nullptr);
  Status st = VerifyLayouts(*m, "main");
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("stablehlo.reshape"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace tpusim::compiler
