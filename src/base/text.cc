#include "tpusim/base/text.h"

namespace tpusim {

std::string CountOf(int64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

}  // namespace tpusim
