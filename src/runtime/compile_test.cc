#include "tpusim/runtime/compile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/printer.h"
#include "tpusim/ir/rewrite.h"

namespace tpusim::runtime {
namespace {

std::string Program(int batch) {
  std::string t = "tensor<" + std::to_string(batch) + "x128xf32>";
  return "func.func @main(%x: " + t + ", %w: tensor<128x128xf32>) -> " + t + " {\n" +
         "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (" + t +
         ", tensor<128x128xf32>) -> " + t + "\n  %1 = stablehlo.tanh %0 : " + t +
         "\n  func.return %1 : " + t + "\n}\n";
}

std::unique_ptr<ir::Module> Parse(const std::string& text) {
  auto m = frontend::ParseStableHlo(text, "prog.mlir");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

class CompileCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tpusim_compile_test_" + std::to_string(getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    options_.cache_dir = dir_.string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int FilesInCache() const {
    if (!std::filesystem::exists(dir_)) return 0;
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_)) ++n;
    return n;
  }

  std::filesystem::path dir_;
  CompileOptions options_;
  hw::ChipSpec v5e_ = *hw::FindPreset("v5e");
};

TEST_F(CompileCacheTest, SecondCompileIsAMemoryHit) {
  auto m = Parse(Program(8));
  Compiler compiler(options_);
  auto first = compiler.Compile(*m, "main", v5e_);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->cache, CacheResult::kCompiled);
  auto second = compiler.Compile(*m, "main", v5e_);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->cache, CacheResult::kMemoryHit);
  EXPECT_EQ(second->program, first->program);
  EXPECT_EQ(compiler.compilations("main"), 1);
  EXPECT_EQ(FilesInCache(), 1);
}

TEST_F(CompileCacheTest, DiskHitRestoresTheProgramAndItsLocations) {
  auto m = Parse(Program(8));
  auto first = Compiler(options_).Compile(*m, "main", v5e_);
  ASSERT_TRUE(first.ok()) << first.status().message();
  Compiler fresh(options_);
  auto second = fresh.Compile(*m, "main", v5e_);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->cache, CacheResult::kDiskHit);
  EXPECT_EQ(fresh.compilations("main"), 0);
  EXPECT_EQ(second->key, first->key);
  EXPECT_EQ(ir::PrintModule(*second->program->module), ir::PrintModule(*first->program->module));
  EXPECT_EQ(second->program->passes, first->program->passes);
  // The printed form drops locations; the cache keeps them beside it.
  const ir::Function* f = second->program->module->Lookup("main");
  const ir::Function* g = first->program->module->Lookup("main");
  ASSERT_TRUE(f != nullptr && g != nullptr);
  const ir::Location& loc = f->entry().ops().front()->loc();
  EXPECT_TRUE(loc.known());
  EXPECT_EQ(loc.ToString(), g->entry().ops().front()->loc().ToString());
  EXPECT_EQ(loc.ToString().rfind("prog.mlir:", 0), 0u) << loc.ToString();
  // So does it the program's value names, which reports show.
  EXPECT_EQ(f->entry().argument(1).name(), "w");
  EXPECT_EQ(f->entry().ops().front()->result(0).name(), g->entry().ops().front()->result(0).name());
}

TEST_F(CompileCacheTest, KeyCoversChipOptionsAndShapes) {
  auto m = Parse(Program(8));
  Compiler compiler(options_);
  auto base = compiler.Compile(*m, "main", v5e_);
  ASSERT_TRUE(base.ok());
  auto other_chip = compiler.Compile(*m, "main", *hw::FindPreset("v4"));
  ASSERT_TRUE(other_chip.ok());
  EXPECT_NE(other_chip->key, base->key);
  EXPECT_EQ(other_chip->cache, CacheResult::kCompiled);

  CompileOptions no_fusion = options_;
  no_fusion.fusion = false;
  auto unfused = Compiler(no_fusion).Compile(*m, "main", v5e_);
  ASSERT_TRUE(unfused.ok());
  EXPECT_NE(unfused->key, base->key);

  auto other_shape = compiler.Compile(*Parse(Program(16)), "main", v5e_);
  ASSERT_TRUE(other_shape.ok());
  EXPECT_NE(other_shape->key, base->key);
  EXPECT_EQ(compiler.compilations("main"), 3);
}

