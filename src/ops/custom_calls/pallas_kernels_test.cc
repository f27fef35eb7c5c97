// Pallas kernels: a TPU kernel cannot run but is priced from its
// cost_estimate; without one, or for a GPU kernel, timing fails too.
#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"
#include "tpusim/hw/chip.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/timing/timing.h"

namespace tpusim::ops {
namespace {

using testing::RunMlir;

// A module whose @main calls custom call `target` with `attrs` on a 256x256
// f32 array.
std::string Kernel(const std::string& target, const std::string& attrs) {
  return R"(module @m {
  func.func @main(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
    %0 = stablehlo.custom_call @)" +
         target + "(%x) {" + attrs + R"(} : (tensor<256x256xf32>) -> tensor<256x256xf32>
    return %0 : tensor<256x256xf32>
  }
})";
}

// What JAX writes: custom_call_config with the Mosaic body (base64) and the
// kernel's cost_estimate (one key a line, as JAX prints it).
constexpr const char* kWithCost =
    R"(backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElSMjEuMC4w\22, )"
    R"(\22cost_estimate\22: {\0A\22bytes_accessed\22:524288,\0A\22flops\22:33554432,\0A)"
    R"(\22remote_bytes_transferred\22:0,\0A\22transcendentals\22:65536\0A}}}", kernel_name = "matmul_kernel")";
constexpr const char* kNoCost =
    R"(backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElSMjEuMC4w\22}}", kernel_name = "my_kernel")";

// Runs @main of `text` on a 256x256 array of ones.
StatusOr<std::vector<Tensor>> RunOnOnes(const std::string& text) {
  const ir::Type t = ir::Type::Tensor(ir::ElementType::kF32, {256, 256});
  return RunMlir(text, {testing::Make<float>(t, std::vector<float>(256 * 256, 1.0f))});
}

StatusOr<timing::Timeline> TimeIt(const std::string& text) {
  auto module = frontend::ParseStableHlo(text, "k.mlir");
  if (!module.ok()) return module.status();
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(**module));
  TPUSIM_ASSIGN_OR_RETURN(hw::ChipSpec chip, hw::FindPreset("v5e"));
  return timing::TimeStatically(**module, "main", chip, {});
}

TEST(PallasKernel, RunningOneNamesTheKernel) {
  auto r = RunOnOnes(Kernel("tpu_custom_call", kWithCost));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().ToString().find("Pallas TPU kernel 'matmul_kernel'"), std::string::npos)
      << r.status().ToString();
}

TEST(PallasKernel, TimingPricesItsCostEstimate) {
  auto module = frontend::ParseStableHlo(Kernel("tpu_custom_call", kWithCost), "k.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation& op = *(*module)->Lookup("main")->entry().ops().front();
  Work w = OpRegistry::Lookup(op.name())->work(op);
  EXPECT_EQ(w.flops, 33554432);
  ASSERT_EQ(w.matmuls.size(), 1u);
  EXPECT_GE(w.matmuls[0].flops(), w.flops);
  EXPECT_LT(w.matmuls[0].flops(), w.flops + 2 * 256 * 256);
  EXPECT_EQ(w.vector_ops[static_cast<int>(VectorClass::kTranscendental)], 65536);
  EXPECT_EQ(w.bytes_read(), 524288);
  auto t = TimeIt(Kernel("tpu_custom_call", kWithCost));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_GT(t->total_seconds(), 0);
  bool noted = false;
  for (const std::string& n : t->notes()) noted |= n.find("from its cost_estimate") != n.npos;
  EXPECT_TRUE(noted);
}

TEST(PallasKernel, WithoutACostEstimateTimingFails) {
  auto t = TimeIt(Kernel("tpu_custom_call", kNoCost));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().ToString().find("'my_kernel' has no cost_estimate"), std::string::npos)
      << t.status().ToString();
  EXPECT_NE(t.status().ToString().find("k.mlir:3:"), std::string::npos) << t.status().ToString();
}

TEST(PallasKernel, GpuKernelsAreRefused) {
  for (const char* target : {"mosaic_gpu", "__gpu$xla.gpu.triton"}) {
    const std::string text = Kernel(target, "kernel_name = \"k\"");
    auto r = RunOnOnes(text);
    ASSERT_FALSE(r.ok()) << target;
    EXPECT_NE(r.status().ToString().find("a GPU kernel"), std::string::npos)
        << r.status().ToString();
    EXPECT_FALSE(TimeIt(text).ok()) << target;
  }
}

TEST(PallasKernel, AMissingBodyIsAnError) {
  Status st = testing::VerifyMlir(Kernel("tpu_custom_call", "backend_config = \"{}\""));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
}

}  // namespace
}  // namespace tpusim::ops
