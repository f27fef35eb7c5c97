// Words for people in messages and reports.
#ifndef TPUSIM_BASE_TEXT_H_
#define TPUSIM_BASE_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace tpusim {

// "1 replica", "8 partitions": `n` and `noun`, plural (an added "s") unless
// n is 1.
std::string CountOf(int64_t n, std::string_view noun);

}  // namespace tpusim

#endif  // TPUSIM_BASE_TEXT_H_
