#include "tpusim/base/bytes.h"

#include <cstdio>
#include <cstdlib>

namespace tpusim {

std::string FormatBinaryBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::abs(v) >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  // Three significant digits; 1023.9 KiB stays "1024 KiB" rather than "1e+03".
  const double mag = std::abs(v);
  const int decimals = u == 0 || mag >= 100 ? 0 : mag >= 10 ? 1 : 2;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s + " " + kUnits[u];
}

}  // namespace tpusim
