#include "tpusim/io/file.h"

#include <cstdio>

namespace tpusim::io {

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return InvalidArgument("cannot write " + tmp);
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return ResourceExhausted("cannot write " + path + " (disk full or not writable?)");
  }
  return Status::Ok();
}

}  // namespace tpusim::io
