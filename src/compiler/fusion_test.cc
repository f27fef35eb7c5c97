// The fusion pass alone: which ops fuse into which kernels (golden outlines
// and IR), that fused programs compute what they did, and that fusion makes
// an MLP training step faster on a v5e with less HBM traffic.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "testing/test_util.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/hw/chip.h"
#include "tpusim/ir/printer.h"
#include "tpusim/timing/timing.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::compiler {
namespace {

using test::ParseVerified;
using test::V5e;

// Runs the pass on `module` and checks the result verifies.
void Fuse(ir::Module& module, PassContext* ctx = nullptr) {
  PassContext local{.chip = &V5e(), .entry = "main"};
  Status s = RunFusion(module, ctx ? *ctx : local);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Status verified = verify::VerifyModule(module);
  ASSERT_TRUE(verified.ok()) << verified.ToString() << "\n" << ir::PrintModule(module);
}

std::string ShortName(const ir::Operation& op) {
  std::string n = op.name_str();
  return n.starts_with("stablehlo.") ? n.substr(10) : n;
}

// One line per op of `block`: its name, or for a kernel
// "fusion.N kKind(op, op, ...)"; control-flow regions indented below.
void Outline(const ir::Block& block, int depth, std::ostringstream& os) {
  for (const auto& op : block.ops()) {
    os << std::string(2 * depth, ' ');
    if (op->name_str() == "tpusim.fusion") {
      os << op->attr("name").str() << " " << op->attr("kind").str() << "(";
      const ir::Block& body = op->region(0).front();
      for (size_t i = 0; i + 1 < body.ops().size(); ++i) {
        os << (i ? ", " : "") << ShortName(*body.ops()[i]);
      }
      os << ")\n";
      continue;
    }
    os << ShortName(*op) << "\n";
    if (op->name_str() == "stablehlo.reduce") continue;  // a per-element body
    for (int r = 0; r < op->num_regions(); ++r) Outline(op->region(r).front(), depth + 1, os);
  }
}

// Arguments for @main: element i of argument a is a small float that
// varies with both.
std::vector<Tensor> ArgsFor(const ir::Function& f) {
  std::vector<Tensor> args;
  for (size_t a = 0; a < f.type().inputs.size(); ++a) {
    Tensor t = Tensor::Allocate(f.type().inputs[a]).value();
    std::vector<float> v(static_cast<size_t>(t.size_bytes()) / sizeof(float));
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = static_cast<float>((i * 7 + a * 3) % 11) * 0.1f - 0.5f;
    }
    std::memcpy(t.mutable_raw(), v.data(), v.size() * sizeof(float));
    args.push_back(std::move(t));
  }
  return args;
}

std::vector<Tensor> RunMain(const ir::Module& m) {
  exec::Interpreter interpreter(m, {});
  std::vector<Tensor> args = ArgsFor(*m.Lookup("main"));
  auto r = interpreter.Run("main", args);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : std::vector<Tensor>{};
}

void ExpectSameValues(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].size_bytes(), want[i].size_bytes());
    EXPECT_EQ(std::memcmp(got[i].raw(), want[i].raw(), want[i].size_bytes()), 0) << i;
  }
}

// The outline of @main after fusion, having checked that @main computes the
// same values fused as before.
std::string FusedOutline(const std::string& text) {
  std::unique_ptr<ir::Module> plain = ParseVerified(text), m = ParseVerified(text);
  if (m == nullptr) return "";
  Fuse(*m);
  ExpectSameValues(RunMain(*m), RunMain(*plain));
  std::ostringstream os;
  Outline(m->Lookup("main")->entry(), 0, os);
  return os.str();
}

