// The report's fused-kernel section: each tpusim.fusion a timeline executed,
// with the ops inside it, its time and its HBM traffic.
#ifndef TPUSIM_REPORT_FUSION_SECTION_H_
#define TPUSIM_REPORT_FUSION_SECTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpusim/timing/timeline.h"

namespace tpusim::report {

// One fused kernel, its executions summed.
struct FusedKernel {
  const ir::Operation* op = nullptr;
  std::string name;              // "fusion.3" (the op's name attribute)
  std::string value;             // "%7": its result, as costliest ops and the HBM plan name it
  std::string kind;              // "kLoop", "kInput" or "kOutput"
  std::vector<std::string> ops;  // inside, in order, "stablehlo." dropped
  int64_t count = 0;             // executions
  double seconds = 0;
  int64_t hbm_bytes = 0;
  int64_t spill_bytes = 0;       // of hbm_bytes: intermediates beyond VMEM
};

// The kernels in first-execution order.
std::vector<FusedKernel> FusedKernels(const timing::Timeline& timeline);

// "fused kernels (2):" and a line per kernel
// ("  fusion.3 (kLoop): broadcast_in_dim, add, tanh  1.20 us  4.10 KB"); empty
// when the timeline ran none.
std::string FusionSectionText(const timing::Timeline& timeline);

// The same as a JSON array (docs/report.md, "fusions").
nlohmann::json FusionSectionJson(const timing::Timeline& timeline);

}  // namespace tpusim::report

#endif  // TPUSIM_REPORT_FUSION_SECTION_H_
