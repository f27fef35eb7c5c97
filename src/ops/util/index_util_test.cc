#include "ops/util/index_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <numeric>
#include <utility>

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

// dst[i . dst_strides] = src[i . src_strides] for every i in `shape`, one
// element at a time: the reference for StridedCopier's fast paths.
template <class T>
void NaiveCopy(const std::vector<int64_t>& shape, const std::vector<int64_t>& ss,
               const std::vector<int64_t>& ds, const T* src, T* dst) {
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  do {
    dst[FlatOffset(index, ds)] = src[FlatOffset(index, ss)];
  } while (NextIndex(index, shape));
}

// Copies a row-major array of `shape` permuted by `perm` (result dimension d
// is source dimension perm[d]) with StridedCopier and naively; both agree.
template <class T>
void ExpectPermutedCopy(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm) {
  const std::vector<int64_t> in_strides = RowMajorStrides(shape);
  std::vector<int64_t> out_shape, src_strides;
  for (int64_t p : perm) {
    out_shape.push_back(shape[p]);
    src_strides.push_back(in_strides[p]);
  }
  const std::vector<int64_t> dst_strides = RowMajorStrides(out_shape);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<T> src(n), fast(n), slow(n);
  for (int64_t i = 0; i < n; ++i) src[i] = static_cast<T>(i * 2654435761u);
  StridedCopier(sizeof(T), out_shape, src_strides, dst_strides)
      .Run(reinterpret_cast<const uint8_t*>(src.data()), reinterpret_cast<uint8_t*>(fast.data()));
  NaiveCopy(out_shape, src_strides, dst_strides, src.data(), slow.data());
  EXPECT_EQ(fast, slow) << "shape " << ::testing::PrintToString(shape) << " perm "
                        << ::testing::PrintToString(perm);
}

TEST(StridedCopierTest, TiledTransposesMatchTheNaiveCopy) {
  // Odd sizes (not multiples of the tile), large ones (split among threads),
  // and transposes of the inner two of more dimensions.
  ExpectPermutedCopy<float>({33, 65}, {1, 0});
  ExpectPermutedCopy<float>({1024, 513}, {1, 0});
  ExpectPermutedCopy<uint16_t>({700, 300}, {1, 0});
  ExpectPermutedCopy<uint8_t>({64, 40}, {1, 0});
  ExpectPermutedCopy<double>({3, 100, 70}, {0, 2, 1});
  ExpectPermutedCopy<float>({4, 64, 8, 64}, {0, 2, 1, 3});
  ExpectPermutedCopy<float>({4, 64, 8, 64}, {2, 3, 0, 1});
  ExpectPermutedCopy<uint32_t>({50, 6, 70}, {2, 1, 0});
  ExpectPermutedCopy<std::complex<double>>({40, 45}, {1, 0});  // 16-byte elements
}

TEST(StridedCopierTest, LargeCopiesAndBroadcastsMatchTheNaiveCopy) {
  ExpectPermutedCopy<float>({300, 1000}, {0, 1});  // one contiguous run
  ExpectPermutedCopy<uint16_t>({5, 7, 9000}, {0, 1, 2});
  // A broadcast of a row over 600 rows, and of a column over 600 columns.
  std::vector<float> row(700), fast(600 * 700), slow(600 * 700);
  for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<float>(i) * 0.5f;
  for (const auto& [ss, label] :
       {std::pair<std::vector<int64_t>, const char*>{{0, 1}, "row"}, {{1, 0}, "column"}}) {
    const std::vector<int64_t> shape = {600, 700}, ds = {700, 1};
    std::fill(fast.begin(), fast.end(), -1.0f);
    StridedCopier(4, shape, ss, ds)
        .Run(reinterpret_cast<const uint8_t*>(row.data()), reinterpret_cast<uint8_t*>(fast.data()));
    NaiveCopy(shape, ss, ds, row.data(), slow.data());
    EXPECT_EQ(fast, slow) << label;
  }
}

TEST(FillWithElementTest, FillsLargeAndEmptyTensors) {
  for (int64_t n : {int64_t{0}, int64_t{3}, int64_t{1} << 18}) {
    Tensor t = Tensor::AllocateUninitialized(ir::Type::Tensor(ir::ElementType::kBF16, {n})).value();
    const uint16_t v = 0x3f80;
    FillWithElement(t, reinterpret_cast<const uint8_t*>(&v));
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(t.data<uint16_t>()[i], v) << i;
  }
}

TEST(WritableCopyTest, TakesStorageHeldByNothingElseAndCopiesShared) {
  Tensor a = Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kF32, {1 << 18})).value();
  a.mutable_data<float>()[7] = 3.0f;
  const uint8_t* storage = a.raw();
  Tensor shared = a;
  Tensor copy = WritableCopy(a).value();
  EXPECT_NE(copy.raw(), storage);
  EXPECT_EQ(copy.data<float>()[7], 3.0f);
  EXPECT_TRUE(copy.BitwiseEquals(shared));
  shared = Tensor();
  Tensor own = WritableCopy(a).value();
  EXPECT_EQ(own.raw(), storage);
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
