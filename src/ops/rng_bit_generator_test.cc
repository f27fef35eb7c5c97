#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunMlir;
using testing::VerifyMlir;

TEST(RngBitGeneratorTest, ThreeFryReproducesTheSpecExample) {
  auto r = RunMlir(R"(
    func.func @main() -> (tensor<2xui64>, tensor<2x2xui64>) {
      %s = stablehlo.constant dense<[1, 2]> : tensor<2xui64>
      %ns, %out = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui64>)
      return %ns, %out : tensor<2xui64>, tensor<2x2xui64>
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<uint64_t>((*r)[0]), (std::vector<uint64_t>{1, 6}));
  EXPECT_EQ(Read<uint64_t>((*r)[1]),
            (std::vector<uint64_t>{9236835810183407956u, 16087790271692313299u,
                                   18212823393184779219u, 2658481902456610144u}));
}

TEST(RngBitGeneratorTest, PhiloxAdvancesCounterPerBlock) {
  auto r = RunMlir(R"(
    func.func @main() -> (tensor<3xui64>, tensor<3xui32>, tensor<3xui64>, tensor<3xui32>) {
      %s = stablehlo.constant dense<[7, 0xFFFFFFFFFFFFFFFF, 0]> : tensor<3xui64>
      %ns, %out = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<3xui32>)
      %ns2, %out2 = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<3xui32>)
      return %ns, %out, %ns2, %out2 : tensor<3xui64>, tensor<3xui32>, tensor<3xui64>, tensor<3xui32>
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // 12 bytes fit in one block; the 128-bit counter carries into state[2].
  EXPECT_EQ(Read<uint64_t>((*r)[0]), (std::vector<uint64_t>{7, 0, 1}));
  EXPECT_EQ(Read<uint32_t>((*r)[1]), Read<uint32_t>((*r)[3]));  // deterministic
}

TEST(RngBitGeneratorTest, RejectsWrongStateSize) {
  Status st = VerifyMlir(R"(
    func.func @main(%s: tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>) {
      %ns, %out = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)
      return %ns, %out : tensor<3xui64>, tensor<4xui32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::ops
