// The model files of models/, built into the binary by CMake
// (library_data.cc is generated). Internal to src/model.
#ifndef TPUSIM_MODEL_LIBRARY_DATA_H_
#define TPUSIM_MODEL_LIBRARY_DATA_H_

#include <span>
#include <string_view>

namespace tpusim::model {

struct LibraryFile {
  std::string_view name;  // "llama3-8b.toml"
  std::string_view text;
};

std::span<const LibraryFile> LibraryFiles();

}  // namespace tpusim::model

#endif  // TPUSIM_MODEL_LIBRARY_DATA_H_
