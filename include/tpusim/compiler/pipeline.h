// The compiler pipeline: runs the passes of pass.h in order on a module,
// verifying after each and, if asked, writing the module after each to a
// dump directory.
#ifndef TPUSIM_COMPILER_PIPELINE_H_
#define TPUSIM_COMPILER_PIPELINE_H_

#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/compiler/pass.h"

namespace tpusim::compiler {

using PassFn = Status (*)(ir::Module& module, PassContext& ctx);

struct PassInfo {
  std::string_view name;     // "dce", as --passes spells it
  std::string_view summary;  // one line for --passes=list
  PassFn run;
  bool by_default = true;  // false: runs only when named (or with "all")
};

// Every pass, in pipeline order.
const std::vector<PassInfo>& AllPasses();

// The passes named in `spec`, a comma-separated list ("inline,dce"), in
// pipeline order whatever the order given; "" is the default pipeline (every
// pass but those off by default), "all" every pass, and a leading '-'
// removes a pass from the default pipeline ("-fusion"). kInvalidArgument
// names an unknown pass and lists the known ones.
StatusOr<std::vector<PassInfo>> SelectPasses(std::string_view spec);

struct PipelineOptions {
  std::vector<PassInfo> passes;  // usually SelectPasses(...)
  // When set, the module before the first pass (00-input.mlir) and after
  // each (NN-<pass>.mlir) are written there.
  std::string dump_dir;
};

// Runs the passes on `module`; after each, verifies the module and dumps it.
// An error names the pass that failed.
Status RunPipeline(ir::Module& module, const PipelineOptions& options, PassContext& ctx);

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_PIPELINE_H_
