#include "tpusim/runtime/check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tpusim::runtime {
namespace {

class CheckRunner : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("tpusim_check_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  std::filesystem::path dir_;
};

constexpr const char* kCases = R"(func.func @pass() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<1> : tensor<i32>
  func.return
}

// -----

func.func @fail() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<2> : tensor<i32>
  func.return
}

// -----

func.func @probe() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_serialized_eq %0, probe_id = "p" : tensor<i32>
  func.return
}

// -----

func.func @takes_args(%a: tensor<i32>) -> tensor<i32> {
  func.return %a : tensor<i32>
}

// -----

func.func @broken() {
  %0 = stablehlo.constant dense<1> : tensor<i32
}
)";

TEST_F(CheckRunner, ReportsEachCase) {
  std::string path = Write("cases.mlir", kCases);
  std::vector<CaseResult> r = CheckFile(path, {});
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(FormatCaseResult(r[0]), "PASS " + path + ":1 pass");
  EXPECT_EQ(r[1].outcome, CaseResult::kFail);
  EXPECT_EQ(r[1].line, 9);
  EXPECT_NE(r[1].reason.find(path + ":11:3: check.expect_eq_const: 1 of 1 elements differ"),
            std::string::npos)
      << r[1].reason;
  EXPECT_EQ(r[2].outcome, CaseResult::kSkip);
  EXPECT_NE(r[2].reason.find("expect_serialized_eq"), std::string::npos);
  EXPECT_EQ(r[3].outcome, CaseResult::kSkip);
  EXPECT_EQ(r[3].line, 24);  // the case's first line: no function ran
  EXPECT_EQ(r[4].outcome, CaseResult::kFail);
  EXPECT_EQ(r[4].line, 30);
  EXPECT_EQ(r[4].reason.find('\n'), std::string::npos) << "reasons are one line";
}

TEST_F(CheckRunner, MissingFileIsAFailedCase) {
  std::vector<CaseResult> r = CheckFile((dir_ / "nope.mlir").string(), {});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].outcome, CaseResult::kFail);
  EXPECT_NE(r[0].reason.find("cannot open"), std::string::npos);
}

TEST_F(CheckRunner, PrintsLinesInFileOrderThenTotals) {
  std::vector<std::string> files;
  for (int i = 0; i < 6; ++i) {
    files.push_back(Write("f" + std::to_string(i) + ".mlir", kCases));
  }
  std::string out_path = (dir_ / "out.txt").string();
  std::FILE* out = std::fopen(out_path.c_str(), "w");
  ASSERT_NE(out, nullptr);
  CheckSummary s = CheckFiles(files, {}, out);
  std::fclose(out);
  EXPECT_EQ(s.passed, 6);
  EXPECT_EQ(s.failed, 12);
  EXPECT_EQ(s.skipped, 12);

  std::ifstream in(out_path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 31u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(lines[5 * i], "PASS " + files[i] + ":1 pass");
  }
  EXPECT_EQ(lines.back(), "6 passed, 12 failed, 12 skipped");
}

TEST_F(CheckRunner, TotalsOmitSkippedWhenNone) {
  std::string path = Write("one.mlir", R"(func.func @main() {
  func.return
})");
  std::string out_path = (dir_ / "out.txt").string();
  std::FILE* out = std::fopen(out_path.c_str(), "w");
  CheckFiles({path}, {}, out);
  std::fclose(out);
  std::ifstream in(out_path);
  std::string first, last;
  std::getline(in, first);
  std::getline(in, last);
  EXPECT_EQ(first, "PASS " + path + ":1 main");
  EXPECT_EQ(last, "1 passed, 0 failed");
}

}  // namespace
}  // namespace tpusim::runtime
