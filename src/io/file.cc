#include "tpusim/io/file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <utility>
#include <vector>

namespace tpusim::io {

StatusOr<AtomicFileWriter> AtomicFileWriter::Create(const std::string& path) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return InvalidArgument("cannot write " + tmp);
  return AtomicFileWriter(path, fd);
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

AtomicFileWriter& AtomicFileWriter::operator=(AtomicFileWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) (void)Fail();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) (void)Fail();
}

Status AtomicFileWriter::Fail() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::remove((path_ + ".tmp").c_str());
  return ResourceExhausted("cannot write " + path_ + " (disk full or not writable?)");
}

Status AtomicFileWriter::Append(std::initializer_list<std::string_view> pieces) {
  if (fd_ < 0) return Fail();
  std::vector<iovec> iov;
  for (std::string_view p : pieces) {
    if (!p.empty()) iov.push_back({const_cast<char*>(p.data()), p.size()});
  }
  // writev may stop early (a signal, a large request): resume where it did.
  size_t next = 0;
  while (next < iov.size()) {
    int count = static_cast<int>(std::min<size_t>(iov.size() - next, IOV_MAX));
    ssize_t n = ::writev(fd_, iov.data() + next, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail();
    auto done = static_cast<size_t>(n);
    while (next < iov.size() && done >= iov[next].iov_len) done -= iov[next++].iov_len;
    if (done > 0) {
      iov[next].iov_base = static_cast<char*>(iov[next].iov_base) + done;
      iov[next].iov_len -= done;
    }
  }
  return Status::Ok();
}

Status AtomicFileWriter::Commit(bool durable) {
  if (fd_ < 0) return Fail();
  bool ok = !durable || ::fsync(fd_) == 0;
  ok = ::close(std::exchange(fd_, -1)) == 0 && ok;
  std::string tmp = path_ + ".tmp";
  if (!ok || std::rename(tmp.c_str(), path_.c_str()) != 0) return Fail();
  if (!durable) return Status::Ok();
  std::string dir = std::filesystem::path(path_).parent_path().string();
  return SyncDirectory(dir.empty() ? "." : dir);
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  TPUSIM_ASSIGN_OR_RETURN(AtomicFileWriter file, AtomicFileWriter::Create(path));
  TPUSIM_RETURN_IF_ERROR(file.Append({bytes}));
  return file.Commit();
}

Status SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ResourceExhausted("cannot open directory " + dir);
  bool ok = ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok) return ResourceExhausted("cannot sync directory " + dir);
  return Status::Ok();
}

Status WriteFileDurably(const std::string& path, std::string_view bytes) {
  TPUSIM_ASSIGN_OR_RETURN(AtomicFileWriter file, AtomicFileWriter::Create(path));
  TPUSIM_RETURN_IF_ERROR(file.Append({bytes}));
  return file.Commit(/*durable=*/true);
}

}  // namespace tpusim::io
