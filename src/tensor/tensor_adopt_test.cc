#include <gtest/gtest.h>

#include <cstdlib>

#include "tpusim/tensor/tensor.h"

namespace tpusim {
namespace {

ir::Type F32(ir::Shape shape) { return ir::Type::Tensor(ir::ElementType::kF32, std::move(shape)); }

TEST(TensorAdoptTest, ReleasesOnceWhenTheLastShareIsGone) {
  auto* data = static_cast<uint8_t*>(std::aligned_alloc(64, 64));
  int releases = 0;
  int64_t in_use = HostMemoryInUse();
  {
    StatusOr<Tensor> t = Tensor::Adopt(F32({4, 2}), data, [&] {
      ++releases;
      std::free(data);
    });
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->raw(), data);
    EXPECT_EQ(t->size_bytes(), 32);
    EXPECT_EQ(HostMemoryInUse(), in_use + 32);
    Tensor copy = *t;
    Tensor reshaped = t->Reshaped({8});
    EXPECT_FALSE(t->unique_storage());
    *t = Tensor();
    copy = Tensor();
    EXPECT_EQ(releases, 0);
    EXPECT_EQ(reshaped.raw(), data);
    // The only share, but ops still do not write into adopted storage.
    EXPECT_FALSE(reshaped.unique_storage());
  }
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(HostMemoryInUse(), in_use);
}

TEST(TensorAdoptTest, ErrorsReleaseAtOnce) {
  alignas(64) static uint8_t storage[128];
  int releases = 0;
  auto count = [&] { ++releases; };
  StatusOr<Tensor> misaligned = Tensor::Adopt(F32({2}), storage + 4, count);
  EXPECT_FALSE(misaligned.ok());
  EXPECT_EQ(releases, 1);

  int64_t limit = HostMemoryLimit();
  SetHostMemoryLimit(HostMemoryInUse() + 16);
  StatusOr<Tensor> too_big = Tensor::Adopt(F32({8}), storage, count);
  SetHostMemoryLimit(limit);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(releases, 2);
}

}  // namespace
}  // namespace tpusim
