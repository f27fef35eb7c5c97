// Sizes of memory for people: binary units, as XLA reports HBM use.
#ifndef TPUSIM_BASE_BYTES_H_
#define TPUSIM_BASE_BYTES_H_

#include <cstdint>
#include <string>

namespace tpusim {

// "512 B", "4 KiB", "1.5 MiB", "21.3 GiB": three significant digits at most,
// trailing zeros dropped. Negative sizes keep their sign.
std::string FormatBinaryBytes(int64_t bytes);

}  // namespace tpusim

#endif  // TPUSIM_BASE_BYTES_H_