TEST(FusionPass, AnElementwiseChainBecomesOneLoopKernel) {
  std::unique_ptr<ir::Module> m = ParseVerified(R"(
func.func public @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %1 = stablehlo.add %x, %0 : tensor<4x8xf32>
  %2 = stablehlo.tanh %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
})");
  ASSERT_NE(m, nullptr);
  Fuse(*m);
  EXPECT_EQ(ir::PrintFunction(*m->Lookup("main")),
            R"(func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> (tensor<4x8xf32>) {
  %2 = "tpusim.fusion"(%arg1, %arg0) ({
  ^bb0(%arg3: tensor<8xf32>, %arg4: tensor<4x8xf32>):
    %5 = "stablehlo.broadcast_in_dim"(%arg3) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
    %6 = "stablehlo.add"(%arg4, %5) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %7 = "stablehlo.tanh"(%6) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "stablehlo.return"(%7) : (tensor<4x8xf32>) -> ()
  }) {kind = "kLoop", name = "fusion.0"} : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  "func.return"(%2) : (tensor<4x8xf32>) -> ()
}
)");
}

TEST(FusionPass, ScalarConstantsAndTheirBroadcastsAreDuplicated) {
  // The reduce separates two kernels that both use the splat 2.0.
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<2.0> : tensor<f32>
  %two = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
  %0 = stablehlo.multiply %x, %two : tensor<4x8xf32>
  %1 = stablehlo.exponential %0 : tensor<4x8xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %z) applies stablehlo.maximum across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %4 = stablehlo.multiply %2, %3 : tensor<4xf32>
  return %4 : tensor<4xf32>
})"),
            "fusion.0 kInput(constant, broadcast_in_dim, multiply, exponential, constant, reduce)\n"
            "fusion.1 kLoop(constant, broadcast_in_dim, multiply)\n"
            "func.return\n");
}

TEST(FusionPass, AProducerUsedOutsideTheKernelStaysOutside) {
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = stablehlo.exponential %x : tensor<4x8xf32>
  %1 = stablehlo.add %0, %y : tensor<4x8xf32>
  %2 = stablehlo.tanh %1 : tensor<4x8xf32>
  return %2, %0 : tensor<4x8xf32>, tensor<4x8xf32>
})"),
            "exponential\n"
            "fusion.0 kLoop(add, tanh)\n"
            "func.return\n");
}

// A layer norm as the ONNX front end lowers LayerNormalization: x - mean
// feeds both the variance's reduction and the normalization. That cheap
// kernel (the mean's divide is per row) merges into both, as XLA duplicates
// cheap producers, so x - mean is never written: three launches, as for
// flax's form below, instead of four.
TEST(FusionPass, ACheapKernelMergesIntoTheKernelsThatReadIt) {
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.reshape %0 : (tensor<4xf32>) -> tensor<4x1xf32>
  %n = stablehlo.constant dense<8.0> : tensor<4x1xf32>
  %2 = stablehlo.divide %1, %n : tensor<4x1xf32>
  %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %4 = stablehlo.subtract %x, %3 : tensor<4x8xf32>
  %5 = stablehlo.multiply %4, %4 : tensor<4x8xf32>
  %6 = stablehlo.reduce(%5 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %7 = stablehlo.reshape %6 : (tensor<4xf32>) -> tensor<4x1xf32>
  %8 = stablehlo.divide %7, %n : tensor<4x1xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<4x1xf32>
  %9 = stablehlo.add %8, %eps : tensor<4x1xf32>
  %10 = stablehlo.rsqrt %9 : tensor<4x1xf32>
  %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %12 = stablehlo.multiply %4, %11 : tensor<4x8xf32>
  %13 = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %14 = stablehlo.multiply %12, %13 : tensor<4x8xf32>
  %15 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %16 = stablehlo.add %14, %15 : tensor<4x8xf32>
  return %16 : tensor<4x8xf32>
})"),
            "constant\n"
            "reduce\n"
            "fusion.0 kInput(constant, reshape, constant, divide, broadcast_in_dim, subtract, "
            "multiply, reduce)\n"
            "fusion.1 kLoop(reshape, constant, divide, broadcast_in_dim, subtract, reshape, "
            "divide, constant, add, rsqrt, broadcast_in_dim, multiply, broadcast_in_dim, "
            "multiply, broadcast_in_dim, add)\n"
            "func.return\n");
}

