// StableHLO's dynamic custom calls run as they are (their window, k and shape
// operands given as values), in the forms jax.export writes them; the
// refine-shapes goldens (src/compiler/refine_shapes_test.cc) check that
// they become their static ops.
#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"
#include "tpusim/ops/custom_call.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunMlir;
using testing::VerifyMlir;

// cumsum over dimension 0 of a 3x2 input as jax's reduce_window lowering
// writes it: a window of 3 rows padded by 2 above.
constexpr const char* kCumsum = R"(module @jit_f {
  func.func private @reduce_window_stablehlo.add_float32_reducer(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %a, %b : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func public @main() -> tensor<3x2xf32> {
    %x = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %dims = stablehlo.constant dense<[3, 1]> : tensor<2xi32>
    %ones = stablehlo.constant dense<1> : tensor<2xi32>
    %pad = stablehlo.constant dense<[[2, 0], [0, 0]]> : tensor<2x2xi32>
    %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %zero, %dims, %ones, %ones, %ones, %pad) {api_version = 2 : i32, called_computations = [@reduce_window_stablehlo.add_float32_reducer]} : (tensor<3x2xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<3x2xf32>
    return %0 : tensor<3x2xf32>
  }
})";

TEST(DynamicCustomCalls, ReduceWindowFoldsWithTheReducerFunction) {
  auto r = RunMlir(kCumsum);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<float>((*r)[0]), (std::vector<float>{1, 2, 4, 6, 9, 12}));
}

TEST(DynamicCustomCalls, TopKOfTheLastDimension) {
  auto r = RunMlir(R"(module @jit_f {
  func.func public @main() -> (tensor<2x3xf32>, tensor<2x3xi32>) {
    %x = stablehlo.constant dense<[[3.0, 9.0, 1.0, 7.0, 9.0], [-1.0, 8.0, 4.0, 6.0, 0.5]]> : tensor<2x5xf32>
    %k = stablehlo.constant dense<3> : tensor<i32>
    %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) {api_version = 2 : i32} : (tensor<2x5xf32>, tensor<i32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
    return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi32>
  }
})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<float>((*r)[0]), (std::vector<float>{9, 9, 7, 8, 6, 4}));
  EXPECT_EQ(Read<int32_t>((*r)[1]), (std::vector<int32_t>{1, 4, 3, 1, 3, 2}));
}

TEST(DynamicCustomCalls, ApproxTopKTakesKAfterTheInitsAndSkipsShapeOperands) {
  auto r = RunMlir(R"(module @jit_f {
  func.func private @top_k_gt_f32_comparator(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>) -> tensor<i1> {
    %0 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    return %0 : tensor<i1>
  }
  func.func public @main() -> (tensor<3xf32>, tensor<3xi32>) {
    %x = stablehlo.constant dense<[3.0, 9.0, 1.0, 7.0, 5.0, 8.0, 0.0]> : tensor<7xf32>
    %iota = stablehlo.iota dim = 0 : tensor<7xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<-1> : tensor<i32>
    %k = stablehlo.constant dense<3> : tensor<i32>
    %shape = stablehlo.constant dense<3> : tensor<1xi32>
    %0:2 = stablehlo.custom_call @stablehlo.dynamic_approx_top_k(%x, %iota, %cst, %c, %k, %shape, %shape) {called_computations = [@top_k_gt_f32_comparator], indices_of_shape_operands = dense<[5, 6]> : tensor<2xi64>, mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 0 : i64, reduction_input_size_override = -1 : i64}} : (tensor<7xf32>, tensor<7xi32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<3xf32>, tensor<3xi32>)
    return %0#0, %0#1 : tensor<3xf32>, tensor<3xi32>
  }
})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<float>((*r)[0]), (std::vector<float>{9, 8, 7}));
  EXPECT_EQ(Read<int32_t>((*r)[1]), (std::vector<int32_t>{1, 5, 3}));
}

TEST(DynamicCustomCalls, RngBitGeneratorMatchesTheStaticOp) {
  auto r = RunMlir(R"(module @jit_f {
  func.func public @main() -> (tensor<2xui64>, tensor<3x4xui32>, tensor<2xui64>, tensor<3x4xui32>) {
    %s = stablehlo.constant dense<[42, 7]> : tensor<2xui64>
    %shape = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
    %0:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%s, %shape) {api_version = 2 : i32, rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (tensor<2xui64>, tensor<2xi32>) -> (tensor<2xui64>, tensor<3x4xui32>)
    %1:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>)
    return %0#0, %0#1, %1#0, %1#1 : tensor<2xui64>, tensor<3x4xui32>, tensor<2xui64>, tensor<3x4xui32>
  }
})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<uint64_t>((*r)[0]), Read<uint64_t>((*r)[2]));
  EXPECT_EQ(Read<uint32_t>((*r)[1]), Read<uint32_t>((*r)[3]));
  EXPECT_NE(Read<uint32_t>((*r)[1]), std::vector<uint32_t>(12, 0));
}

TEST(DynamicCustomCalls, WrongOperandsNameTheTarget) {
  Status s = VerifyMlir(R"(module @jit_f {
  func.func public @main(%x: tensor<2x5xf32>, %k: tensor<2xi32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
    %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<2x5xf32>, tensor<2xi32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
    return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi32>
  }
})");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("custom_call @stablehlo.dynamic_top_k"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("k (operand 1) must be an integer tensor of shape []"),
            std::string::npos)
      << s.ToString();

  s = VerifyMlir(R"(module @jit_f {
  func.func private @r(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
    return %a : tensor<f32>
  }
  func.func public @main(%x: tensor<4xf32>, %z: tensor<f32>, %w: tensor<1xi32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %z, %w, %w, %w, %w) {called_computations = [@r]} : (tensor<4xf32>, tensor<f32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("5 window operands"), std::string::npos) << s.ToString();
}

TEST(DynamicCustomCalls, KOutOfRangeIsAnError) {
  auto r = RunMlir(R"(module @jit_f {
  func.func public @main() -> (tensor<2x3xf32>, tensor<2x3xi32>) {
    %x = stablehlo.constant dense<0.0> : tensor<2x5xf32>
    %k = stablehlo.constant dense<9> : tensor<i32>
    %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<2x5xf32>, tensor<i32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
    return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi32>
  }
})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("k = 9 is out of range"), std::string::npos)
      << r.status().ToString();
}

// Priced as the static op when the sizes are constants: top_k as a sort.
TEST(DynamicCustomCalls, PricedAsTheirStaticForm) {
  auto module = frontend::ParseStableHlo(R"(module @jit_f {
  func.func public @main(%x: tensor<8x1024xf32>) -> (tensor<8x4xf32>, tensor<8x4xi32>) {
    %k = stablehlo.constant dense<4> : tensor<i32>
    %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<8x1024xf32>, tensor<i32>) -> (tensor<8x4xf32>, tensor<8x4xi32>)
    return %0#0, %0#1 : tensor<8x4xf32>, tensor<8x4xi32>
  }
})",
                                         "t.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation* call = nullptr;
  for (const auto& op : (*module)->Lookup("main")->entry().ops()) {
    if (op->name_str() == "stablehlo.custom_call") call = op.get();
  }
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(NeedsStaticForm(*call));
  Work w = OpRegistry::Lookup("stablehlo.custom_call")->work(*call);
  EXPECT_GT(w.vector_ops[static_cast<int>(VectorClass::kAlu)], 8 * 1024)
      << "a sort of each row, not just its traffic";
}

}  // namespace
}  // namespace tpusim::ops
