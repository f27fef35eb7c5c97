#include "tpusim/runtime/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tpusim/io/npy.h"

namespace tpusim::runtime {
namespace {

namespace fs = std::filesystem;
using ir::ElementType;

Tensor Filled(ElementType e, ir::Shape shape, uint8_t seed) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(e, std::move(shape))).value();
  for (int64_t i = 0; i < t.size_bytes(); ++i) t.mutable_raw()[i] = static_cast<uint8_t>(seed + i);
  return t;
}

class CheckpointTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("tpusim_checkpoint_test_" + std::to_string(getpid())))
               .string();
    fs::remove_all(dir_);
    // bf16 is stored widened to float32; its bytes must survive the trip.
    Tensor bf16 = Tensor::Allocate(ir::Type::Tensor(ElementType::kBF16, {2})).value();
    const uint16_t halves[] = {0x3f80, 0xc040};  // 1.0, -3.0
    std::memcpy(bf16.mutable_raw(), halves, sizeof halves);
    state_ = {Filled(ElementType::kF32, {2, 3}, 7), Filled(ElementType::kSI32, {}, 1), bf16};
    for (const Tensor& t : state_) types_.push_back(t.type());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  std::string dir_;
  std::vector<Tensor> state_;
  std::vector<ir::Type> types_;
};

TEST_F(CheckpointTest, RoundTrips) {
  ASSERT_TRUE(WriteCheckpoint(dir_, 3, state_).ok());
  StatusOr<Manifest> m = ReadManifest(dir_);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->step, 3);
  ASSERT_EQ(m->shards.size(), 3u);
  EXPECT_EQ(m->shards[0].file, "step-3/state0.npy");
  EXPECT_EQ(m->shards[2].type, types_[2]);
  StatusOr<std::vector<Tensor>> loaded = LoadCheckpoint(dir_, *m, types_);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  for (size_t i = 0; i < state_.size(); ++i) {
    EXPECT_EQ((*loaded)[i].type(), types_[i]);
    EXPECT_EQ(std::memcmp((*loaded)[i].raw(), state_[i].raw(), state_[i].size_bytes()), 0) << i;
  }
}

TEST_F(CheckpointTest, NoManifestIsNotFound) {
  EXPECT_EQ(ReadManifest(dir_).status().code(), StatusCode::kNotFound);
}

TEST_F(CheckpointTest, KeepsTheLatestTwoSteps) {
  for (int64_t step : {1, 2, 3, 4}) ASSERT_TRUE(WriteCheckpoint(dir_, step, state_).ok());
  EXPECT_FALSE(fs::exists(Path("step-1")));
  EXPECT_FALSE(fs::exists(Path("step-2")));
  EXPECT_TRUE(fs::exists(Path("step-3/state0.npy")));
  EXPECT_EQ(ReadManifest(dir_)->step, 4);
}

TEST_F(CheckpointTest, TornTemporaryManifestIsIgnored) {
  ASSERT_TRUE(WriteCheckpoint(dir_, 1, state_).ok());
  // A crash while writing step 2: half its shards and half a manifest.
  fs::create_directories(Path("step-2"));
  std::ofstream(Path("step-2/state0.npy.tmp")) << "\x93NUMPY";
  std::ofstream(Path("manifest.json.tmp")) << R"({"version": 1, "step": 2, "sha)";
  StatusOr<Manifest> m = ReadManifest(dir_);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->step, 1);
  EXPECT_TRUE(LoadCheckpoint(dir_, *m, types_).ok());
  // The next checkpoint writes over the leftovers.
  ASSERT_TRUE(WriteCheckpoint(dir_, 2, state_).ok());
  EXPECT_EQ(ReadManifest(dir_)->step, 2);
  EXPECT_FALSE(fs::exists(Path("manifest.json.tmp")));
}

TEST_F(CheckpointTest, MalformedManifestIsInvalid) {
  ASSERT_TRUE(WriteCheckpoint(dir_, 1, state_).ok());
  for (const char* text : {"{\"version\": 1, \"st", "[]", R"({"version": 1, "step": 1})",
                           R"({"version": 1, "step": 1, "shards": [{"file": "../x.npy",
                               "dtype": "f32", "shape": [2]}]})",
                           R"({"version": 1, "step": 1, "shards": [{"file": "a.npy",
                               "dtype": "float", "shape": [2]}]})"}) {
    std::ofstream(Path("manifest.json"), std::ios::trunc) << text;
    StatusOr<Manifest> m = ReadManifest(dir_);
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(m.status().message().find("manifest.json: malformed checkpoint manifest"),
              std::string::npos)
        << m.status().message();
  }
}

TEST_F(CheckpointTest, MissingShardIsNotFound) {
  ASSERT_TRUE(WriteCheckpoint(dir_, 5, state_).ok());
  fs::remove(Path("step-5/state1.npy"));
  StatusOr<std::vector<Tensor>> loaded = LoadCheckpoint(dir_, *ReadManifest(dir_), types_);
  EXPECT_EQ(loaded.status().code(), StatusCode::kNotFound);
  EXPECT_NE(loaded.status().message().find("state1.npy"), std::string::npos)
      << loaded.status().message();
}

TEST_F(CheckpointTest, MismatchedShapesAreInvalid) {
  ASSERT_TRUE(WriteCheckpoint(dir_, 2, state_).ok());
  Manifest m = *ReadManifest(dir_);
  // The program's state differs from the checkpoint's.
  std::vector<ir::Type> other = types_;
  other[0] = ir::Type::Tensor(ElementType::kF32, {3, 2});
  StatusOr<std::vector<Tensor>> loaded = LoadCheckpoint(dir_, m, other);
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      loaded.status().message().find("tensor<2x3xf32>, but the program takes tensor<3x2xf32>"),
      std::string::npos)
      << loaded.status().message();
  EXPECT_EQ(LoadCheckpoint(dir_, m, {types_[0]}).status().code(), StatusCode::kInvalidArgument);
  // A shard that holds another shape than its manifest says.
  ASSERT_TRUE(io::WriteNpy(Path("step-2/state0.npy"), Filled(ElementType::kF32, {6}, 0)).ok());
  loaded = LoadCheckpoint(dir_, m, types_);
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("holds tensor<6xf32>, but the manifest says"),
            std::string::npos)
      << loaded.status().message();
}

TEST_F(CheckpointTest, TuplesAreRefused) {
  EXPECT_EQ(WriteCheckpoint(dir_, 1, {Tensor::Tuple({state_[0]})}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadManifest(dir_).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tpusim::runtime
