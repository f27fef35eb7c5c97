#include "planner/step_timing.h"

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/pod/collective_cost.h"
#include "tpusim/report/report.h"
#include "tpusim/runtime/compile.h"
#include "tpusim/spmd/partitioner.h"
#include "tpusim/timing/timing.h"

namespace tpusim::planner {

StatusOr<StepTiming> TimeStep(const std::string& text, const std::string& filename,
                              const std::shared_ptr<pod::CollectivePatterns>& patterns) {
  const pod::Slice& slice = patterns->slice();
  TPUSIM_ASSIGN_OR_RETURN(auto global, frontend::ParseStableHlo(text, filename));
  TPUSIM_ASSIGN_OR_RETURN(auto module, spmd::Partition(*global, "main"));
  runtime::Compiler compiler({.use_cache = false});
  StatusOr<runtime::CompileResult> compiled = compiler.Compile(*module, "main", slice.chip);
  StepTiming t;
  if (compiled.status().code() == StatusCode::kResourceExhausted) {
    const std::string why = compiled.status().message();  // status() is a copy
    const size_t at = why.find("@main needs");            // after the pass's name
    t.rejected = at == std::string::npos ? why : why.substr(at);
    if (compiler.exhausted()) t.hbm_peak_bytes = compiler.exhausted()->peak_bytes;
    return t;
  }
  TPUSIM_RETURN_IF_ERROR(compiled.status());
  const ir::Module& program = *compiled->program->module;
  TPUSIM_ASSIGN_OR_RETURN(pod::CollectivePricer pricer,
                          pod::CollectivePricer::Create(slice, 1, slice.num_devices(), patterns));
  TPUSIM_RETURN_IF_ERROR(pricer.Prepare(program));
  TPUSIM_ASSIGN_OR_RETURN(timing::Timeline timeline,
                          timing::TimeStatically(program, "main", slice.chip, {.pod = &pricer}));
  const report::Summary summary = report::Summarize(timeline);
  t.seconds = summary.total_seconds;
  t.exposed_communication_seconds = summary.exposed_communication_seconds;
  if (compiled->program->memory) t.hbm_peak_bytes = compiled->program->memory->peak_bytes;
  return t;
}

}  // namespace tpusim::planner
