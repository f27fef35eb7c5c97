#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>

#include "ops/testing/elementwise_test_util.h"

namespace tpusim::ops {
namespace {

using E = ir::ElementType;
using testing::Read;
using testing::Vec;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<ir::NamedAttribute> CompareAttrs(const std::string& dir, const std::string& type) {
  std::vector<ir::NamedAttribute> attrs = {
      {"comparison_direction", ir::Attribute::Enum("stablehlo.comparison_direction", dir)}};
  if (!type.empty()) {
    attrs.push_back({"compare_type", ir::Attribute::Enum("stablehlo.comparison_type", type)});
  }
  return attrs;
}

std::vector<uint8_t> Compare(const Tensor& a, const Tensor& b, const std::string& dir,
                             const std::string& type) {
  auto r = testing::Run("stablehlo.compare", {a, b}, a.type().WithElement(E::kI1),
                        CompareAttrs(dir, type));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? Read<uint8_t>(*r) : std::vector<uint8_t>{};
}

TEST(CompareTest, FloatNanIsUnordered) {
  Tensor a = Vec<float>(E::kF32, {kNaN, 1.0f, -0.0f, kNaN});
  Tensor b = Vec<float>(E::kF32, {1.0f, kNaN, 0.0f, kNaN});
  EXPECT_EQ(Compare(a, b, "EQ", "FLOAT"), (std::vector<uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(Compare(a, b, "NE", "FLOAT"), (std::vector<uint8_t>{1, 1, 0, 1}));
  EXPECT_EQ(Compare(a, b, "LT", "FLOAT"), (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(Compare(a, b, "GE", "FLOAT"), (std::vector<uint8_t>{0, 0, 1, 0}));
}

TEST(CompareTest, TotalOrder) {
  const float neg_nan = -kNaN;
  Tensor a = Vec<float>(E::kF32, {-0.0f, kNaN, neg_nan, kNaN, 1.0f});
  Tensor b = Vec<float>(E::kF32, {0.0f, kInf, -kInf, kNaN, 2.0f});
  EXPECT_EQ(Compare(a, b, "LT", "TOTALORDER"), (std::vector<uint8_t>{1, 0, 1, 0, 1}));
  EXPECT_EQ(Compare(a, b, "EQ", "TOTALORDER"), (std::vector<uint8_t>{0, 0, 0, 1, 0}));
  EXPECT_EQ(Compare(a, b, "GT", "TOTALORDER"), (std::vector<uint8_t>{0, 1, 0, 0, 0}));
  // bf16: -0 < +0 too.
  EXPECT_EQ(Compare(Vec<uint16_t>(E::kBF16, {0x8000}), Vec<uint16_t>(E::kBF16, {0x0000}), "LT",
                    "TOTALORDER"),
            (std::vector<uint8_t>{1}));
}

TEST(CompareTest, SignedUnsignedAndBool) {
  EXPECT_EQ(Compare(Vec<uint32_t>(E::kUI32, {0xFFFFFFFFu, 1}), Vec<uint32_t>(E::kUI32, {1, 1}),
                    "GT", "UNSIGNED"),
            (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(Compare(Vec<int32_t>(E::kSI32, {-1, 1}), Vec<int32_t>(E::kSI32, {1, 1}), "LE", ""),
            (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(Compare(Vec<uint8_t>(E::kI1, {0, 1}), Vec<uint8_t>(E::kI1, {1, 1}), "LT", "UNSIGNED"),
            (std::vector<uint8_t>{1, 0}));
}

TEST(CompareTest, ComplexIsLexicographic) {
  using C = std::complex<float>;
  Tensor a = Vec<C>(E::kC64, {C(1, 5), C(2, 1), C(1, 1)});
  Tensor b = Vec<C>(E::kC64, {C(2, 0), C(2, 3), C(1, 1)});
  EXPECT_EQ(Compare(a, b, "LT", "FLOAT"), (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ(Compare(a, b, "EQ", "FLOAT"), (std::vector<uint8_t>{0, 0, 1}));
}

TEST(CompareTest, VerifyRules) {
  auto u = ir::Type::Tensor(E::kUI8, {2});
  auto b = ir::Type::Tensor(E::kI1, {2});
  EXPECT_FALSE(testing::Verify("stablehlo.compare", {u, u}, b, CompareAttrs("LT", "SIGNED")).ok());
  EXPECT_FALSE(
      testing::Verify("stablehlo.compare", {u, u}, b, CompareAttrs("LT", "TOTALORDER")).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.compare", {u, u}, u, CompareAttrs("LT", "")).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.compare", {u, u}, b, CompareAttrs("XX", "")).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.compare", {u, u}, b).ok());
  EXPECT_TRUE(testing::Verify("stablehlo.compare", {u, u}, b, CompareAttrs("LT", "")).ok());
}

TEST(SelectTest, ScalarAndTensorPredicates) {
  Tensor t = Vec<int32_t>(E::kSI32, {1, 2, 3});
  Tensor f = Vec<int32_t>(E::kSI32, {-1, -2, -3});
  auto r = testing::Run("stablehlo.select", {Vec<uint8_t>(E::kI1, {1, 0, 1}), t, f}, t.type());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<int32_t>(*r), (std::vector<int32_t>{1, -2, 3}));
  auto s = testing::Run("stablehlo.select", {testing::Make<uint8_t>(E::kI1, {}, {0}), t, f},
                        t.type());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Read<int32_t>(*s), (std::vector<int32_t>{-1, -2, -3}));
  using C = std::complex<double>;
  Tensor ct = Vec<C>(E::kC128, {C(1, 2), C(3, 4)});
  Tensor cf = Vec<C>(E::kC128, {C(5, 6), C(7, 8)});
  auto c = testing::Run("stablehlo.select", {Vec<uint8_t>(E::kI1, {0, 1}), ct, cf}, ct.type());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(Read<C>(*c), (std::vector<C>{C(5, 6), C(3, 4)}));
}

TEST(SelectTest, VerifyRules) {
  auto t = ir::Type::Tensor(E::kF32, {3});
  EXPECT_FALSE(testing::Verify("stablehlo.select", {ir::Type::Tensor(E::kI1, {2}), t, t}, t).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.select", {ir::Type::Tensor(E::kSI8, {3}), t, t}, t).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.select",
                               {ir::Type::Tensor(E::kI1, {}), t, ir::Type::Tensor(E::kF64, {3})},
                               t)
                   .ok());
}

TEST(ClampTest, ScalarAndTensorBounds) {
  Tensor x = Vec<int32_t>(E::kSI32, {3, 13, 23});
  Tensor lo = Vec<int32_t>(E::kSI32, {5, 10, 15});
  Tensor hi = Vec<int32_t>(E::kSI32, {10, 15, 20});
  auto r = testing::Run("stablehlo.clamp", {lo, x, hi}, x.type());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Read<int32_t>(*r), (std::vector<int32_t>{5, 13, 20}));
  Tensor flo = testing::Make<float>(E::kF32, {}, {0.0f});
  Tensor fhi = testing::Make<float>(E::kF32, {}, {1.0f});
  Tensor fx = Vec<float>(E::kF32, {-1.0f, 0.5f, 2.0f, kNaN});
  auto f = testing::Run("stablehlo.clamp", {flo, fx, fhi}, fx.type());
  ASSERT_TRUE(f.ok());
  auto v = Read<float>(*f);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 0.5f);
  EXPECT_EQ(v[2], 1.0f);
  EXPECT_TRUE(std::isnan(v[3]));
}

TEST(ClampTest, VerifyRules) {
  auto t = ir::Type::Tensor(E::kF32, {3});
  EXPECT_FALSE(testing::Verify("stablehlo.clamp", {ir::Type::Tensor(E::kF32, {2}), t, t}, t).ok());
  EXPECT_FALSE(testing::Verify("stablehlo.clamp", {ir::Type::Tensor(E::kF64, {}), t, t}, t).ok());
  EXPECT_TRUE(testing::Verify("stablehlo.clamp", {ir::Type::Tensor(E::kF32, {}), t, t}, t).ok());
}

}  // namespace
}  // namespace tpusim::ops
