// tpusim.copy, and the layout-aware work rules of transpose and reshape.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "ops/testing/mlir_test_util.h"
#include "tpusim/hw/layout.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::ops {
namespace {

using testing::Make;
using testing::Read;
using testing::RunMlir;
using testing::VerifyMlir;

int64_t Alu(const Work& w) { return w.vector_ops[static_cast<int>(VectorClass::kAlu)]; }

// The work of `op_text`, one op from `in` to `out`, as @main's first op.
Work UnaryWork(const std::string& in, const std::string& out, const std::string& op_text) {
  const std::string text = "func.func @main(%a: " + in + ") -> " + out + " {\n  %0 = " + op_text +
                           " : (" + in + ") -> " + out + "\n  return %0 : " + out + "\n}\n";
  auto module = frontend::ParseStableHlo(text, "test.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  Status verified = verify::VerifyModule(**module);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  const ir::Operation& op = *(*module)->Lookup("main")->entry().ops().front();
  return OpRegistry::Lookup(op.name())->work(op);
}

constexpr char kRowMajor[] = "tensor<4096x3xf32>";
constexpr char kColumnMajor[] = "tensor<4096x3xf32, #tpusim.layout<{0,1}>>";

TEST(CopyTest, ValueIsTheOperand) {
  auto r = RunMlir(
      R"(
func.func @main(%x: tensor<2x3xi32>) -> tensor<2x3xi32, #tpusim.layout<{0,1}>> {
  %0 = "tpusim.copy"(%x) : (tensor<2x3xi32>) -> tensor<2x3xi32, #tpusim.layout<{0,1}>>
  return %0 : tensor<2x3xi32, #tpusim.layout<{0,1}>>
}
)",
      {Make<int32_t>(ir::Type::Tensor(ir::ElementType::kSI32, {2, 3}), {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<int32_t>((*r)[0]), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(CopyTest, ShapeAndElementTypeMustMatch) {
  EXPECT_EQ(VerifyMlir(R"(
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "tpusim.copy"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
)")
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyMlir(R"(
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xbf16> {
  %0 = "tpusim.copy"(%x) : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}
)")
                .code(),
            StatusCode::kInvalidArgument);
}

// Changing which dimension is minor moves every element through the XLU;
// the reads and writes keep their layouts, so their padding differs.
TEST(CopyTest, RelayoutIsATranspose) {
  Work w = UnaryWork(kRowMajor, kColumnMajor, "\"tpusim.copy\"(%a)");
  EXPECT_FALSE(w.free);
  EXPECT_EQ(w.transpose_elements, 4096 * 3);
  ASSERT_EQ(w.reads.size(), 1u);
  ASSERT_EQ(w.writes.size(), 1u);
  EXPECT_EQ(hw::PaddedBytes(w.reads[0]), 4096 * 128 * 4);
  EXPECT_EQ(hw::PaddedBytes(w.writes[0]), 4096 * 8 * 4);
}

// Same layouts, or the same minor dimension: whole rows move, no XLU.
TEST(CopyTest, SameMinorDimensionIsAPlainCopy) {
  Work same = UnaryWork(kRowMajor, kRowMajor, "\"tpusim.copy\"(%a)");
  EXPECT_FALSE(same.free);
  EXPECT_EQ(same.transpose_elements, 0);
  EXPECT_EQ(Alu(same), 4096 * 3);
  Work rows = UnaryWork("tensor<2x8x128xf32>", "tensor<2x8x128xf32, #tpusim.layout<{2,0,1}>>",
                        "\"tpusim.copy\"(%a)");
  EXPECT_EQ(rows.transpose_elements, 0);
  EXPECT_EQ(Alu(rows), 2 * 8 * 128);
}

// A transpose whose result layout is its operand's bytes as they lie moves
// nothing; into row-major it moves every element through the XLU.
TEST(LayoutWorkTest, TransposeIntoBitcastLayoutIsFree) {
  const std::string op = "stablehlo.transpose %a, dims = [1, 0]";
  EXPECT_TRUE(UnaryWork("tensor<3x4096xf32>", kColumnMajor, op).free);
  Work moved = UnaryWork("tensor<3x4096xf32>", kRowMajor, op);
  EXPECT_FALSE(moved.free);
  EXPECT_EQ(moved.transpose_elements, 4096 * 3);
  Work back = UnaryWork("tensor<3x4096xf32, #tpusim.layout<{0,1}>>", kRowMajor, op);
  EXPECT_TRUE(back.free);
}

// Reshapes are defined on row-major order: one with another layout moves
// elements even when the minor two dimensions stay.
TEST(LayoutWorkTest, ReshapeIsFreeOnlyRowMajor) {
  const std::string op = "stablehlo.reshape %a";
  EXPECT_TRUE(UnaryWork("tensor<2x4x4096x3xf32>", "tensor<8x4096x3xf32>", op).free);
  Work w =
      UnaryWork("tensor<2x4x4096x3xf32, #tpusim.layout<{2,3,1,0}>>", "tensor<8x4096x3xf32>", op);
  EXPECT_FALSE(w.free);
  EXPECT_EQ(w.transpose_elements, 8 * 4096 * 3);
}

}  // namespace
}  // namespace tpusim::ops
