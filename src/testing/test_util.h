// Helpers the unit tests of every module share (header-only; tests only).
#ifndef TPUSIM_TESTING_TEST_UTIL_H_
#define TPUSIM_TESTING_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/hw/chip.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::test {

// The whole file at `path` ("" if it cannot be read).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The verified, renumbered module of StableHLO `text`; null (with a test
// failure) if it does not parse or verify.
inline std::unique_ptr<ir::Module> ParseVerified(std::string_view text,
                                                 const std::string& filename = "test.mlir") {
  auto module = frontend::ParseStableHlo(text, filename);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  Status verified = verify::VerifyModule(**module);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  if (!verified.ok()) return nullptr;
  for (const auto& f : (*module)->functions()) f->Renumber();
  return std::move(module).value();
}

inline const hw::ChipSpec& V5e() {
  static const hw::ChipSpec chip = hw::FindPreset("v5e").value();
  return chip;
}

// The conformance programs under ../shared (TPUSIM_SHARED_DIR), sorted;
// empty when the shared folder is absent.
inline std::vector<std::filesystem::path> ConformanceFiles() {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const char* dir : {"testdata", "interpret", "interpret/chlo"}) {
    fs::path root = fs::path(TPUSIM_SHARED_DIR) / "conformance/stablehlo" / dir;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (entry.path().extension() == ".mlir") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tpusim::test

#endif  // TPUSIM_TESTING_TEST_UTIL_H_
