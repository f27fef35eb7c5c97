#include "tpusim/runtime/load.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tpusim/frontend/hlo/parser.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::runtime {

StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument(path + " is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return InvalidArgument("cannot read " + path);
  return buf.str();
}

StatusOr<std::unique_ptr<ir::Module>> LoadModule(const std::string& path) {
  TPUSIM_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return InvalidArgument(path + " is empty: expected a StableHLO or XLA HLO program");
  }
  if (text.find('\0') != std::string::npos) {
    return InvalidArgument(path +
                           " is not text (it holds NUL bytes): expected a StableHLO or XLA HLO "
                           "program");
  }
  return LoadModuleText(text, path);
}

StatusOr<std::unique_ptr<ir::Module>> LoadModuleText(std::string_view text,
                                                     const std::string& name) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                          frontend::LooksLikeHlo(text) ? frontend::ParseHlo(text, name)
                                                       : frontend::ParseStableHlo(text, name));
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*module));
  return module;
}

}  // namespace tpusim::runtime
