// The planner's speed: `tpusim plan` of Llama 3.1 405B on a v5p-2048 slice
// (1024 chips), every mesh emitted, partitioned, compiled and timed, against
// the one-minute target on 2 cores, and per candidate against emitting its
// program alone (the reference measured in the same run).
// Run: build/bench/plan_bench
#include <cstdio>

#include "clock.h"
#include "tpusim/model/train_step.h"
#include "tpusim/planner/plan.h"

using tpusim::bench::Clock;
using tpusim::bench::Seconds;

int main() {
  auto spec = tpusim::model::FindModel("llama3.1-405b");
  if (!spec.ok()) return 1;
  tpusim::planner::PlanRequest request{
      .model = *spec, .slices = {"v5p-2048"}, .global_batch = 1024, .seq = 8192};
  auto t0 = Clock::now();
  auto candidates = tpusim::planner::Plan(request);
  const double plan_s = Seconds(t0);
  if (!candidates.ok()) {
    std::printf("plan failed: %s\n", candidates.status().ToString().c_str());
    return 1;
  }
  t0 = Clock::now();
  tpusim::model::TrainStepOptions o{.batch = 1024, .seq = 8192, .mesh = {{"fsdp", 1024}}};
  if (!tpusim::model::EmitTrainStep(*spec, o).ok()) return 1;
  const double emit_s = Seconds(t0);
  const double per = plan_s / static_cast<double>(candidates->size());
  std::printf(
      "plan llama3.1-405b on v5p-2048: %zu candidates in %.3f s, %.4f of the 60 s target; "
      "%.3f s each = %.0f x emitting one program (%.5f s)\n",
      candidates->size(), plan_s, plan_s / 60, per, per / emit_s, emit_s);
  return 0;
}
