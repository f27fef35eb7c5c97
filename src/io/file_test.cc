#include "tpusim/io/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tpusim::io {
namespace {

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class AtomicFileWriterTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tpusim_file_test_" + std::to_string(getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "out.bin").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(AtomicFileWriterTest, WritesPiecesInOrderAndAppearsOnCommit) {
  StatusOr<AtomicFileWriter> file = AtomicFileWriter::Create(path_);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  std::string big(3 << 20, 'x');
  ASSERT_TRUE(file->Append({"head", "", big}).ok());
  ASSERT_TRUE(file->Append({"tail"}).ok());
  EXPECT_FALSE(std::filesystem::exists(path_));
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(ReadBytes(path_), "head" + big + "tail");
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
  EXPECT_FALSE(file->Commit().ok());  // only once
}

TEST_F(AtomicFileWriterTest, AnUncommittedWriterLeavesNothing) {
  ASSERT_TRUE(WriteFileAtomically(path_, "old").ok());
  {
    StatusOr<AtomicFileWriter> file = AtomicFileWriter::Create(path_);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(file->Append({"new"}).ok());
    AtomicFileWriter moved = std::move(*file);
    EXPECT_TRUE(std::filesystem::exists(path_ + ".tmp"));
  }
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
  EXPECT_EQ(ReadBytes(path_), "old");
}

TEST_F(AtomicFileWriterTest, DurableCommitAndErrors) {
  StatusOr<AtomicFileWriter> file = AtomicFileWriter::Create(path_);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(file->Append({"data"}).ok());
  ASSERT_TRUE(file->Commit(/*durable=*/true).ok());
  EXPECT_EQ(ReadBytes(path_), "data");
  ASSERT_TRUE(WriteFileDurably(path_, "again").ok());
  EXPECT_EQ(ReadBytes(path_), "again");

  StatusOr<AtomicFileWriter> nowhere = AtomicFileWriter::Create((dir_ / "no" / "x").string());
  EXPECT_FALSE(nowhere.ok());
  EXPECT_EQ(nowhere.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::io
