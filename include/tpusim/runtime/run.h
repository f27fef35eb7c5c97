// The model runner behind `tpusim run`: feeds .npy (or random) inputs to a
// program's entry function and writes its results as .npy files.
#ifndef TPUSIM_RUNTIME_RUN_H_
#define TPUSIM_RUNTIME_RUN_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::runtime {

struct RunOptions {
  std::string program;  // path of the StableHLO file
  // "file.npy" (the next unnamed parameter) or "name=file.npy", where name is
  // the parameter's SSA name without '%' (arg0).
  std::vector<std::string> inputs;
  std::string output_dir = "out";
  std::string entry;           // empty: @main, else the only public function
  bool random_inputs = false;  // fill parameters given no input
  uint64_t seed = 0;
  ops::EvalOptions eval;
};

// Runs the program and writes result<i>.npy into output_dir, printing one
// summary line per result to `out`. Float inputs are rounded to narrower
// float parameter types (bf16, f8...). On any error no result file is left.
Status RunProgram(const RunOptions& options, std::FILE* out);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_RUN_H_