// Reports name values and files as the program does: the same program under
// other names, or from another file, is not the first one's entry.
TEST_F(CompileCacheTest, OtherValueNamesOrFileAreAnotherEntry) {
  std::string renamed = Program(8);
  for (size_t at; (at = renamed.find("%x")) != std::string::npos;) renamed.replace(at, 2, "%in");
  Compiler compiler(options_);
  ASSERT_TRUE(compiler.Compile(*Parse(Program(8)), "main", v5e_).ok());
  auto again = compiler.Compile(*Parse(Program(8)), "main", v5e_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->cache, CacheResult::kMemoryHit);
  auto other_names = compiler.Compile(*Parse(renamed), "main", v5e_);
  ASSERT_TRUE(other_names.ok());
  EXPECT_EQ(other_names->cache, CacheResult::kCompiled);
  EXPECT_EQ(other_names->program->module->Lookup("main")->entry().argument(0).name(), "in");
  auto moved = frontend::ParseStableHlo(Program(8), "elsewhere/prog.mlir");
  ASSERT_TRUE(moved.ok());
  auto other_file = compiler.Compile(**moved, "main", v5e_);
  ASSERT_TRUE(other_file.ok());
  EXPECT_EQ(other_file->cache, CacheResult::kCompiled);
  const ir::Location& loc = other_file->program->module->Lookup("main")->entry().ops()[0]->loc();
  EXPECT_EQ(loc.ToString().rfind("elsewhere/prog.mlir:", 0), 0u) << loc.ToString();
}

TEST_F(CompileCacheTest, NoCacheNeitherReadsNorWrites) {
  options_.use_cache = false;
  auto m = Parse(Program(8));
  Compiler compiler(options_);
  ASSERT_TRUE(compiler.Compile(*m, "main", v5e_).ok());
  auto again = compiler.Compile(*m, "main", v5e_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->cache, CacheResult::kCompiled);
  EXPECT_EQ(compiler.compilations("main"), 2);
  EXPECT_EQ(FilesInCache(), 0);
}

TEST_F(CompileCacheTest, DamagedEntryIsAMissNotAnError) {
  auto m = Parse(Program(8));
  auto first = Compiler(options_).Compile(*m, "main", v5e_);
  ASSERT_TRUE(first.ok());
  std::ofstream(dir_ / (first->key + ".json")) << "{\"format\": \"tpusim.compiled/1\", \"key\": ";
  auto second = Compiler(options_).Compile(*m, "main", v5e_);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->cache, CacheResult::kCompiled);
  auto third = Compiler(options_).Compile(*m, "main", v5e_);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->cache, CacheResult::kDiskHit);  // rewritten whole by the second
}

TEST_F(CompileCacheTest, CompileLeavesTheSourceModuleUnchanged) {
  auto m = Parse(Program(8));
  std::string before = ir::PrintModule(*m);
  ASSERT_TRUE(Compiler(options_).Compile(*m, "main", v5e_).ok());
  EXPECT_EQ(ir::PrintModule(*m), before);
}

TEST_F(CompileCacheTest, WarnsWhenShapesKeepChanging) {
  Compiler compiler(options_);
  for (int batch : {8, 16}) ASSERT_TRUE(compiler.Compile(*Parse(Program(batch)), "main", v5e_).ok());
  EXPECT_TRUE(compiler.warnings().empty());
  ASSERT_TRUE(compiler.Compile(*Parse(Program(8)), "main", v5e_).ok());  // seen: no new shape
  EXPECT_TRUE(compiler.warnings().empty());
  ASSERT_TRUE(compiler.Compile(*Parse(Program(32)), "main", v5e_).ok());
  ASSERT_EQ(compiler.warnings().size(), 1u);
  const std::string& w = compiler.warnings()[0];
  EXPECT_NE(w.find("@main has been compiled for 3 different argument shapes"), std::string::npos)
      << w;
  EXPECT_NE(w.find("%x (tensor<8x128xf32>, tensor<16x128xf32>, tensor<32x128xf32>)"),
            std::string::npos)
      << w;
  EXPECT_EQ(w.find("%w"), std::string::npos) << w;  // its shape never changed
}

TEST_F(CompileCacheTest, UnknownEntryIsAnError) {
  auto r = Compiler(options_).Compile(*Parse(Program(8)), "nope", v5e_);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tpusim::runtime
