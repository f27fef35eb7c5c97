// Writing output files whole or not at all.
#ifndef TPUSIM_IO_FILE_H_
#define TPUSIM_IO_FILE_H_

#include <string>
#include <string_view>

#include "tpusim/base/status.h"

namespace tpusim::io {

// Writes `bytes` to `path.tmp`, then renames it to `path`, so a failed write
// leaves no partial file behind (kResourceExhausted: disk full or not writable).
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace tpusim::io

#endif  // TPUSIM_IO_FILE_H_
