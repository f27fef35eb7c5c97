#include "tensor/page_pool.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tpusim/tensor/tensor.h"

namespace tpusim::tensor_internal {
namespace {

// Each test starts from an empty pool: other tests' tensors leave pages in it.
TEST(PagePoolTest, FreshPagesAreZeroedAndAlignedAndGivenBackOnesReused) {
  ReleasePooledPages();
  EXPECT_EQ(PooledBytes(), 0u);
  Pages fresh = TakePages(3 << 20);
  ASSERT_NE(fresh.data, nullptr);
  EXPECT_TRUE(fresh.zeroed);
  EXPECT_EQ(fresh.length, size_t{4} << 20);  // whole 2 MiB pages
  EXPECT_EQ(reinterpret_cast<uintptr_t>(fresh.data) % (1 << 21), 0u);
  EXPECT_EQ(fresh.data[0] | fresh.data[fresh.length - 1], 0);
  std::memset(fresh.data, 7, fresh.length);
  size_t pooled = PooledBytes();
  GivePages(fresh.data, fresh.length);
  EXPECT_EQ(PooledBytes(), pooled + fresh.length);

  Pages again = TakePages((4 << 20) - 5);  // the same rounded length
  EXPECT_EQ(again.data, fresh.data);
  EXPECT_FALSE(again.zeroed);
  EXPECT_EQ(again.data[0], 7);
  EXPECT_EQ(PooledBytes(), pooled);
  GivePages(again.data, again.length);
}

TEST(PagePoolTest, KeepsNoMoreThanItsCapacityTheOldestGoingFirst) {
  ReleasePooledPages();
  const size_t length = kPoolCapacity / 2 + (size_t{2} << 20);
  Pages a = TakePages(static_cast<int64_t>(length));
  Pages b = TakePages(static_cast<int64_t>(length));
  ASSERT_NE(a.data, nullptr);
  ASSERT_NE(b.data, nullptr);
  GivePages(a.data, a.length);
  GivePages(b.data, b.length);  // a cannot stay beside it
  EXPECT_LE(PooledBytes(), kPoolCapacity);
  Pages c = TakePages(static_cast<int64_t>(length));
  EXPECT_EQ(c.data, b.data);
  EXPECT_FALSE(c.zeroed);
  Pages d = TakePages(static_cast<int64_t>(length));  // a is gone: fresh pages
  EXPECT_TRUE(d.zeroed);
  GivePages(c.data, c.length);
  GivePages(d.data, d.length);

  Pages huge = TakePages(static_cast<int64_t>(kPoolCapacity) + 1);
  ASSERT_NE(huge.data, nullptr);
  size_t pooled = PooledBytes();
  GivePages(huge.data, huge.length);  // larger than the pool: unmapped, nothing evicted
  EXPECT_EQ(PooledBytes(), pooled);
}

TEST(PagePoolTest, AllocateClearsReusedPages) {
  if (kPooledFrom > (int64_t{4} << 20)) GTEST_SKIP() << "tensors do not use the pool here";
  ReleasePooledPages();
  const ir::Type type = ir::Type::Tensor(ir::ElementType::kF32, {1024, 1024});
  const uint8_t* first = nullptr;
  {
    Tensor t = Tensor::Allocate(type).value();
    first = t.raw();
    std::memset(t.mutable_raw(), 0xff, static_cast<size_t>(t.size_bytes()));
  }
  Tensor again = Tensor::Allocate(type).value();
  ASSERT_EQ(again.raw(), first);  // the pool gave the same pages back
  const float* v = again.data<float>();
  for (int64_t i = 0; i < again.num_elements(); ++i) ASSERT_EQ(v[i], 0.0f) << i;
}

}  // namespace
}  // namespace tpusim::tensor_internal
