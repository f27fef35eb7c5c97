// libFuzzer target: the HLO text parser and its lowering on arbitrary bytes.
// Any input must give a Status (never a crash, hang or sanitizer report), and
// whatever parses must pass or fail the verifier cleanly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tpusim/frontend/hlo/parser.h"
#include "tpusim/ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = tpusim::frontend::ParseHlo(text, "fuzz.hlo");
  // Printing walks every op, attribute and type the lowering built.
  if (m.ok()) (void)tpusim::ir::PrintModule(**m);
  return 0;
}
