// Layouts on types: the bitcast layout of a transpose.
#include <gtest/gtest.h>

#include "tpusim/ir/type.h"

namespace tpusim::ir {
namespace {

using Ints = std::vector<int64_t>;

Type F32(Shape shape) { return Type::Tensor(ElementType::kF32, std::move(shape)); }

// [3,4096] row-major holds the bytes of its transpose [4096,3] laid out {0,1}.
TEST(LayoutTypeTest, TransposedLayoutOfRowMajor) {
  EXPECT_EQ(TransposedLayout(F32({3, 4096}), {1, 0}), (Ints{0, 1}));
  EXPECT_EQ(TransposedLayout(F32({2, 3, 4}), {0, 1, 2}), (Ints{2, 1, 0}));
  // result dims (2, 0, 1) of the operand: operand dim 2 (minor) is result dim 0.
  EXPECT_EQ(TransposedLayout(F32({2, 3, 4}), {2, 0, 1}), (Ints{0, 2, 1}));
}

TEST(LayoutTypeTest, TransposedLayoutUndoesALayout) {
  EXPECT_EQ(TransposedLayout(F32({4096, 3}).WithLayout({0, 1}), {1, 0}), (Ints{1, 0}));
  EXPECT_EQ(TransposedLayout(F32({2, 3, 4}).WithLayout({0, 2, 1}), {2, 0, 1}), (Ints{1, 0, 2}));
}

}  // namespace
}  // namespace tpusim::ir
