// Every conformance program parses, prints back stably, and no corruption of
// one crashes the parser.
#include <gtest/gtest.h>

#include <filesystem>

#include "testing/test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/printer.h"

namespace tpusim::frontend {
namespace {

namespace fs = std::filesystem;
using test::ConformanceFiles;
using test::ReadFile;

// Quantized types are the one unsupported feature these files use.
bool ExpectedUnsupported(const Status& s) {
  return s.code() == StatusCode::kUnimplemented &&
         s.message().find("quantized types are unsupported") != std::string::npos;
}

TEST(ConformanceTest, EveryCaseParsesAndRoundTrips) {
  std::vector<fs::path> files = ConformanceFiles();
  ASSERT_GT(files.size(), 300u) << "conformance files not found under " << TPUSIM_SHARED_DIR;
  int parsed = 0, unsupported = 0;
  for (const fs::path& file : files) {
    std::string text = ReadFile(file);
    for (ParsedCase& c : ParseStableHloCases(text, file.string())) {
      if (!c.module.ok()) {
        EXPECT_TRUE(ExpectedUnsupported(c.module.status())) << c.module.status().ToString();
        ++unsupported;
        continue;
      }
      ++parsed;
      std::string printed = ir::PrintModule(**c.module);
      auto reparsed = ParseStableHlo(printed, "printed.mlir");
      ASSERT_TRUE(reparsed.ok()) << file << ":" << c.first_line << "\n"
                                 << reparsed.status().ToString();
      EXPECT_EQ(ir::PrintModule(**reparsed), printed) << file << ":" << c.first_line;
    }
  }
  EXPECT_GT(parsed, 800);
  EXPECT_LE(unsupported, 10);
}

// Truncations and byte flips must give a clean status, never a crash (the
// test is also run under AddressSanitizer).
TEST(ConformanceTest, CorruptedInputsFailCleanly) {
  const char* samples[] = {"interpret/while.mlir", "interpret/convolution.mlir",
                           "interpret/reduce.mlir", "interpret/dot_general.mlir",
                           "interpret/all_reduce.mlir", "testdata/argmax_bool_15.mlir",
                           "interpret/chlo/scan.mlir", "interpret/constant.mlir"};
  int failures = 0;
  for (const char* sample : samples) {
    fs::path file = fs::path(TPUSIM_SHARED_DIR) / "conformance/stablehlo" / sample;
    if (!fs::exists(file)) continue;
    std::string text = ReadFile(file);
    size_t step = std::max<size_t>(1, text.size() / 300);
    for (size_t cut = 0; cut < text.size(); cut += step) {
      for (const ParsedCase& c : ParseStableHloCases(text.substr(0, cut), "cut.mlir")) {
        failures += !c.module.ok();
      }
    }
    uint32_t rng = 12345;
    for (int i = 0; i < 300; ++i) {
      std::string flipped = text;
      rng = rng * 1664525u + 1013904223u;
      size_t pos = rng % flipped.size();
      static const char kBytes[] = "[](){}<>%#@^:,=x0-\"\\\n";
      flipped[pos] = (i % 2) ? kBytes[(rng >> 16) % (sizeof(kBytes) - 1)]
                             : static_cast<char>(rng >> 24);
      for (const ParsedCase& c : ParseStableHloCases(flipped, "flip.mlir")) {
        if (!c.module.ok()) {
          ++failures;
          EXPECT_TRUE(c.module.status().has_location()) << c.module.status().ToString();
        }
      }
    }
  }
  EXPECT_GT(failures, 0);
}

}  // namespace
}  // namespace tpusim::frontend
