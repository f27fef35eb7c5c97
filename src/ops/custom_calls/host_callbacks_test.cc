// Host callbacks and host offloading: a callback cannot run (tpusim has no
// Python to call) but is timed as a round trip over the host link; a move
// to host memory is the value itself, timed over the host link.
#include <gtest/gtest.h>

#include "ops/testing/mlir_test_util.h"
#include "tpusim/hw/chip.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/timing/timing.h"

namespace tpusim::ops {
namespace {

using testing::Read;
using testing::RunMlir;

StatusOr<timing::Timeline> TimeIt(const std::string& text, const hw::ChipSpec& chip) {
  auto module = frontend::ParseStableHlo(text, "c.mlir");
  if (!module.ok()) return module.status();
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(**module));
  return timing::TimeStatically(**module, "main", chip, {});
}

// jax.pure_callback on CPU: the FFI target, the callback's index in its
// backend_config.
constexpr const char* kCpuCallback = R"(module @jit_f {
  func.func public @main(%arg0: tensor<1024xf32>) -> tensor<1024xf32> {
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {api_version = 4 : i32, has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}} : (tensor<1024xf32>) -> tensor<1024xf32>
    return %0 : tensor<1024xf32>
  }
})";

// jax.pure_callback on TPU: a send of the operand to the host and a recv
// of the result, named by the callback.
constexpr const char* kTpuCallback = R"(module @jit_f {
  func.func public @main(%arg0: tensor<1024xf32>) -> tensor<1024xf32> {
    %0 = stablehlo.create_token : !stablehlo.token
    %1 = "stablehlo.send"(%arg0, %0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true}> {mhlo.frontend_attributes = {_xla_host_transfer_handler_name = "my_callback", _xla_host_transfer_rendezvous = "my_callback"}} : (tensor<1024xf32>, !stablehlo.token) -> !stablehlo.token
    %2:2 = "stablehlo.recv"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 3>, is_host_transfer = true}> {mhlo.frontend_attributes = {_xla_host_transfer_handler_name = "my_callback", _xla_host_transfer_original_type = "f32", _xla_host_transfer_rendezvous = "my_callback"}} : (!stablehlo.token) -> (tensor<1024xf32>, !stablehlo.token)
    return %2#0 : tensor<1024xf32>
  }
})";

TEST(HostCallback, RunningOneIsAClearError) {
  auto cpu =
      RunMlir(kCpuCallback, {testing::Make<float>(ir::Type::Tensor(ir::ElementType::kF32, {1024}),
                                                  std::vector<float>(1024, 1.0f))});
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(cpu.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(cpu.status().ToString().find("xla_ffi_python_cpu_callback (callback 0)"),
            std::string::npos)
      << cpu.status().ToString();
  EXPECT_NE(cpu.status().ToString().find("cannot call back into Python"), std::string::npos);
  auto tpu =
      RunMlir(kTpuCallback, {testing::Make<float>(ir::Type::Tensor(ir::ElementType::kF32, {1024}),
                                                  std::vector<float>(1024, 1.0f))});
  ASSERT_FALSE(tpu.ok());
  EXPECT_NE(tpu.status().ToString().find("host callback 'my_callback'"), std::string::npos)
      << tpu.status().ToString();
}

TEST(HostCallback, TimingPricesARoundTripOverTheHostLink) {
  const hw::ChipSpec chip = hw::FindPreset("v5e").value();
  for (const char* text : {kCpuCallback, kTpuCallback}) {
    auto t = TimeIt(text, chip);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    // 4 KiB each way at 15 GB/s, and 10 us per transfer.
    const double want = 2 * (4096 / 15e9 + 10e-6);
    EXPECT_NEAR(t->total_seconds(), want, want * 0.05 + 3 * chip.op_overhead_s);
  }
}

constexpr const char* kOffload = R"(module @jit_f {
  func.func public @main(%arg0: tensor<256x1024xf32>) -> (tensor<256x1024xf32> {mhlo.memory_kind = "pinned_host"}) {
    %0 = stablehlo.custom_call @annotate_device_placement(%arg0) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}} : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
    return %0 : tensor<256x1024xf32>
  }
})";

TEST(HostOffload, AMoveToHostIsTheValueTimedOverTheHostLink) {
  auto in = testing::Make<float>(ir::Type::Tensor(ir::ElementType::kF32, {256, 1024}),
                                 std::vector<float>(256 * 1024, 2.5f));
  auto r = RunMlir(kOffload, {in});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read<float>((*r)[0]), Read<float>(in));
  hw::ChipSpec chip = hw::FindPreset("v6e").value();
  auto t = TimeIt(kOffload, chip);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const double one_way = 1 << 20;  // bytes
  EXPECT_NEAR(t->total_seconds(), one_way / 32e9 + 10e-6 + chip.op_overhead_s, 1e-7);
  // A chip model without a host link prices the move as free and says so.
  chip.host.bytes_per_s = 0;
  auto free = TimeIt(kOffload, chip);
  ASSERT_TRUE(free.ok());
  EXPECT_LT(free->total_seconds(), 1e-5);
  bool noted = false;
  for (const std::string& n : free->notes()) noted |= n.find("lacks: priced as free") != n.npos;
  EXPECT_TRUE(noted);
}

TEST(HostOffload, AnUnknownPlacementIsAnError) {
  std::string text = kOffload;
  text.replace(text.find("\"pinned_host\"}} :"), 13, "\"somewhere\"");
  Status st = testing::VerifyMlir(text);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
}

}  // namespace
}  // namespace tpusim::ops
