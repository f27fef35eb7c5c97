// The conformance runner behind `tpusim check`: runs the cases of StableHLO
// test files (`// -----`-separated, each function with no parameters a case)
// and reports, per case, whether its check ops held.
#ifndef TPUSIM_RUNTIME_CHECK_H_
#define TPUSIM_RUNTIME_CHECK_H_

#include <cstdio>
#include <string>
#include <vector>

#include "tpusim/ops/op_def.h"

namespace tpusim::runtime {

struct CaseResult {
  enum Outcome { kPass, kFail, kSkip } outcome = kPass;
  std::string file;
  int line = 0;        // the function's line, or the case's first line
  std::string name;    // the function, without '@'
  std::string reason;  // one line; empty for kPass
};

// Runs every case of the file at `path`: each public function without
// parameters of each `// -----` part. A case passes when it runs to the end,
// fails on any error (a failed check, a parse or verify error), and is skipped
// when it needs what tpusim deliberately does not do (probe files). A part
// with no such function is one skipped case.
std::vector<CaseResult> CheckFile(const std::string& path, const ops::EvalOptions& options);

// "PASS file:line name", "FAIL file:line name reason", "SKIP file:line name reason".
std::string FormatCaseResult(const CaseResult& r);

struct CheckSummary {
  int passed = 0, failed = 0, skipped = 0;
};

// Checks `files` (several at once), printing each case's line to `out` in
// file order, then "N passed, N failed[, N skipped]".
CheckSummary CheckFiles(const std::vector<std::string>& files, const ops::EvalOptions& options,
                        std::FILE* out);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_CHECK_H_
