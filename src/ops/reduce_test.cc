#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "ops/testing/mlir_test_util.h"
#include "ops/util/index_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunAndRead;
using testing::RunMlir;
using testing::VerifyMlir;

TEST(ReduceTest, AppliesAddAcrossInnerDim) {
  auto r = RunAndRead<int64_t>(R"(
    func.func @main() -> tensor<2xi64> {
      %x = stablehlo.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi64>
      %c = stablehlo.constant dense<10> : tensor<i64>
      %r = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x3xi64>, tensor<i64>) -> tensor<2xi64>
      return %r : tensor<2xi64>
    })");
  EXPECT_EQ(r, (std::vector<int64_t>{13, 22}));
}

// Reduces a 2x3x2 f32 tensor over dims (0, 2) with `body` on %a, %b.
std::vector<float> ReduceF32(const std::string& body) {
  return RunAndRead<float>(R"(
    func.func @main() -> tensor<3xf32> {
      %x = stablehlo.constant dense<[[[1.0, 1.0e8], [2.0, -3.0], [0.5, 0.25]], [[-1.0e8, 4.0], [5.0, 6.0], [7.0, 8.0]]]> : tensor<2x3x2xf32>
      %c = stablehlo.constant dense<0.0> : tensor<f32>
      %r = stablehlo.reduce(%x init: %c) across dimensions = [0, 2] : (tensor<2x3x2xf32>, tensor<f32>) -> tensor<3xf32>
        reducer(%a: tensor<f32>, %b: tensor<f32>) {
          )" + body + R"(
        }
      return %r : tensor<3xf32>
    })");
}

TEST(ReduceTest, FoldsLeftInIndexOrder) {
  // Left fold: ((((0 + 1) + 1e8) + -1e8) + 4) = 4 in f32 (1 is lost).
  const std::vector<float> expected = {4.0f, 10.0f, 15.75f};
  EXPECT_EQ(ReduceF32("%s = stablehlo.add %a, %b : tensor<f32>\n"
                      "stablehlo.return %s : tensor<f32>"),
            expected);
  // The region path (not one op) gives the same fold.
  EXPECT_EQ(ReduceF32("%n = stablehlo.negate %b : tensor<f32>\n"
                      "%s = stablehlo.subtract %a, %n : tensor<f32>\n"
                      "stablehlo.return %s : tensor<f32>"),
            expected);
}

TEST(ReduceTest, VariadicArgmax) {
  auto r = RunMlir(R"(
    func.func @main() -> (tensor<2xf32>, tensor<2xi32>) {
      %x = stablehlo.constant dense<[[1.0, 7.0, 7.0], [9.0, 2.0, 3.0]]> : tensor<2x3xf32>
      %i = stablehlo.iota dim = 1 : tensor<2x3xi32>
      %cx = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %ci = stablehlo.constant dense<0> : tensor<i32>
      %r:2 = stablehlo.reduce(%x init: %cx), (%i init: %ci) across dimensions = [1] : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
        reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>) {
          %gt = stablehlo.compare GT, %b, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>
          %v = stablehlo.select %gt, %b, %a : tensor<i1>, tensor<f32>
          %k = stablehlo.select %gt, %d, %c : tensor<i1>, tensor<i32>
          stablehlo.return %v, %k : tensor<f32>, tensor<i32>
        }
      return %r#0, %r#1 : tensor<2xf32>, tensor<2xi32>
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<float>((*r)[0]), (std::vector<float>{7.0f, 9.0f}));
  EXPECT_EQ(Read<int32_t>((*r)[1]), (std::vector<int32_t>{1, 0}));
}

TEST(ReduceTest, Bf16MaxPropagatesNan) {
  auto r = RunAndRead<uint16_t>(R"(
    func.func @main() -> tensor<bf16> {
      %x = stablehlo.constant dense<[1.0, 0x7FC0, 3.0]> : tensor<3xbf16>
      %c = stablehlo.constant dense<0xFF80> : tensor<bf16>
      %r = stablehlo.reduce(%x init: %c) applies stablehlo.maximum across dimensions = [0] : (tensor<3xbf16>, tensor<bf16>) -> tensor<bf16>
      return %r : tensor<bf16>
    })");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0] & 0x7FC0, 0x7FC0) << std::hex << r[0];  // a NaN
}

