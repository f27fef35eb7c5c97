#include "ops/kernels/chunk_kernels.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace tpusim::ops {
namespace {

std::map<std::string, ChunkKernel, std::less<>>& Registry() {
  static auto* registry = new std::map<std::string, ChunkKernel, std::less<>>;
  return *registry;
}

}  // namespace

bool RegisterChunkKernel(std::string_view name, ChunkKernel kernel) {
  if (!Registry().emplace(std::string(name), kernel).second) {
    std::fprintf(stderr, "tpusim: two chunk kernels for %.*s\n", static_cast<int>(name.size()),
                 name.data());
    std::abort();
  }
  return true;
}

const ChunkKernel* FindChunkKernel(std::string_view name) {
  auto it = Registry().find(name);
  return it == Registry().end() ? nullptr : &it->second;
}

}  // namespace tpusim::ops