// Not merged: a kernel with an expensive full-size op (exp(x - max) in a
// softmax, read by the sum and the division), and one whose result a lone
// op or a dot's operand needs.
TEST(FusionPass, OtherKernelsAreNotMerged) {
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %m) applies stablehlo.maximum across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %2 = stablehlo.subtract %x, %1 : tensor<4x8xf32>
  %3 = stablehlo.exponential %2 : tensor<4x8xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %4 = stablehlo.reduce(%3 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %6 = stablehlo.divide %3, %5 : tensor<4x8xf32>
  %7 = stablehlo.subtract %6, %x : tensor<4x8xf32>
  %8 = stablehlo.multiply %7, %7 : tensor<4x8xf32>
  %9 = stablehlo.dot_general %7, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %10 = stablehlo.add %9, %8 : tensor<4x8xf32>
  return %10, %7 : tensor<4x8xf32>, tensor<4x8xf32>
})"),
            "constant\n"
            "reduce\n"
            "fusion.0 kLoop(broadcast_in_dim, subtract, exponential)\n"
            "constant\n"
            "reduce\n"
            "fusion.1 kLoop(broadcast_in_dim, divide, subtract)\n"
            "fusion.2 kOutput(multiply, dot_general, add)\n"
            "func.return\n");
}

TEST(FusionPass, ProducersFuseIntoAReduction) {
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<16x128xf32>, %y: tensor<16x128xf32>) -> tensor<16xf32> {
  %0 = stablehlo.subtract %x, %y : tensor<16x128xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<16x128xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<16x128xf32>, tensor<f32>) -> tensor<16xf32>
  return %2 : tensor<16xf32>
})"),
            "fusion.0 kInput(subtract, multiply, constant, reduce)\n"
            "func.return\n");
}

TEST(FusionPass, ADotTakesItsBiasAndActivationEpilogue) {
  // The transpose feeding the dot stays outside; the second dot does not
  // join the first's kernel.
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>, %v: tensor<32x4xf32>) -> tensor<8x4xf32> {
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<32x16xf32>) -> tensor<16x32xf32>
  %0 = stablehlo.dot_general %x, %t, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x32xf32>
  %z = stablehlo.constant dense<0.0> : tensor<8x32xf32>
  %3 = stablehlo.maximum %2, %z : tensor<8x32xf32>
  %4 = stablehlo.dot_general %3, %v, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  return %4 : tensor<8x4xf32>
})"),
            "transpose\n"
            "fusion.0 kOutput(dot_general, broadcast_in_dim, add, constant, maximum)\n"
            "dot_general\n"
            "func.return\n");
}

// A layer's weights sliced from a loop's stack are read in place by the
// dot that uses them, with an epilogue or alone; the kernel then reads only
// the slice of the stack.
TEST(FusionPass, ADotReadsItsSlicedWeightsInPlace) {
  const std::string text = R"(
func.func public @main(%x: tensor<8x16xf32>, %stack: tensor<4x16x32xf32>, %i: tensor<i32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %s = stablehlo.dynamic_slice %stack, %i, %z, %z, sizes = [1, 16, 32] : (tensor<4x16x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x32xf32>
  %w = stablehlo.reshape %s : (tensor<1x16x32xf32>) -> tensor<16x32xf32>
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.tanh %0 : tensor<8x32xf32>
  %s2 = stablehlo.dynamic_slice %stack, %z, %z, %z, sizes = [1, 16, 32] : (tensor<4x16x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x32xf32>
  %w2 = stablehlo.reshape %s2 : (tensor<1x16x32xf32>) -> tensor<16x32xf32>
  %2 = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %1, %2 : tensor<8x32xf32>, tensor<8x32xf32>
})";
  std::unique_ptr<ir::Module> m = ParseVerified(text);
  ASSERT_NE(m, nullptr);
  Fuse(*m);
  std::ostringstream os;
  Outline(m->Lookup("main")->entry(), 0, os);
  EXPECT_EQ(os.str(),
            "constant\n"
            "fusion.0 kOutput(dynamic_slice, reshape, dot_general, tanh)\n"
            "fusion.1 kOutput(dynamic_slice, reshape, dot_general)\n"
            "func.return\n");
  for (const auto& op : m->Lookup("main")->entry().ops()) {
    if (op->name_str() != "tpusim.fusion") continue;
    const ops::Work w = ops::OpRegistry::Lookup(op->name())->work(*op);
    int64_t read = 0;
    for (const ir::Type& t : w.reads) read += ops::LogicalBytes(t);
    // x, one 16 x 32 slice (not the 4-deep stack) and the index scalars
    // (%i and %z for the first, %z for the second).
    const int64_t scalars = op->attr("name").str() == "fusion.0" ? 2 : 1;
    EXPECT_EQ(read, (8 * 16 + 16 * 32) * 4 + scalars * 4) << op->attr("name").str();
  }
}

TEST(FusionPass, ADotEpilogueMayRelayoutItsResult) {
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %y: tensor<8x32xf32, #tpusim.layout<{0,1}>>) -> tensor<8x32xf32, #tpusim.layout<{0,1}>> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = "tpusim.copy"(%0) : (tensor<8x32xf32>) -> tensor<8x32xf32, #tpusim.layout<{0,1}>>
  %2 = stablehlo.add %1, %y : tensor<8x32xf32, #tpusim.layout<{0,1}>>
  return %2 : tensor<8x32xf32, #tpusim.layout<{0,1}>>
})"),
            "fusion.0 kOutput(dot_general, tpusim.copy, add)\n"
            "func.return\n");
}

