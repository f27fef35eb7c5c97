#include "tpusim/runtime/checkpoint.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "runtime/run_io.h"
#include "tpusim/io/file.h"
#include "tpusim/io/npy.h"

namespace tpusim::runtime {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kVersion = 1;
constexpr const char* kManifest = "manifest.json";

std::string StepDir(int64_t step) { return "step-" + std::to_string(step); }

// The step of a directory named "step-<n>", if it is one.
std::optional<int64_t> StepOf(const std::string& name) {
  if (name.rfind("step-", 0) != 0 || name.size() == 5) return std::nullopt;
  int64_t step = 0;
  for (char c : name.substr(5)) {
    if (c < '0' || c > '9' || step > (INT64_MAX - 9) / 10) return std::nullopt;
    step = step * 10 + (c - '0');
  }
  return step;
}

json ManifestJson(int64_t step, const std::vector<Manifest::Shard>& shards) {
  json j = {{"version", kVersion}, {"step", step}, {"shards", json::array()}};
  for (const Manifest::Shard& s : shards) {
    j["shards"].push_back({{"file", s.file},
                           {"dtype", std::string(ir::ElementTypeName(s.type.element()))},
                           {"shape", s.type.shape()}});
  }
  return j;
}

// A shard of the manifest: a file inside the directory and a tensor type.
StatusOr<Manifest::Shard> ParseShard(const json& j) {
  if (!j.is_object() || !j.contains("file") || !j["file"].is_string() || !j.contains("dtype") ||
      !j["dtype"].is_string() || !j.contains("shape") || !j["shape"].is_array()) {
    return InvalidArgument("a shard needs a file, a dtype and a shape");
  }
  std::string file = j["file"];
  fs::path path(file);
  if (file.empty() || path.is_absolute()) return InvalidArgument("bad shard file '" + file + "'");
  for (const fs::path& part : path) {
    if (part == "..") return InvalidArgument("shard file '" + file + "' is outside the directory");
  }
  std::optional<ir::ElementType> e = ir::ParseElementType(j["dtype"].get<std::string>());
  if (!e) return InvalidArgument("unknown dtype '" + j["dtype"].get<std::string>() + "'");
  ir::Shape shape;
  for (const json& d : j["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) {
      return InvalidArgument("bad shape of " + file);
    }
    shape.push_back(d.get<int64_t>());
  }
  return Manifest::Shard{file, ir::Type::Tensor(*e, shape)};
}

StatusOr<Manifest> ParseManifest(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("not valid JSON");
  if (!j.is_object()) return InvalidArgument("not a JSON object");
  if (!j.contains("version") || j["version"] != kVersion) {
    return InvalidArgument("not a version " + std::to_string(kVersion) + " checkpoint manifest");
  }
  if (!j.contains("step") || !j["step"].is_number_integer() || j["step"].get<int64_t>() < 0) {
    return InvalidArgument("no step");
  }
  if (!j.contains("shards") || !j["shards"].is_array()) return InvalidArgument("no shards");
  Manifest m{.step = j["step"].get<int64_t>()};
  for (const json& s : j["shards"]) {
    TPUSIM_ASSIGN_OR_RETURN(Manifest::Shard shard, ParseShard(s));
    m.shards.push_back(std::move(shard));
  }
  return m;
}

// Removes the step directories but `step`'s and the newest one before it:
// a reader of the previous manifest may still be loading that one.
void RemoveOldSteps(const fs::path& dir, int64_t step) {
  std::error_code ec;
  std::optional<int64_t> previous;
  std::vector<std::pair<int64_t, fs::path>> steps;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::optional<int64_t> n = StepOf(e.path().filename().string());
    if (!n || !e.is_directory(ec)) continue;
    steps.emplace_back(*n, e.path());
    if (*n < step && (!previous || *n > *previous)) previous = n;
  }
  // Best effort: a directory left behind costs space, not correctness.
  for (const auto& [n, path] : steps) {
    if (n != step && n != previous) fs::remove_all(path, ec);
  }
}

}  // namespace

StatusOr<Manifest> ReadManifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / kManifest).string();
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("no checkpoint manifest " + path);
  std::stringstream text;
  text << in.rdbuf();
  StatusOr<Manifest> m = ParseManifest(text.str());
  if (!m.ok()) return m.status().WithContext(path + ": malformed checkpoint manifest");
  return m;
}

Status WriteCheckpoint(const std::string& dir, int64_t step, const std::vector<Tensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].type().is_tensor()) {
      return InvalidArgument("state " + std::to_string(i) + " is " + tensors[i].type().ToString() +
                             ", which a checkpoint cannot hold");
    }
  }
  const fs::path root(dir);
  const std::string step_dir = StepDir(step);
  std::error_code ec;
  fs::create_directories(root / step_dir, ec);
  if (ec) return ResourceExhausted("cannot create " + (root / step_dir).string());
  // The new step directory's entry reaches the disk before a manifest names it.
  TPUSIM_RETURN_IF_ERROR(io::SyncDirectory(dir));
  std::vector<Manifest::Shard> shards;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    std::string file = step_dir + "/state" + std::to_string(i) + ".npy";
    TPUSIM_ASSIGN_OR_RETURN(std::string bytes, io::EncodeNpy(t));
    TPUSIM_RETURN_IF_ERROR(io::WriteFileDurably((root / file).string(), bytes));
    shards.push_back({file, t.type().WithDefaultLayout()});
  }
  TPUSIM_RETURN_IF_ERROR(
      io::WriteFileDurably((root / kManifest).string(), ManifestJson(step, shards).dump(2) + "\n"));
  RemoveOldSteps(root, step);
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> LoadCheckpoint(const std::string& dir, const Manifest& manifest,
                                             const std::vector<ir::Type>& types) {
  const std::string where = "checkpoint of step " + std::to_string(manifest.step) + " in " + dir;
  if (manifest.shards.size() != types.size()) {
    return InvalidArgument(where + " holds " + std::to_string(manifest.shards.size()) +
                           " tensors, but the state is " + std::to_string(types.size()));
  }
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < types.size(); ++i) {
    const Manifest::Shard& shard = manifest.shards[i];
    if (shard.type != types[i]) {
      return InvalidArgument(where + ": state " + std::to_string(i) + " is " +
                             shard.type.ToString() + ", but the program takes " +
                             types[i].ToString());
    }
    const std::string path = (fs::path(dir) / shard.file).string();
    StatusOr<Tensor> t = io::ReadNpy(path);
    if (!t.ok()) return t.status().WithContext(where);
    // The shard holds the state's type as .npy stores it, and nothing else.
    ir::Type stored = shard.type.WithElement(io::NpyElementType(shard.type.element()));
    if (t->type() != stored) {
      return InvalidArgument(where + ": " + shard.file + " holds " + t->type().ToString() +
                             ", but the manifest says " + shard.type.ToString());
    }
    TPUSIM_ASSIGN_OR_RETURN(Tensor state, ConvertInput(*t, shard.type, path));
    tensors.push_back(std::move(state));
  }
  return tensors;
}

}  // namespace tpusim::runtime
