#include "tpusim/runtime/run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tpusim/io/npy.h"
#include "tpusim/runtime/checkpoint.h"
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


// Ctrl-C (progress.stop) ends an endless loop with the report of what ran,
// on one device and on the devices of a slice, and writes no results.
constexpr const char* kEndless = R"(
module attributes {mhlo.num_partitions = %d : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%%x: tensor<4xf32>) -> tensor<4xf32> {
    %%r = stablehlo.while(%%a = %%x) : tensor<4xf32>
      cond {
        %%t = stablehlo.constant dense<true> : tensor<i1>
        stablehlo.return %%t : tensor<i1>
      } do {
        %%b = stablehlo.add %%a, %%a : tensor<4xf32>
        stablehlo.return %%b : tensor<4xf32>
      }
    return %%r : tensor<4xf32>
  }
})";

class StopTest : public RunProgramTest {
 protected:
  // Runs the program, setting progress.stop once `ops` ops have run.
  Status RunAndStop(int64_t ops) {
    exec::Progress progress;
    options_.progress = &progress;
    std::thread stopper([&] {
      while (progress.ops.load() < ops) std::this_thread::yield();
      progress.stop.store(true);
    });
    Status st = RunProgram(options_, log_);
    stopper.join();
    options_.progress = nullptr;
    return st;
  }

  std::string Log() const {
    std::rewind(log_);
    std::string text;
    for (int c; (c = std::fgetc(log_)) != EOF;) text += static_cast<char>(c);
    return text;
  }
};

TEST_F(StopTest, AnEndlessLoopStopsWithThePartialReport) {
  char text[1024];
  std::snprintf(text, sizeof text, kEndless, 1);
  WriteProgram(text);
  options_.random_inputs = true;
  options_.report_json = Path("report.json");
  Status st = RunAndStop(3000);
  EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.ToString();
  EXPECT_EQ(st.message().rfind(Path("p.mlir") + ":", 0), 0u) << st.message();
  EXPECT_TRUE(OutputEmpty());
  const std::string log = Log();
  EXPECT_NE(log.find("note: stopped on request after"), std::string::npos) << log;
  // The report counts the iterations that ran: a thousand or more.
  const size_t times = log.find(" x", log.find("costliest ops:"));
  ASSERT_NE(times, std::string::npos) << log;
  EXPECT_GE(std::stoll(log.substr(times + 2)), 1000) << log;
  std::ifstream json(options_.report_json);
  std::string report((std::istreambuf_iterator<char>(json)), {});
  EXPECT_NE(report.find("stopped on request"), std::string::npos);
}

TEST_F(StopTest, DevicesOfASliceStopTogether) {
  char text[1024];
  std::snprintf(text, sizeof text, kEndless, 4);
  WriteProgram(text);
  options_.random_inputs = true;
  options_.slice = "v5e-4";
  Status st = RunAndStop(4000);
  EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.ToString();
  EXPECT_TRUE(OutputEmpty());
  EXPECT_NE(Log().find("note: stopped on request after"), std::string::npos) << Log();
}

TEST_F(StopTest, ATrainingLoopCheckpointsItsLastFinishedStep) {
  WriteProgram(R"(
func.func @main(%w: tensor<4xf32>) -> tensor<4xf32> {
  %b = stablehlo.add %w, %w : tensor<4xf32>
  return %b : tensor<4xf32>
})");
  options_.random_inputs = true;
  options_.steps = 1000000000;
  options_.checkpoint_dir = Path("ck");
  Status st = RunAndStop(50);  // one op a step
  EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.ToString();
  StatusOr<Manifest> manifest = ReadManifest(options_.checkpoint_dir);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_GE(manifest->step, 49);
  const std::string said = "stopped in step " + std::to_string(manifest->step + 1) +
                           "; the checkpoint in " + options_.checkpoint_dir + " holds step " +
                           std::to_string(manifest->step);
  EXPECT_NE(Log().find(said), std::string::npos) << Log();
  EXPECT_TRUE(OutputEmpty());
}

}  // namespace
}  // namespace tpusim::runtime
