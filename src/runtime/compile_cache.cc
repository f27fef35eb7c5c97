#include "runtime/compile_cache.h"

#include <openssl/evp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/io/file.h"
#include "tpusim/ir/printer.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/runtime/load.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::runtime {
namespace {

constexpr const char* kFormat = "tpusim.compiled/2";

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

// Size and modification time of the running executable: a rebuilt tpusim may
// compile differently, so its entries must not be reused.
std::string BuildIdentity() {
  struct stat st {};
  if (stat("/proc/self/exe", &st) != 0) return "unknown build";
  return std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

std::string PathFor(const std::string& dir, const std::string& key) {
  return (std::filesystem::path(dir) / (key + ".json")).string();
}

// Every op's location in walk order, files interned.
nlohmann::json Locations(const ir::Module& module) {
  std::map<std::string, int> files;
  nlohmann::json file_list = nlohmann::json::array(), locs = nlohmann::json::array();
  for (const auto& f : module.functions()) {
    ir::Walk(f->body(), [&](ir::Operation& op) {
      const ir::Location& loc = op.loc();
      std::string file = loc.file ? *loc.file : "";
      auto [it, added] = files.emplace(file, static_cast<int>(files.size()));
      if (added) file_list.push_back(file);
      locs.push_back({it->second, loc.line, loc.col});
    });
  }
  return {{"files", file_list}, {"ops", locs}};
}

// Puts back the locations Locations() saved; false if they do not match.
bool RestoreLocations(ir::Module& module, const nlohmann::json& saved) {
  std::vector<std::shared_ptr<const std::string>> files;
  for (const auto& f : saved.at("files")) {
    files.push_back(std::make_shared<const std::string>(f.get<std::string>()));
  }
  const auto& locs = saved.at("ops");
  size_t next = 0;
  bool ok = true;
  for (const auto& f : module.functions()) {
    ir::Walk(f->body(), [&](ir::Operation& op) {
      if (!ok || next >= locs.size()) {
        ok = false;
        return;
      }
      const auto& l = locs[next++];
      size_t file = l.at(0).get<size_t>();
      if (file >= files.size()) {
        ok = false;
        return;
      }
      op.set_loc(ir::Location{files[file], l.at(1).get<int>(), l.at(2).get<int>()});
    });
  }
  return ok && next == locs.size();
}

// Calls `fn` on every value of `module` in one fixed order: each function's
// parameters, then per op (in walk order) its results and its regions'
// block arguments.
void ForEachValue(const ir::Module& module, const std::function<void(ir::Value)>& fn) {
  for (const auto& f : module.functions()) {
    for (ir::Value a : f->entry().arguments()) fn(a);
    ir::Walk(f->body(), [&](ir::Operation& op) {
      for (ir::Value r : op.results()) fn(r);
      for (int r = 0; r < op.num_regions(); ++r) {
        for (int b = 0; b < op.region(r).num_blocks(); ++b) {
          for (ir::Value a : op.region(r).block(b).arguments()) fn(a);
        }
      }
    });
  }
}

// The program's own value names, which the printed module renumbers but
// reports show (%x, not %arg0).
nlohmann::json Names(const ir::Module& module) {
  nlohmann::json names = nlohmann::json::array();
  ForEachValue(module, [&](ir::Value v) { names.push_back(v.name()); });
  return names;
}

// Puts back the names Names() saved; false if they do not match.
bool RestoreNames(ir::Module& module, const nlohmann::json& saved) {
  size_t next = 0;
  bool ok = saved.is_array();
  ForEachValue(module, [&](ir::Value v) {
    if (!ok || next >= saved.size() || !saved[next].is_string()) {
      ok = false;
      return;
    }
    v.impl()->name = saved[next++].get<std::string>();
  });
  return ok && next == saved.size();
}

}  // namespace

std::string CacheKey(const ir::Module& module, const std::string& entry,
                     const hw::ChipSpec& chip, const std::vector<compiler::PassInfo>& passes) {
  std::string material = std::string(kFormat) + '\0' + BuildIdentity() + '\0' + entry + '\0';
  for (const auto& p : passes) material += std::string(p.name) + ',';
  material += '\0' + hw::DumpChipToml(chip) + '\0' + ir::PrintModule(module) + '\0';
  // The printed text renumbers values and drops locations: the same program
  // under other names or read from another file must not report the first
  // one's.
  material += Names(module).dump() + '\0' + Locations(module).at("files").dump();
  return Sha256Hex(material);
}

std::string CacheDirectory(const std::string& dir) {
  if (!dir.empty()) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return (std::filesystem::path(xdg) / "tpusim").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return (std::filesystem::path(home) / ".cache" / "tpusim").string();
  }
  return "";
}

std::shared_ptr<const CompiledProgram> LoadCompiled(const std::string& dir, const std::string& key,
                                                    const hw::ChipSpec& chip) {
  std::string root = CacheDirectory(dir);
  if (root.empty()) return nullptr;
  StatusOr<std::string> text = ReadTextFile(PathFor(root, key));
  if (!text.ok()) return nullptr;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("format", "") != kFormat || j.value("key", "") != key) {
    return nullptr;
  }
  try {
    auto program = std::make_shared<CompiledProgram>();
    auto module = frontend::ParseStableHlo(j.at("module").get<std::string>(), key);
    if (!module.ok() || !verify::VerifyModule(**module).ok()) return nullptr;
    program->module = std::move(*module);
    if (!RestoreLocations(*program->module, j.at("locations")) ||
        !RestoreNames(*program->module, j.at("names"))) {
      return nullptr;
    }
    program->entry = j.at("entry").get<std::string>();
    program->passes = j.at("passes").get<std::vector<std::string>>();
    program->notes = j.at("notes").get<std::vector<std::string>>();
    if (std::find(program->passes.begin(), program->passes.end(), "buffer-assignment") !=
        program->passes.end()) {
      compiler::PassContext ctx{.chip = &chip, .entry = program->entry};
      if (!compiler::RunBufferAssignment(*program->module, ctx).ok()) return nullptr;
      program->memory = std::move(ctx.memory);
    }
    return program;
  } catch (const nlohmann::json::exception&) {
    return nullptr;  // a damaged entry: compile again
  }
}

void StoreCompiled(const std::string& dir, const std::string& key,
                   const CompiledProgram& program) {
  std::string root = CacheDirectory(dir);
  if (root.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) return;
  nlohmann::json j = {{"format", kFormat},
                      {"key", key},
                      {"entry", program.entry},
                      {"passes", program.passes},
                      {"notes", program.notes},
                      {"locations", Locations(*program.module)},
                      {"names", Names(*program.module)},
                      {"module", ir::PrintModule(*program.module)}};
  (void)io::WriteFileAtomically(PathFor(root, key), j.dump());
}

}  // namespace tpusim::runtime
