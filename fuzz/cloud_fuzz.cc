// libFuzzer target: the Cloud TPU emulator's input handling on arbitrary
// bytes. An input whose first byte is odd is a capacity file (TOML); any
// other is an API call, "METHOD PATH?QUERY\nBODY", served by one service
// whose state and clock carry over between inputs, so that calls meet the
// resources earlier ones made. Any input must give a Status or an API
// error, never a crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tpusim/cloud/service.h"
#include "tpusim/cloud/world.h"

namespace {

constexpr const char* kWorld = R"(
seed = 1
start = 2026-01-01T00:00:00Z
[durations]
create = 2
delete = 1
[spot]
preemptions_per_hour = 600
[maintenance]
per_day = 2000
notice = 1
duration = 3
[zones.z]
v4 = 64
v5p = 128
[quota]
v5p = 64
)";

double g_clock = 0;

tpusim::cloud::Service& TheService() {
  static auto service = [] {
    auto world = tpusim::cloud::ParseWorldConfig(kWorld, "fuzz.toml");
    auto opened = tpusim::cloud::Service::Open(":memory:", *world, [] { return g_clock; });
    return std::move(*opened);
  }();
  return *service;
}

tpusim::cloud::ApiRequest ReadRequest(std::string_view text) {
  tpusim::cloud::ApiRequest r;
  const size_t eol = std::min(text.find('\n'), text.size());
  std::string_view line = text.substr(0, eol);
  r.body = std::string(text.substr(std::min(eol + 1, text.size())));
  const size_t space = std::min(line.find(' '), line.size());
  r.method = std::string(line.substr(0, space));
  std::string_view target = line.substr(std::min(space + 1, line.size()));
  const size_t q = std::min(target.find('?'), target.size());
  r.path = std::string(target.substr(0, q));
  std::string_view query = target.substr(std::min(q + 1, target.size()));
  while (!query.empty()) {
    const size_t amp = std::min(query.find('&'), query.size());
    std::string_view pair = query.substr(0, amp);
    const size_t eq = std::min(pair.find('='), pair.size());
    r.query[std::string(pair.substr(0, eq))] =
        std::string(pair.substr(std::min(eq + 1, pair.size())));
    query = query.substr(std::min(amp + 1, query.size()));
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    (void)tpusim::cloud::ParseWorldConfig(text, "fuzz.toml");
    return 0;
  }
  tpusim::cloud::Service& service = TheService();
  (void)service.Handle(ReadRequest(text));
  g_clock += 1;
  (void)service.Tick();
  return 0;
}
