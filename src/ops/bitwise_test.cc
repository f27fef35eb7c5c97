#include <gtest/gtest.h>

#include <limits>

#include "ops/testing/elementwise_test_util.h"

namespace tpusim::ops {
namespace {

using E = ir::ElementType;
using testing::Read;
using testing::RunSame;
using testing::Vec;
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();

TEST(ShiftTest, AmountsAtOrPastTheWidth) {
  auto shl = RunSame("stablehlo.shift_left", {Vec<int32_t>(E::kSI32, {1, 1, 1, 1, 3}),
                                              Vec<int32_t>(E::kSI32, {0, 31, 32, -1, 1})});
  ASSERT_TRUE(shl.ok());
  EXPECT_EQ(Read<int32_t>(*shl), (std::vector<int32_t>{1, kMin32, 0, 0, 6}));
  auto shrl = RunSame("stablehlo.shift_right_logical", {Vec<int32_t>(E::kSI32, {-1, -1, -1, 8}),
                                                        Vec<int32_t>(E::kSI32, {28, 32, 40, 2})});
  ASSERT_TRUE(shrl.ok());
  EXPECT_EQ(Read<int32_t>(*shrl), (std::vector<int32_t>{15, 0, 0, 2}));
  auto shra = RunSame("stablehlo.shift_right_arithmetic",
                      {Vec<int32_t>(E::kSI32, {-16, -16, 16, -16}),
                       Vec<int32_t>(E::kSI32, {2, 32, 99, -5})});
  ASSERT_TRUE(shra.ok());
  EXPECT_EQ(Read<int32_t>(*shra), (std::vector<int32_t>{-4, -1, 0, -1}));
}

TEST(ShiftTest, UnsignedArithmeticShiftCopiesTheTopBit) {
  auto r = RunSame("stablehlo.shift_right_arithmetic",
                   {Vec<uint8_t>(E::kUI8, {0x80, 0x40}), Vec<uint8_t>(E::kUI8, {1, 1})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<uint8_t>(*r), (std::vector<uint8_t>{0xC0, 0x20}));
}

TEST(ShiftTest, FourBitIntegers) {
  auto shrl = RunSame("stablehlo.shift_right_logical",
                      {Vec<int8_t>(E::kSI4, {-8, -1}), Vec<int8_t>(E::kSI4, {1, 3})});
  ASSERT_TRUE(shrl.ok());
  EXPECT_EQ(Read<int8_t>(*shrl), (std::vector<int8_t>{4, 1}));
  auto shl = RunSame("stablehlo.shift_left",
                     {Vec<int8_t>(E::kSI4, {7, 1, 1}), Vec<int8_t>(E::kSI4, {1, 3, 4})});
  ASSERT_TRUE(shl.ok());
  EXPECT_EQ(Read<int8_t>(*shl), (std::vector<int8_t>{-2, -8, 0}));
  auto shra = RunSame("stablehlo.shift_right_arithmetic",
                      {Vec<uint8_t>(E::kUI4, {8, 8}), Vec<uint8_t>(E::kUI4, {1, 4})});
  ASSERT_TRUE(shra.ok());
  EXPECT_EQ(Read<uint8_t>(*shra), (std::vector<uint8_t>{12, 15}));
}

TEST(CountTest, PopcntAndLeadingZerosUseTheTypeWidth) {
  auto pop = testing::Run("stablehlo.popcnt", {Vec<int8_t>(E::kSI4, {-1, 5})},
                          ir::Type::Tensor(E::kSI4, {2}));
  ASSERT_TRUE(pop.ok());
  EXPECT_EQ(Read<int8_t>(*pop), (std::vector<int8_t>{4, 2}));
  auto pop64 = testing::Run("stablehlo.popcnt", {Vec<uint64_t>(E::kUI64, {~uint64_t{0}})},
                            ir::Type::Tensor(E::kUI64, {1}));
  ASSERT_TRUE(pop64.ok());
  EXPECT_EQ(Read<uint64_t>(*pop64), (std::vector<uint64_t>{64}));
  auto clz = testing::Run("stablehlo.count_leading_zeros",
                          {Vec<int64_t>(E::kSI64, {0, 1, 128, -1})},
                          ir::Type::Tensor(E::kSI64, {4}));
  ASSERT_TRUE(clz.ok());
  EXPECT_EQ(Read<int64_t>(*clz), (std::vector<int64_t>{64, 63, 56, 0}));
  auto clz4 = testing::Run("stablehlo.count_leading_zeros", {Vec<int8_t>(E::kSI4, {1, 0, -1})},
                           ir::Type::Tensor(E::kSI4, {3}));
  ASSERT_TRUE(clz4.ok());
  EXPECT_EQ(Read<int8_t>(*clz4), (std::vector<int8_t>{3, 4, 0}));
}

TEST(LogicTest, BoolsAndIntegers) {
  Tensor a = Vec<uint8_t>(E::kI1, {0, 0, 1, 1});
  Tensor b = Vec<uint8_t>(E::kI1, {0, 1, 0, 1});
  auto band = RunSame("stablehlo.and", {a, b});
  auto bor = RunSame("stablehlo.or", {a, b});
  auto bxor = RunSame("stablehlo.xor", {a, b});
  auto bnot = testing::Run("stablehlo.not", {a}, a.type());
  ASSERT_TRUE(band.ok() && bor.ok() && bxor.ok() && bnot.ok());
  EXPECT_EQ(Read<uint8_t>(*band), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(Read<uint8_t>(*bor), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(Read<uint8_t>(*bxor), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(Read<uint8_t>(*bnot), (std::vector<uint8_t>{1, 1, 0, 0}));
  auto iand = RunSame("stablehlo.and", {Vec<int32_t>(E::kSI32, {1, 2, 3, 4}),
                                        Vec<int32_t>(E::kSI32, {5, 6, 7, 8})});
  ASSERT_TRUE(iand.ok());
  EXPECT_EQ(Read<int32_t>(*iand), (std::vector<int32_t>{1, 2, 3, 0}));
  auto not4 = testing::Run("stablehlo.not", {Vec<int8_t>(E::kSI4, {-8, 0})},
                           ir::Type::Tensor(E::kSI4, {2}));
  ASSERT_TRUE(not4.ok());
  EXPECT_EQ(Read<int8_t>(*not4), (std::vector<int8_t>{7, -1}));
  auto notu4 = testing::Run("stablehlo.not", {Vec<uint8_t>(E::kUI4, {0, 15})},
                            ir::Type::Tensor(E::kUI4, {2}));
  ASSERT_TRUE(notu4.ok());
  EXPECT_EQ(Read<uint8_t>(*notu4), (std::vector<uint8_t>{15, 0}));
}

TEST(BitwiseVerifyTest, TypeRules) {
  auto b = ir::Type::Tensor(E::kI1, {2});
  auto f = ir::Type::Tensor(E::kF32, {2});
  EXPECT_FALSE(testing::Verify("stablehlo.shift_left", {b, b}, b).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.and", {f, f}, f).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.popcnt", {f}, f).ok());
  EXPECT_TRUE(testing::Verify("stablehlo.xor", {b, b}, b).ok());
}

}  // namespace
}  // namespace tpusim::ops
