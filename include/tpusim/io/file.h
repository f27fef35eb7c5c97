// Writing output files whole or not at all.
#ifndef TPUSIM_IO_FILE_H_
#define TPUSIM_IO_FILE_H_

#include <initializer_list>
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

// A file written in pieces that appears at `path` whole or not at all, as
// WriteFileAtomically's does: for large data that should go to the file
// from where it lies, without first being gathered into one buffer.
// Destroying a writer that was not committed removes its temporary file.
class AtomicFileWriter {
 public:
  // Creates `path`.tmp; kInvalidArgument if it cannot.
  static StatusOr<AtomicFileWriter> Create(const std::string& path);

  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&& other) noexcept;
  ~AtomicFileWriter();

  // Appends the pieces in order, with as few system calls as it can
  // (writev). kResourceExhausted when the disk is full or the write fails.
  Status Append(std::initializer_list<std::string_view> pieces);

  // Puts the file in place (renames `path`.tmp to `path`); with `durable`,
  // as WriteFileDurably does. After an error nothing is left at either
  // name. REQUIRES: not yet committed.
  Status Commit(bool durable = false);

 private:
  AtomicFileWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status Fail();  // removes the temporary file, closes it, says why

  std::string path_;
  int fd_ = -1;  // -1 once committed or failed
};

}  // namespace tpusim::io

#endif  // TPUSIM_IO_FILE_H_
