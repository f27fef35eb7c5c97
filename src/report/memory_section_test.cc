#include "report/memory_section.h"

#include <gtest/gtest.h>

namespace tpusim::report {
namespace {

using compiler::BufferKind;
using compiler::MemoryPlan;

MemoryPlan Example() {
  MemoryPlan p;
  p.function = "main";
  p.capacity_bytes = int64_t{16} << 30;
  p.peak_bytes = int64_t{3} << 29;  // 1.5 GiB
  p.argument_bytes = int64_t{1} << 30;
  p.temp_bytes = int64_t{1} << 29;
  p.max_live_bytes = p.peak_bytes;
  p.sum_of_buffers = int64_t{2} << 30;
  p.num_buffers = 3;
  p.peak_at = "stablehlo.dot_general %3 at f.mlir:4:8";
  p.live_at_peak = {
      {"%arg0", "tensor<16384x16384xf32>", "parameter 0", BufferKind::kArgument, int64_t{1} << 30},
      {"%3", "tensor<8192x16384xf32>", "stablehlo.dot_general at f.mlir:4:8",
       BufferKind::kTemporary, int64_t{1} << 29}};
  return p;
}

TEST(MemorySection, Text) {
  EXPECT_EQ(MemoryText(Example()),
            "HBM: peak 1.5 GiB of 16 GiB (9.4%): arguments 1 GiB, temporaries 512 MiB; "
            "without reuse 2 GiB; 3 buffers\n"
            "  at the peak (stablehlo.dot_general %3 at f.mlir:4:8), largest live buffers:\n"
            "    1 GiB  %arg0 tensor<16384x16384xf32> argument from parameter 0\n"
            "    512 MiB  %3 tensor<8192x16384xf32> temporary from stablehlo.dot_general at "
            "f.mlir:4:8\n");
}

TEST(MemorySection, Json) {
  nlohmann::json j = MemoryJson(Example());
  EXPECT_EQ(j["peak_bytes"], int64_t{3} << 29);
  EXPECT_EQ(j["capacity_bytes"], int64_t{16} << 30);
  EXPECT_EQ(j["temp_bytes"], int64_t{1} << 29);
  EXPECT_EQ(j["num_buffers"], 3);
  ASSERT_EQ(j["live_at_peak"].size(), 2u);
  EXPECT_EQ(j["live_at_peak"][1]["kind"], "temporary");
  EXPECT_EQ(j["live_at_peak"][1]["op"], "stablehlo.dot_general at f.mlir:4:8");
}

}  // namespace
}  // namespace tpusim::report
