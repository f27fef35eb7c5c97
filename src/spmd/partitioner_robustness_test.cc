// Bad shardings never crash the partitioner: the examples' shardings,
// mutated at random (tile counts, device lists, axis names, dimension
// lists), give either a valid partitioned program or an error naming the
// problem and where, never an internal error. Run under the sanitizers too.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "testing/test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/spmd/partitioner.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::spmd {
namespace {

// `text` with one character of one sharding replaced: inside the quotes of
// an mhlo.sharding, or the brackets of an sdy sharding.
std::string Mutate(const std::string& text, std::mt19937& rng) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t at = 0; (at = text.find("sharding = ", at)) != std::string::npos; ++at) {
    const size_t end = text.find_first_of("}>\n", at + 11);
    if (end != std::string::npos) spans.emplace_back(at + 11, end + 1);
  }
  for (size_t at = 0; (at = text.find("<@mesh", at)) != std::string::npos; ++at) {
    spans.emplace_back(at, text.find('>', at) + 1);
  }
  if (spans.empty()) return text;
  const auto [begin, end] = spans[rng() % spans.size()];
  static const char kChars[] = "0123456789,[]{}<=>T() \"xyzdatmodelfsp";
  std::string out = text;
  const size_t at = begin + rng() % (end - begin);
  switch (rng() % 3) {
    case 0:
      out[at] = kChars[rng() % (sizeof(kChars) - 1)];
      break;
    case 1:
      out.erase(at, 1);
      break;
    default:
      out.insert(at, 1, kChars[rng() % (sizeof(kChars) - 1)]);
  }
  return out;
}

TEST(PartitionerRobustness, MutatedShardingsNeverCrash) {
  const std::filesystem::path dir = std::filesystem::path(TPUSIM_SOURCE_DIR) / "examples/sharding";
  std::mt19937 rng(7);
  int partitioned = 0, refused = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string text = test::ReadFile(entry.path());
    for (int i = 0; i < 400; ++i) {
      const std::string mutated = Mutate(text, rng);
      auto module = frontend::ParseStableHlo(mutated, "mutated.mlir");
      if (!module.ok() || !verify::VerifyModule(**module).ok() || !IsGlobalProgram(**module)) {
        continue;
      }
      auto result = Partition(**module, "main");
      if (result.ok()) {
        ++partitioned;
        continue;
      }
      ++refused;
      EXPECT_NE(result.status().code(), StatusCode::kInternal) << result.status().ToString();
      EXPECT_TRUE(result.status().has_location()) << result.status().ToString();
    }
  }
  std::printf("%d mutated programs partitioned, %d refused\n", partitioned, refused);
  EXPECT_GT(partitioned, 40);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace tpusim::spmd
