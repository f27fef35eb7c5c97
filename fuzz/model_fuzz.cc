// libFuzzer target: the model file reader (TOML) on arbitrary bytes. Any
// input must give a Status, never a crash, hang or sanitizer report; a model
// that loads has sizes that count without overflow checks failing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tpusim/model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto model = tpusim::model::LoadModelToml(text, "fuzz.toml");
  if (model.ok()) (void)tpusim::model::TrainingFlopsPerToken(*model, 1);
  return 0;
}
