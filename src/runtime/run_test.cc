#include "tpusim/runtime/run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tpusim/io/npy.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::runtime {
namespace {

using ir::ElementType;

class RunProgramTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tpusim_run_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    options_.output_dir = (dir_ / "out").string();
    log_ = std::tmpfile();
  }
  void TearDown() override {
    std::fclose(log_);
    std::filesystem::remove_all(dir_);
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  void WriteProgram(const std::string& text) {
    options_.program = Path("p.mlir");
    std::ofstream(options_.program) << text;
  }

  std::string WriteF32(const std::string& name, ir::Shape shape, std::vector<float> values) {
    Tensor t = Tensor::Allocate(ir::Type::Tensor(ElementType::kF32, shape)).value();
    std::memcpy(t.mutable_raw(), values.data(), values.size() * 4);
    EXPECT_TRUE(io::WriteNpy(Path(name), t).ok());
    return Path(name);
  }

  bool OutputEmpty() const {
    return !std::filesystem::exists(options_.output_dir) ||
           std::filesystem::is_empty(options_.output_dir);
  }

  std::filesystem::path dir_;
  RunOptions options_;
  std::FILE* log_ = nullptr;
};

constexpr const char* kScale = R"(
func.func @main(%x: tensor<3xbf16>, %y: tensor<3xbf16>) -> tensor<3xbf16> {
  %0 = stablehlo.multiply %x, %y : tensor<3xbf16>
  return %0 : tensor<3xbf16>
})";

TEST_F(RunProgramTest, NarrowsFloatInputsAndWidensResults) {
  WriteProgram(kScale);
  // 1 + 2^-8 lies halfway between two bf16 values and rounds to even (1.0).
  options_.inputs = {"y=" + WriteF32("y.npy", {3}, {2, 2, 2}),
                     WriteF32("x.npy", {3}, {1.00390625f, 3, -0.5f})};
  Status st = RunProgram(options_, log_);
  ASSERT_TRUE(st.ok()) << st.ToString();
  Tensor r = io::ReadNpy(options_.output_dir + "/result0.npy").value();
  ASSERT_EQ(r.type(), ir::Type::Tensor(ElementType::kF32, {3}));
  EXPECT_EQ(std::vector<float>(r.data<float>(), r.data<float>() + 3),
            (std::vector<float>{2, 6, -1}));
}

TEST_F(RunProgramTest, RejectsInputsOfAnotherKindOrShape) {
  WriteProgram(kScale);
  Tensor ints = Tensor::Allocate(ir::Type::Tensor(ElementType::kSI32, {3})).value();
  ASSERT_TRUE(io::WriteNpy(Path("i.npy"), ints).ok());
  options_.random_inputs = true;
  options_.inputs = {Path("i.npy")};
  Status st = RunProgram(options_, log_);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("input %x"), std::string::npos) << st.message();
  options_.inputs = {WriteF32("w.npy", {1, 3}, {1, 2, 3})};
  EXPECT_EQ(RunProgram(options_, log_).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(OutputEmpty());
}

TEST_F(RunProgramTest, RandomInputsDependOnlyOnTheSeed) {
  WriteProgram(kScale);
  options_.random_inputs = true;
  auto run = [&](uint64_t seed) {
    options_.seed = seed;
    EXPECT_TRUE(RunProgram(options_, log_).ok());
    return io::ReadNpy(options_.output_dir + "/result0.npy").value();
  };
  Tensor a = run(7), b = run(7), c = run(8);
  EXPECT_TRUE(a.BitwiseEquals(b));
  EXPECT_FALSE(a.BitwiseEquals(c));
}

TEST_F(RunProgramTest, AFailingRunWritesNothing) {
  WriteProgram(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  check.expect_eq_const %x, dense<[9.0, 9.0]> : tensor<2xf32>
  return %x : tensor<2xf32>
})");
  options_.inputs = {WriteF32("x.npy", {2}, {1, 2})};
  EXPECT_EQ(RunProgram(options_, log_).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(OutputEmpty());
}

TEST_F(RunProgramTest, EntryChoice) {
  WriteProgram(R"(
func.func @first() -> tensor<i32> {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  return %0 : tensor<i32>
}
func.func @second() -> tensor<i32> {
  %0 = stablehlo.constant dense<2> : tensor<i32>
  return %0 : tensor<i32>
})");
  EXPECT_EQ(RunProgram(options_, log_).code(), StatusCode::kInvalidArgument);  // ambiguous
  options_.entry = "second";
  ASSERT_TRUE(RunProgram(options_, log_).ok());
  EXPECT_EQ(io::ReadNpy(options_.output_dir + "/result0.npy").value().data<int32_t>()[0], 2);
  options_.entry = "third";
  EXPECT_EQ(RunProgram(options_, log_).code(), StatusCode::kNotFound);
}

// On a slice, a tiled argument is cut into the devices' tiles, an unsharded
// result is written per device, and a tiled one is put back together.
TEST_F(RunProgramTest, SliceSplitsShardedInputsAndAssemblesResults) {
  WriteProgram(R"(
module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<2xf32> {mhlo.sharding = "{devices=[4]<=[4]}"})
      -> (tensor<2xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}, tensor<ui32>) {
    %d = stablehlo.partition_id : tensor<ui32>
    %f = stablehlo.convert %d : (tensor<ui32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %y = stablehlo.add %x, %b : tensor<2xf32>
    return %y, %d : tensor<2xf32>, tensor<ui32>
  }
})");
  options_.inputs = {WriteF32("x.npy", {8}, {0, 1, 2, 3, 4, 5, 6, 7})};
  options_.slice = "v5e-4";
  ASSERT_TRUE(RunProgram(options_, log_).ok());
  auto y = io::ReadNpy((std::filesystem::path(options_.output_dir) / "result0.npy").string());
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  std::vector<float> got(y->data<float>(), y->data<float>() + 8);
  EXPECT_EQ(got, (std::vector<float>{0, 1, 3, 4, 6, 7, 9, 10}));  // device d adds d to its tile
  for (int d = 0; d < 4; ++d) {
    auto id = io::ReadNpy((std::filesystem::path(options_.output_dir) /
                           ("result1.device" + std::to_string(d) + ".npy"))
                              .string());
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    EXPECT_EQ(id->data<uint32_t>()[0], static_cast<uint32_t>(d));
  }
}

}  // namespace
}  // namespace tpusim::runtime
