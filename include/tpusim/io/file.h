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

// As WriteFileAtomically, and durable: the bytes reach the disk (fsync)
// before the rename, and the rename before it returns (the directory is
// synced), so a crash at any point leaves the old file or the new one whole.
Status WriteFileDurably(const std::string& path, std::string_view bytes);

// Flushes the entries of directory `dir` (files created, renamed or removed
// in it) to disk. kResourceExhausted if it cannot be opened or synced.
Status SyncDirectory(const std::string& dir);

}  // namespace tpusim::io

#endif  // TPUSIM_IO_FILE_H_