TEST(ReduceTest, RejectsRepeatedDimension) {
  Status st = VerifyMlir(R"(
    func.func @main(%x: tensor<2x3xf32>, %c: tensor<f32>) -> tensor<3xf32> {
      %r = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
      return %r : tensor<3xf32>
    })");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

// A row-major left fold of `x` over `dims` (the reference order), with
// `add` on stored elements.
template <class S, class Add>
std::vector<S> FoldReference(const std::vector<S>& x, const std::vector<int64_t>& shape,
                             const std::vector<int64_t>& dims, S init, Add add) {
  std::vector<int64_t> kept_strides(shape.size(), 0), out_shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end()) {
      out_shape.push_back(shape[d]);
    }
  }
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end()) continue;
    kept_strides[d] = stride;
    stride *= shape[d];
  }
  std::vector<S> out(stride, init);
  std::vector<int64_t> index(shape.size(), 0);
  int64_t flat = 0;
  do {
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d) o += index[d] * kept_strides[d];
    out[o] = add(out[o], x[flat++]);
  } while (NextIndex(index, shape));
  return out;
}

std::string ShapeText(const std::vector<int64_t>& shape, const char* e) {
  std::string s = "tensor<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s + e + ">";
}

// A large f32 and bf16 sum over every set of dimensions (the loop splits
// the kept dimensions among threads): the serial fold's bits.
TEST(ReduceTest, ParallelFoldKeepsEachResultsOrder) {
  const std::vector<int64_t> shape = {6, 130, 210};
  const int64_t n = 6 * 130 * 210;
  std::vector<float> xf(n);
  std::vector<uint16_t> xh(n);
  for (int64_t i = 0; i < n; ++i) {
    xf[i] = std::sin(static_cast<float>(i) * 0.37f) * 1e3f + 1e-3f * static_cast<float>(i % 7);
    xh[i] = numerics::FloatToBf16(xf[i]);
  }
  const Tensor tf = testing::Make(ir::Type::Tensor(ir::ElementType::kF32, shape), xf);
  const Tensor th = testing::Make(ir::Type::Tensor(ir::ElementType::kBF16, shape), xh);
  const Tensor init_f =
      testing::Make(ir::Type::Tensor(ir::ElementType::kF32, {}), std::vector<float>{0.5f});
  const Tensor init_h =
      testing::Make(ir::Type::Tensor(ir::ElementType::kBF16, {}), std::vector<uint16_t>{0x3f00});
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}}) {
    std::vector<int64_t> out_shape;
    std::string dims_text;
    for (int64_t d = 0; d < 3; ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) out_shape.push_back(shape[d]);
    }
    for (size_t i = 0; i < dims.size(); ++i) dims_text += (i ? ", " : "") + std::to_string(dims[i]);
    for (const char* e : {"f32", "bf16"}) {
      const std::string in = ShapeText(shape, e), out = ShapeText(out_shape, e);
      const std::string s = ShapeText({}, e);
      auto r = RunMlir("func.func @main(%x: " + in + ", %c: " + s + ") -> " + out +
                           " {\n %r = stablehlo.reduce(%x init: %c) applies stablehlo.add "
                           "across dimensions = [" +
                           dims_text + "] : (" + in + ", " + s + ") -> " + out +
                           "\n return %r : " + out + "\n}",
                       std::string(e) == "f32" ? std::vector<Tensor>{tf, init_f}
                                               : std::vector<Tensor>{th, init_h});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      if (std::string(e) == "f32") {
        EXPECT_EQ(Read<float>((*r)[0]),
                  FoldReference(xf, shape, dims, 0.5f, [](float a, float b) { return a + b; }))
            << dims_text;
      } else {
        EXPECT_EQ(Read<uint16_t>((*r)[0]),
                  FoldReference(xh, shape, dims, uint16_t{0x3f00},
                                [](uint16_t a, uint16_t b) {
                                  return numerics::FloatToBf16(numerics::Bf16ToFloat(a) +
                                                               numerics::Bf16ToFloat(b));
                                }))
            << dims_text;
      }
    }
  }
}

TEST(MapTest, AppliesComputationPerElement) {
  auto r = RunAndRead<int64_t>(R"(
    func.func @main() -> tensor<2x2xi64> {
      %a = stablehlo.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>
      %b = stablehlo.constant dense<[[4, 5], [6, 7]]> : tensor<2x2xi64>
      %r = "stablehlo.map"(%a, %b) ({
      ^bb0(%x: tensor<i64>, %y: tensor<i64>):
        %m = stablehlo.multiply %x, %y : tensor<i64>
        %s = stablehlo.subtract %m, %x : tensor<i64>
        stablehlo.return %s : tensor<i64>
      }) {dimensions = array<i64: 0, 1>} : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
      return %r : tensor<2x2xi64>
    })");
  EXPECT_EQ(r, (std::vector<int64_t>{0, 4, 10, 18}));
}

}  // namespace
}  // namespace tpusim::ops
