#include "tpusim/runtime/check.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "tpusim/compiler/refine_shapes.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/runtime/load.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::runtime {
namespace {

// Ops a case may use that tpusim deliberately does not run, with the reason
// its cases are skipped.
constexpr std::pair<const char*, const char*> kSkippedOps[] = {
    {"check.expect_serialized_eq",
     "check.expect_serialized_eq compares with interpreter.probe's files, which tpusim "
     "does not write"},
};

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

const char* SkipReason(const ir::Region& region) {
  for (int b = 0; b < region.num_blocks(); ++b) {
    for (const auto& op : region.block(b).ops()) {
      for (const auto& [name, reason] : kSkippedOps) {
        if (op->name_str() == name) return reason;
      }
      for (int r = 0; r < op->num_regions(); ++r) {
        if (const char* why = SkipReason(op->region(r))) return why;
      }
    }
  }
  return nullptr;
}

const char* SkipReason(const ir::Module& module) {
  for (const auto& f : module.functions()) {
    if (const char* why = SkipReason(f->body())) return why;
  }
  return nullptr;
}

// The results of one `// -----` part.
void CheckCase(const std::string& path, frontend::ParsedCase& c, const ops::EvalOptions& options,
               std::vector<CaseResult>& out) {
  CaseResult whole{.file = path, .line = c.first_line, .name = "case"};
  if (!c.module.ok()) {
    whole.outcome = CaseResult::kFail;
    whole.reason = FirstLine(c.module.status().message());
    out.push_back(whole);
    return;
  }
  const ir::Module& module = **c.module;
  std::vector<const ir::Function*> entries;
  for (const auto& f : module.functions()) {
    if (f->is_public() && f->type().inputs.empty()) entries.push_back(f.get());
  }
  if (entries.empty()) {
    whole.outcome = CaseResult::kSkip;
    whole.reason = "no public function without parameters";
    out.push_back(whole);
    return;
  }
  Status verified = verify::VerifyModule(module);
  const char* skip = SkipReason(module);
  for (const ir::Function* f : entries) {
    CaseResult r{
        .file = path, .line = f->loc().known() ? f->loc().line : c.first_line, .name = f->name()};
    if (!verified.ok()) {
      r.outcome = CaseResult::kFail;
      r.reason = FirstLine(verified.message());
    } else if (skip != nullptr) {
      r.outcome = CaseResult::kSkip;
      r.reason = skip;
    } else {
      // A case with dynamic (?) dimensions runs refined: it takes no
      // arguments, so its constants size them.
      std::unique_ptr<ir::Module> refined;
      Status ready = Status::Ok();
      if (compiler::HasDynamicShapes(module)) {
        refined = ir::CloneModule(module);
        ready = compiler::RefineShapes(*refined, f->name(), {});
        if (ready.ok()) ready = verify::VerifyModule(*refined);
      }
      StatusOr<std::vector<Tensor>> results = std::vector<Tensor>{};
      if (!ready.ok()) {
        results = ready;
      } else {
        exec::Interpreter interpreter(refined ? *refined : module, options);
        results = interpreter.Run(f->name(), {});
      }
      if (!results.ok()) {
        r.outcome = CaseResult::kFail;
        r.reason = FirstLine(results.status().message());
      }
    }
    out.push_back(std::move(r));
  }
}

}  // namespace

std::vector<CaseResult> CheckFile(const std::string& path, const ops::EvalOptions& options) {
  std::vector<CaseResult> out;
  StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) {
    out.push_back({.outcome = CaseResult::kFail,
                   .file = path,
                   .line = 0,
                   .name = "file",
                   .reason = text.status().message()});
    return out;
  }
  std::vector<frontend::ParsedCase> cases = frontend::ParseStableHloCases(*text, path);
  for (frontend::ParsedCase& c : cases) CheckCase(path, c, options, out);
  return out;
}

std::string FormatCaseResult(const CaseResult& r) {
  static const char* kWord[] = {"PASS", "FAIL", "SKIP"};
  std::string s =
      std::string(kWord[r.outcome]) + " " + r.file + ":" + std::to_string(r.line) + " " + r.name;
  if (!r.reason.empty()) s += " " + r.reason;
  return s;
}

CheckSummary CheckFiles(const std::vector<std::string>& files, const ops::EvalOptions& options,
                        std::FILE* out) {
  // Workers check files in any order; this thread prints them in file order
  // as soon as each is done, so a slow file shows where it is stuck.
  std::vector<std::vector<CaseResult>> results(files.size());
  std::vector<bool> done(files.size(), false);
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < files.size();) {
      std::vector<CaseResult> r = CheckFile(files[i], options);
      std::lock_guard<std::mutex> lock(mu);
      results[i] = std::move(r);
      done[i] = true;
      cv.notify_all();
    }
  };
  size_t n = std::min<size_t>(files.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (size_t i = 0; i < n; ++i) workers.emplace_back(work);

  CheckSummary summary;
  for (size_t i = 0; i < files.size(); ++i) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done[i]; });
    for (const CaseResult& r : results[i]) {
      std::fprintf(out, "%s\n", FormatCaseResult(r).c_str());
      (r.outcome == CaseResult::kPass   ? summary.passed
       : r.outcome == CaseResult::kFail ? summary.failed
                                        : summary.skipped)++;
    }
    std::fflush(out);
    results[i].clear();
  }
  for (std::thread& t : workers) t.join();
  std::fprintf(out, "%d passed, %d failed", summary.passed, summary.failed);
  if (summary.skipped > 0) std::fprintf(out, ", %d skipped", summary.skipped);
  std::fprintf(out, "\n");
  return summary;
}

}  // namespace tpusim::runtime
