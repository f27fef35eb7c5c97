// libFuzzer target: the StableHLO parser and printer on arbitrary bytes.
// Any input must give a Status (never a crash, hang or sanitizer report), and
// whatever parses must print to text that parses again to the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto& c : tpusim::frontend::ParseStableHloCases(text, "fuzz.mlir")) {
    if (!c.module.ok()) continue;
    std::string printed = tpusim::ir::PrintModule(**c.module);
    auto again = tpusim::frontend::ParseStableHlo(printed, "printed.mlir");
    if (!again.ok() || tpusim::ir::PrintModule(**again) != printed) std::abort();
  }
  return 0;
}
