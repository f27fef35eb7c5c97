#include "tpusim/model/model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/library_data.h"

namespace tpusim::model {
namespace {

TEST(ModelLibrary, EveryFileLoads) {
  ASSERT_GE(LibraryFiles().size(), 16u);
  for (const LibraryFile& f : LibraryFiles()) {
    auto m = LoadModelToml(f.text, std::string(f.name));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->name + ".toml", f.name);
    EXPECT_FALSE(m->sources.empty()) << f.name;
  }
  EXPECT_EQ(Library().size(), LibraryFiles().size());
}

// Counted from the architecture, every model's size is within 1% of the
// one its sources publish. MaxText's scaled configurations publish none:
// their names round the size (global_parameter_scale doubles heads, MLP,
// width and depth in turn), within 3%.
TEST(ModelLibrary, ParameterCountsMatchThePublishedOnes) {
  for (const ModelSpec& m : Library()) {
    const double counted = static_cast<double>(CountParams(m).total);
    if (m.published_params > 0) {
      EXPECT_LT(std::abs(counted / m.published_params - 1), 0.01)
          << m.name << ": " << counted << " vs " << m.published_params;
    } else {
      ASSERT_GT(m.nominal_params, 0) << m.name << " states no size";
      EXPECT_EQ(m.name.rfind("maxtext-", 0), 0u) << m.name << ": only MaxText's are nominal";
      EXPECT_LT(std::abs(counted / m.nominal_params - 1), 0.03)
          << m.name << ": " << counted << " vs " << m.nominal_params;
    }
  }
}

// Exact where the published count is: Llama 3 8B's and Mixtral's.
TEST(ModelLibrary, CountsAreExact) {
  EXPECT_EQ(CountParams(*FindModel("llama3-8b")).total, 8030261248);
  EXPECT_EQ(CountParams(*FindModel("mixtral-8x7b")).total, 46702792704);
  EXPECT_EQ(CountParams(*FindModel("gemma-2b")).total, 2506172416);
}

TEST(ModelLibrary, MixtureOfExpertsUsesTwoExpertsPerToken) {
  const ModelSpec m = *FindModel("mixtral-8x7b");
  const ParamCounts p = CountParams(m);
  // About 12.9B of 46.7B parameters are active per token.
  EXPECT_NEAR(static_cast<double>(p.active_non_embedding) / 1e9, 12.75, 0.2);
}

// PaLM's appendix B: 6N + 12 L H Q T per token.
TEST(ModelLibrary, TrainingFlopsFollowPalmsCount) {
  const ModelSpec m = *FindModel("palm-540b");
  const double n = static_cast<double>(CountParams(m).active_non_embedding);
  EXPECT_DOUBLE_EQ(TrainingFlopsPerToken(m, 2048), 6 * n + 12.0 * 118 * 48 * 256 * 2048);
}

TEST(ModelLibrary, UnknownModelsNameTheKnownOnes) {
  auto m = FindModel("llama9");
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("llama3-8b"), std::string::npos);
}

TEST(ModelToml, ErrorsCarryTheirLocation) {
  auto typo = LoadModelToml("name = \"x\"\n[architecture]\nlayerz = 3\n", "m.toml");
  EXPECT_EQ(typo.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(typo.status().message().find("m.toml:3:10: unknown key 'architecture.layerz'"),
            std::string::npos)
      << typo.status().message();
  auto bad = LoadModelToml("name = \"x\"\n[architecture]\nlayers = \"many\"\n", "m.toml");
  EXPECT_NE(bad.status().message().find("m.toml:3:"), std::string::npos);
  auto heads = LoadModelToml(
      "name = \"x\"\n[architecture]\nlayers = 1\nd_model = 8\nheads = 3\nkv_heads = 2\n"
      "head_dim = 4\nd_ff = 8\nvocab = 10\nmax_seq = 4\n",
      "m.toml");
  EXPECT_NE(heads.status().message().find("multiple of kv_heads"), std::string::npos);
  auto huge = LoadModelToml(
      "name = \"x\"\n[architecture]\nlayers = 4000000000\nd_model = 4000000000\nheads = 1\n"
      "kv_heads = 1\nhead_dim = 4\nd_ff = 8\nvocab = 10\nmax_seq = 4\n",
      "m.toml");
  EXPECT_NE(huge.status().message().find("more than 10^16 parameters"), std::string::npos);
  auto syntax = LoadModelToml("name = \n", "m.toml");
  EXPECT_NE(syntax.status().message().find("m.toml:1:"), std::string::npos);
  auto both = LoadModelToml(
      "name = \"x\"\npublished_params = 1e9\nnominal_params = 1e9\n[architecture]\nlayers = 1\n"
      "d_model = 8\nheads = 2\nkv_heads = 2\nhead_dim = 4\nd_ff = 8\nvocab = 10\nmax_seq = 4\n",
      "m.toml");
  EXPECT_NE(both.status().message().find("published_params and nominal_params"), std::string::npos)
      << both.status().message();
}

}  // namespace
}  // namespace tpusim::model
