// The JSON report as a document: what --report-json writes and what the
// HTML page draws, so that both show the same numbers.
#ifndef TPUSIM_REPORT_JSON_DOC_H_
#define TPUSIM_REPORT_JSON_DOC_H_

#include <nlohmann/json.hpp>

#include "tpusim/report/report.h"

namespace tpusim::report {

// The "tpusim.report/1" document of docs/report.md; JsonReport prints it.
nlohmann::json ReportJson(const timing::Timeline& timeline, const Summary& summary,
                          const CompileInfo* compile);

}  // namespace tpusim::report

#endif  // TPUSIM_REPORT_JSON_DOC_H_
