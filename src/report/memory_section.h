// The report's HBM section: what buffer assignment found a compiled program
// needs (compiler/memory_plan.h), as text for people and as JSON.
#ifndef TPUSIM_REPORT_MEMORY_SECTION_H_
#define TPUSIM_REPORT_MEMORY_SECTION_H_

#include <string>

#include <nlohmann/json.hpp>

#include "tpusim/compiler/memory_plan.h"

namespace tpusim::report {

// Lines ending in '\n': "HBM: peak 1.2 GiB of 16 GiB (7.5%): arguments ...,
// results ..., temporaries ...; without reuse 3.4 GiB; 12 buffers", then the
// op at the peak and the largest buffers live there, one per line.
std::string MemoryText(const compiler::MemoryPlan& plan);

// The "memory" object of the JSON report (docs/report.md).
nlohmann::json MemoryJson(const compiler::MemoryPlan& plan);

}  // namespace tpusim::report

#endif  // TPUSIM_REPORT_MEMORY_SECTION_H_