TEST(FusionPass, NoKernelWouldFeedItself) {
  // Fusing %0 into %3's kernel would need the reduce of %0 inside it too.
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.exponential %x : tensor<4x8xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %3 = stablehlo.divide %0, %2 : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
})"),
            "exponential\n"
            "constant\n"
            "reduce\n"
            "fusion.0 kLoop(broadcast_in_dim, divide)\n"
            "func.return\n");
}

TEST(FusionPass, FusesInsideLoopBodiesButNotAcrossThem) {
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %e = stablehlo.exponential %x : tensor<4x8xf32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %e) : tensor<i32>, tensor<4x8xf32>
   cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare  LT, %i, %n,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %h = stablehlo.constant dense<0.5> : tensor<4x8xf32>
    %m = stablehlo.multiply %acc, %h : tensor<4x8xf32>
    %t = stablehlo.tanh %m : tensor<4x8xf32>
    stablehlo.return %next, %t : tensor<i32>, tensor<4x8xf32>
  }
  %1 = stablehlo.negate %0#1 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
})"),
            "constant\n"
            "exponential\n"
            "while\n"
            "  constant\n"
            "  compare\n"
            "  return\n"
            "  constant\n"
            "  add\n"
            "  fusion.0 kLoop(constant, multiply, tanh)\n"
            "  return\n"
            "negate\n"
            "func.return\n");
}

TEST(FusionPass, RelayoutsAndIotaJoinLoopKernels) {
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<8x4xf32>, %y: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %1 = "tpusim.copy"(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32, #tpusim.layout<{0,1}>>
  %2 = "stablehlo.add"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32, #tpusim.layout<{0,1}>>) -> tensor<4x8xf32>
  %3 = stablehlo.reshape %2 : (tensor<4x8xf32>) -> tensor<32xf32>
  %4 = stablehlo.iota dim = 0 : tensor<32xf32>
  %5 = stablehlo.multiply %3, %4 : tensor<32xf32>
  return %5 : tensor<32xf32>
})"),
            "fusion.0 kLoop(transpose, tpusim.copy, add, reshape, iota, multiply)\n"
            "func.return\n");
}

