// The report's slice section: the collectives' traffic over the ICI and DCN,
// each torus axis's links (busiest and mean, one way), and every device's
// time, compute and exposed communication with the MFU over the slice.
#ifndef TPUSIM_REPORT_SLICE_SECTION_H_
#define TPUSIM_REPORT_SLICE_SECTION_H_

#include <nlohmann/json.hpp>
#include <string>

#include "tpusim/report/report.h"

namespace tpusim::report {

// "  slice ...", "  ICI links ..." and "  devices ..." lines; empty off a slice.
std::string SliceSectionText(const timing::Timeline& timeline, const Summary& summary);

// The same as the JSON report's "slice" object (docs/report.md), with every
// link that carried bytes and every device. REQUIRES: timeline.slice().
nlohmann::json SliceSectionJson(const timing::Timeline& timeline, const Summary& summary);

}  // namespace tpusim::report

#endif  // TPUSIM_REPORT_SLICE_SECTION_H_
