#include "ops/util/index_util.h"

#include <gtest/gtest.h>

#include <numeric>

namespace tpusim::ops {
namespace {

TEST(NextIndexTest, WalksRowMajorAndWrapsToZero) {
  std::vector<int64_t> index = {0, 0};
  const std::vector<int64_t> shape = {2, 3};
  std::vector<std::vector<int64_t>> seen = {index};
  while (NextIndex(index, shape)) seen.push_back(index);
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[1], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(seen[3], (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(index, (std::vector<int64_t>{0, 0}));
}

TEST(StridedCopierTest, TransposesMergedAndNegativeStrides) {
  // A 2x3 int32 array transposed (src strides [1, 3]) into a 3x2 result.
  std::vector<int32_t> src = {0, 1, 2, 3, 4, 5}, dst(6, -1);
  const std::vector<int64_t> shape = {3, 2}, s = {1, 3}, d = {2, 1};
  StridedCopier(4, shape, s, d)
      .Run(reinterpret_cast<uint8_t*>(src.data()), reinterpret_cast<uint8_t*>(dst.data()));
  EXPECT_EQ(dst, (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  // Reversed along the only dimension: start at the last element, stride -1.
  std::vector<int32_t> rev(6);
  const std::vector<int64_t> n = {6}, back = {-1}, fwd = {1};
  StridedCopier(4, n, back, fwd)
      .Run(reinterpret_cast<uint8_t*>(src.data() + 5), reinterpret_cast<uint8_t*>(rev.data()));
  EXPECT_EQ(rev, (std::vector<int32_t>{5, 4, 3, 2, 1, 0}));
}

TEST(StridedCopierTest, BroadcastsWithZeroStride) {
  std::vector<uint16_t> src = {7, 9}, dst(6);
  const std::vector<int64_t> shape = {3, 2}, s = {0, 1}, d = {2, 1};
  StridedCopier c(2, shape, s, d);
  EXPECT_EQ(c.num_elements(), 6);
  c.Run(reinterpret_cast<uint8_t*>(src.data()), reinterpret_cast<uint8_t*>(dst.data()));
  EXPECT_EQ(dst, (std::vector<uint16_t>{7, 9, 7, 9, 7, 9}));
}

TEST(ForEachStridedTest, VisitsOffsetsInRowMajorOrder) {
  const std::vector<int64_t> shape = {2, 2}, s = {2, 1}, d = {0, 1};
  std::vector<std::pair<int64_t, int64_t>> seen;
  ForEachStrided(shape, s, d, [&](int64_t a, int64_t b) { seen.emplace_back(a, b); });
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 1}, {2, 0}, {3, 1}}));
}

TEST(IndexValuesTest, ReadsSignedUnsignedAndSaturates) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kUI64, {2})).value();
  t.mutable_data<uint64_t>()[0] = 5;
  t.mutable_data<uint64_t>()[1] = ~uint64_t{0};
  EXPECT_EQ(IndexValues(t), (std::vector<int64_t>{5, INT64_MAX}));
  Tensor s = Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kSI8, {1})).value();
  s.mutable_data<int8_t>()[0] = -3;
  EXPECT_EQ(IndexValues(s), (std::vector<int64_t>{-3}));
}

}  // namespace
}  // namespace tpusim::ops