TEST(FusionPass, KernelArgumentsKeepTheirOperandsLayouts) {
  std::unique_ptr<ir::Module> m = ParseVerified(R"(
func.func public @main(%x: tensor<4x8xf32, #tpusim.layout<{0,1}>>) -> tensor<4x8xf32, #tpusim.layout<{0,1}>> {
  %0 = stablehlo.exponential %x : tensor<4x8xf32, #tpusim.layout<{0,1}>>
  %1 = stablehlo.tanh %0 : tensor<4x8xf32, #tpusim.layout<{0,1}>>
  return %1 : tensor<4x8xf32, #tpusim.layout<{0,1}>>
})");
  ASSERT_NE(m, nullptr);
  Fuse(*m);
  const ir::Operation& fusion = *m->Lookup("main")->entry().ops().front();
  ASSERT_EQ(fusion.name_str(), "tpusim.fusion");
  const ir::Block& body = fusion.region(0).front();
  EXPECT_EQ(body.argument(0).type().layout(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(fusion.result(0).type().layout(), (std::vector<int64_t>{0, 1}));
}

TEST(FusionPass, LeavesSingleOpsAlone) {
  EXPECT_EQ(FusedOutline(R"(
func.func public @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.add %x, %y : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
})"),
            "add\nfunc.return\n");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string MlpStep() { return ReadFile(TPUSIM_SOURCE_DIR "/examples/mlp_step.mlir"); }

TEST(FusionPass, MlpStepOutline) {
  // The forward layers, the loss and the SGD updates of the weights each
  // become a kernel; the reduces whose inputs other kernels need, the dots'
  // operands and the scalar loss stay outside.
  EXPECT_EQ(FusedOutline(MlpStep()),
            "fusion.0 kOutput(dot_general, broadcast_in_dim, add)\n"
            "constant\n"
            "fusion.1 kLoop(constant, broadcast_in_dim, maximum)\n"
            "fusion.2 kOutput(dot_general, broadcast_in_dim, add, subtract)\n"
            "fusion.3 kInput(constant, multiply, reduce)\n"
            "constant\n"
            "divide\n"
            "fusion.4 kLoop(constant, broadcast_in_dim, multiply)\n"
            "reduce\n"
            "fusion.5 kOutput(constant, broadcast_in_dim, dot_general, compare, select)\n"
            "reduce\n"
            "fusion.6 kOutput(dot_general, constant, broadcast_in_dim, multiply, subtract)\n"
            "fusion.7 kLoop(constant, broadcast_in_dim, multiply, subtract)\n"
            "fusion.8 kOutput(dot_general, constant, broadcast_in_dim, multiply, subtract)\n"
            "fusion.9 kLoop(constant, broadcast_in_dim, multiply, subtract)\n"
            "func.return\n");
}

TEST(FusionPass, MlpStepComputesTheSameValues) {
  std::unique_ptr<ir::Module> plain = ParseVerified(MlpStep()), fused = ParseVerified(MlpStep());
  ASSERT_NE(fused, nullptr);
  Fuse(*fused);
  std::vector<Tensor> want = RunMain(*plain);
  ASSERT_EQ(want.size(), 5u);
  ExpectSameValues(RunMain(*fused), want);
}

struct Totals {
  double seconds = 0;
  int64_t hbm_bytes = 0;
};

Totals TimeOnV5e(const ir::Module& m) {
  auto timeline = timing::TimeStatically(m, "main", V5e(), {});
  EXPECT_TRUE(timeline.ok()) << timeline.status().ToString();
  Totals t;
  if (!timeline.ok()) return t;
  t.seconds = timeline->total_seconds();
  for (const timing::OpEvent& e : timeline->events()) t.hbm_bytes += e.cost.hbm_bytes * e.count;
  return t;
}

TEST(FusionPass, MakesTheMlpStepFasterWithLessHbmTraffic) {
  std::unique_ptr<ir::Module> plain = ParseVerified(MlpStep()), fused = ParseVerified(MlpStep());
  ASSERT_NE(fused, nullptr);
  PassContext ctx{.chip = &V5e(), .entry = "main"};
  Fuse(*fused, &ctx);
  Totals before = TimeOnV5e(*plain), after = TimeOnV5e(*fused);
  EXPECT_LT(after.seconds, before.seconds);
  EXPECT_LT(after.hbm_bytes, before.hbm_bytes);
  ASSERT_EQ(ctx.notes.size(), 1u);
  EXPECT_EQ(ctx.notes[0], "fusion: 39 ops into 10 kernels (4 kLoop, 1 kInput, 5 kOutput)");
}

}  // namespace
}  // namespace tpusim::compiler
