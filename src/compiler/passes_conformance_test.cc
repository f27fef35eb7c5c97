// Passes never change results: every runnable function of every conformance
// program gives the same outcome before and after the full pipeline (chip
// v5e, that function as the entry), and after it without constant-fold, in
// both numerics modes: the same returned bits, or the same kind of error (a
// failing check fails alike). A case counts as skipped only if it fails
// before the pipeline (parse or verify errors, quantized types); a pipeline
// error is a failure. On a difference the test names the first pass after
// which the outcome changes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "testing/test_util.h"
#include "tpusim/compiler/pipeline.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/hw/chip.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::compiler {
namespace {

namespace fs = std::filesystem;
using test::ConformanceFiles;
using test::ReadFile;

const fs::path kRoot = fs::path(TPUSIM_SHARED_DIR) / "conformance/stablehlo";

struct Outcome {
  Status status;
  std::vector<Tensor> values;
};

Outcome Run(const ir::Module& module, const std::string& function, ops::Numerics numerics) {
  exec::Interpreter interpreter(module, ops::EvalOptions{.numerics = numerics});
  StatusOr<std::vector<Tensor>> values = interpreter.Run(function, {});
  if (!values.ok()) return {values.status(), {}};
  return {Status::Ok(), std::move(*values)};
}

// Why two outcomes differ; empty if they do not.
std::string Difference(const Outcome& before, const Outcome& after) {
  if (before.status.ok() != after.status.ok() || before.status.code() != after.status.code()) {
    return "before: " + (before.status.ok() ? "ok" : before.status.ToString()) +
           "; after: " + (after.status.ok() ? "ok" : after.status.ToString());
  }
  if (before.values.size() != after.values.size()) return "a different number of results";
  for (size_t i = 0; i < before.values.size(); ++i) {
    if (!before.values[i].BitwiseEquals(after.values[i])) {
      return "result " + std::to_string(i) + " was " + before.values[i].ToString() + ", is " +
             after.values[i].ToString();
    }
  }
  return "";
}

constexpr ops::Numerics kModes[] = {ops::Numerics::kReference, ops::Numerics::kTpu};

const char* ModeName(ops::Numerics mode) {
  return mode == ops::Numerics::kTpu ? "tpu numerics" : "reference numerics";
}

// A pass list, as --passes spells it.
struct Pipeline {
  std::string spec;
  std::vector<PassInfo> passes;
};

class Checker {
 public:
  Checker(const hw::ChipSpec& chip, std::vector<Pipeline> pipelines)
      : chip_(chip), pipelines_(std::move(pipelines)) {}

  // Checks every case of `file`; appends one line per failure.
  void File(const fs::path& file, std::vector<std::string>& failures) {
    std::string name = fs::relative(file, kRoot).string();
    for (frontend::ParsedCase& c : frontend::ParseStableHloCases(ReadFile(file), name)) {
      if (!c.module.ok() || !verify::VerifyModule(**c.module).ok()) {
        ++skipped_;
        continue;
      }
      for (const auto& f : (*c.module)->functions()) {
        if (!f->is_public() || !f->type().inputs.empty()) continue;
        std::string where = name + ":" + std::to_string(f->loc().line) + " @" + f->name();
        std::string failure = Function(**c.module, f->name());
        if (!failure.empty()) failures.push_back(where + ": " + failure);
        ++checked_;
      }
    }
  }

  int checked() const { return checked_; }
  int skipped() const { return skipped_; }

 private:
  // A copy of `module` after the first `n` passes, `entry` as the entry.
  StatusOr<std::unique_ptr<ir::Module>> Compile(const ir::Module& module, const std::string& entry,
                                                const std::vector<PassInfo>& passes, size_t n) {
    std::unique_ptr<ir::Module> copy = ir::CloneModule(module);
    PassContext ctx{.chip = &chip_, .entry = entry};
    PipelineOptions options{.passes = {passes.begin(), passes.begin() + n}};
    TPUSIM_RETURN_IF_ERROR(RunPipeline(*copy, options, ctx));
    return copy;
  }

  std::string Function(const ir::Module& module, const std::string& name) {
    std::vector<Outcome> before;
    for (ops::Numerics mode : kModes) before.push_back(Run(module, name, mode));
    for (const Pipeline& p : pipelines_) {
      auto compiled = Compile(module, name, p.passes, p.passes.size());
      if (!compiled.ok()) {
        return "passes '" + p.spec + "' failed: " + compiled.status().ToString();
      }
      for (size_t m = 0; m < before.size(); ++m) {
        std::string difference = Difference(before[m], Run(**compiled, name, kModes[m]));
        if (!difference.empty()) {
          return "passes '" + p.spec + "', " + ModeName(kModes[m]) + ": " +
                 Culprit(module, name, p.passes, kModes[m], before[m]) + difference;
        }
      }
    }
    return "";
  }

  // "differs after pass X: ", naming the first pass whose output runs
  // differently.
  std::string Culprit(const ir::Module& module, const std::string& name,
                      const std::vector<PassInfo>& passes, ops::Numerics mode,
                      const Outcome& before) {
    for (size_t n = 1; n <= passes.size(); ++n) {
      auto partial = Compile(module, name, passes, n);
      if (partial.ok() && !Difference(before, Run(**partial, name, mode)).empty()) {
        return "differs after pass " + std::string(passes[n - 1].name) + ": ";
      }
    }
    return "";
  }

  const hw::ChipSpec& chip_;
  std::vector<Pipeline> pipelines_;
  int checked_ = 0, skipped_ = 0;
};

// Folding turns most of these programs, whose inputs are constants, into
// constants; without it the later passes see the real computations.
constexpr const char* kPipelines[] = {"all", "-constant-fold"};

TEST(PassesConformanceTest, PassesNeverChangeResults) {
  std::vector<fs::path> files = ConformanceFiles();
  if (files.empty()) GTEST_SKIP() << "no conformance programs under " << kRoot;
  StatusOr<hw::ChipSpec> chip = hw::FindPreset("v5e");
  ASSERT_TRUE(chip.ok()) << chip.status().ToString();
  std::vector<Pipeline> pipelines;
  for (const char* spec : kPipelines) {
    StatusOr<std::vector<PassInfo>> passes = SelectPasses(spec);
    ASSERT_TRUE(passes.ok()) << passes.status().ToString();
    pipelines.push_back({spec, std::move(*passes)});
  }

  // Files are independent: check them on all cores, one Checker per thread.
  std::atomic<size_t> next{0};
  std::vector<std::vector<std::string>> failures(files.size());
  std::vector<Checker> checkers(std::max(1u, std::thread::hardware_concurrency()),
                                Checker(*chip, pipelines));
  std::vector<std::thread> threads;
  for (Checker& checker : checkers) {
    threads.emplace_back([&, c = &checker] {
      for (size_t i; (i = next++) < files.size();) c->File(files[i], failures[i]);
    });
  }
  for (std::thread& t : threads) t.join();

  int checked = 0, skipped = 0;
  for (const Checker& c : checkers) {
    checked += c.checked();
    skipped += c.skipped();
  }
  for (const auto& file : failures) {
    for (const std::string& f : file) ADD_FAILURE() << f;
  }
  EXPECT_GT(checked, 800) << skipped << " cases skipped";
  EXPECT_LE(skipped, 10);
}

}  // namespace
}  // namespace tpusim::compiler
