#include "tpusim/cloud/world.h"

#include <ctime>
#include <set>

#include "base/toml_reader.h"
#include "tpusim/pod/slice.h"

namespace tpusim::cloud {
namespace {

const std::vector<std::string> kDefaultRuntimeVersions = {
    "tpu-ubuntu2204-base", "tpu-vm-base",         "tpu-vm-tf-2.16.1-pjrt",
    "v2-alpha-tpuv5",      "v2-alpha-tpuv5-lite", "v2-alpha-tpuv6e",
};

const std::set<std::string>& KnownGenerations() {
  static const std::set<std::string> known = [] {
    std::set<std::string> s;
    for (const pod::Slice& slice : pod::StandardSlices()) s.insert(GenerationOf(slice.name));
    return s;
  }();
  return known;
}

// A table of generation = chips.
Status ReadChips(const toml::table& t, const std::string& file, const std::string& prefix,
                 std::map<std::string, int64_t>& out) {
  for (const auto& [key, node] : t) {
    const std::string gen(key.str());
    const auto* v = node.as_integer();
    if (v == nullptr || v->get() < 0) {
      return InvalidArgument(base::Where(file, node.source()) + ": '" + prefix + gen +
                             "' must be a non-negative number of chips");
    }
    if (!KnownGenerations().count(gen)) {
      std::string names;
      for (const std::string& g : KnownGenerations()) names += (names.empty() ? "" : ", ") + g;
      return InvalidArgument(base::Where(file, node.source()) + ": unknown TPU generation '" + gen +
                             "' (known: " + names + ")");
    }
    out[gen] = v->get();
  }
  return Status::Ok();
}

Status NotATable(const std::string& file, const toml::node& n, const std::string& what) {
  return InvalidArgument(base::Where(file, n.source()) + ": '" + what + "' must be a table");
}

Status ReadZones(const toml::table& root, const std::string& file, WorldConfig& w) {
  const toml::node* zones = root.get("zones");
  if (zones == nullptr)
    return InvalidArgument(file + ": no [zones.<name>] table: the world has no zones");
  if (!zones->is_table()) return NotATable(file, *zones, "zones");
  for (const auto& [key, node] : *zones->as_table()) {
    if (!node.is_table()) return NotATable(file, node, "zones." + std::string(key.str()));
    Zone z{.name = std::string(key.str())};
    TPUSIM_RETURN_IF_ERROR(ReadChips(*node.as_table(), file, "zones." + z.name + ".", z.chips));
    w.zones.push_back(std::move(z));
  }
  if (w.zones.empty()) return InvalidArgument(base::Where(file, zones->source()) + ": no zones");
  return Status::Ok();
}

Status ReadQuota(const toml::table& root, const std::string& file, WorldConfig& w) {
  const toml::node* quota = root.get("quota");
  if (quota == nullptr) return Status::Ok();
  if (!quota->is_table()) return NotATable(file, *quota, "quota");
  toml::table defaults = *quota->as_table();
  defaults.erase("projects");
  TPUSIM_RETURN_IF_ERROR(ReadChips(defaults, file, "quota.", w.default_quota));
  const toml::node* projects = quota->as_table()->get("projects");
  if (projects == nullptr) return Status::Ok();
  if (!projects->is_table()) return NotATable(file, *projects, "quota.projects");
  for (const auto& [key, node] : *projects->as_table()) {
    const std::string p(key.str());
    if (!node.is_table()) return NotATable(file, node, "quota.projects." + p);
    TPUSIM_RETURN_IF_ERROR(
        ReadChips(*node.as_table(), file, "quota.projects." + p + ".", w.project_quota[p]));
  }
  return Status::Ok();
}

Status ReadSection(const toml::table& root, const char* name, const std::string& file,
                   const std::vector<std::pair<const char*, double*>>& fields) {
  const toml::node* n = root.get(name);
  if (n == nullptr) return Status::Ok();
  if (!n->is_table()) return NotATable(file, *n, name);
  base::TableReader r(*n->as_table(), file, std::string(name) + ".");
  for (const auto& [key, out] : fields) {
    TPUSIM_RETURN_IF_ERROR(r.Read(key, *out));
    if (!(*out >= 0)) {
      return InvalidArgument(base::Where(file, n->as_table()->get(key)->source()) + ": '" + name +
                             "." + key + "' must not be negative");
    }
  }
  return r.RejectUnknown();
}

StatusOr<WorldConfig> FromTable(const toml::table& root, const std::string& file) {
  WorldConfig w;
  w.runtime_versions = kDefaultRuntimeVersions;
  base::TableReader r(root, file, "");
  int64_t seed = 1;
  TPUSIM_RETURN_IF_ERROR(r.Read("seed", seed));
  w.seed = static_cast<uint64_t>(seed);
  TPUSIM_RETURN_IF_ERROR(r.Read("speed", w.speed));
  if (const toml::node* start = root.get("start")) {
    r.Allow("start");
    const auto* t = start->as_date_time();
    if (t == nullptr || !t->get().offset) {
      return InvalidArgument(base::Where(file, start->source()) +
                             ": 'start' must be a date-time with an offset (2026-01-01T00:00:00Z)");
    }
    const toml::date_time& dt = t->get();
    std::tm tm{};
    tm.tm_year = dt.date.year - 1900;
    tm.tm_mon = dt.date.month - 1;
    tm.tm_mday = dt.date.day;
    tm.tm_hour = dt.time.hour;
    tm.tm_min = dt.time.minute;
    tm.tm_sec = dt.time.second;
    w.start = static_cast<double>(timegm(&tm)) - dt.offset->minutes * 60.0;
  }
  if (!(w.speed > 0)) return InvalidArgument(file + ": 'speed' must be positive");
  TPUSIM_RETURN_IF_ERROR(r.ReadStrings("runtime_versions", w.runtime_versions));
  for (const char* section : {"zones", "quota", "durations", "spot", "maintenance"})
    r.Allow(section);
  TPUSIM_RETURN_IF_ERROR(r.RejectUnknown());
  TPUSIM_RETURN_IF_ERROR(ReadZones(root, file, w));
  TPUSIM_RETURN_IF_ERROR(ReadQuota(root, file, w));
  TPUSIM_RETURN_IF_ERROR(ReadSection(root, "durations", file,
                                     {{"create", &w.create_seconds},
                                      {"delete", &w.delete_seconds},
                                      {"stop", &w.stop_seconds},
                                      {"start", &w.start_seconds}}));
  TPUSIM_RETURN_IF_ERROR(
      ReadSection(root, "spot", file, {{"preemptions_per_hour", &w.spot_preemptions_per_hour}}));
  TPUSIM_RETURN_IF_ERROR(ReadSection(root, "maintenance", file,
                                     {{"per_day", &w.maintenance_per_day},
                                      {"notice", &w.maintenance_notice_seconds},
                                      {"duration", &w.maintenance_seconds}}));
  return w;
}

}  // namespace

const Zone* WorldConfig::FindZone(std::string_view name) const {
  for (const Zone& z : zones) {
    if (z.name == name) return &z;
  }
  return nullptr;
}

std::optional<int64_t> WorldConfig::Quota(const std::string& project,
                                          const std::string& generation) const {
  if (auto p = project_quota.find(project); p != project_quota.end()) {
    if (auto g = p->second.find(generation); g != p->second.end()) return g->second;
  }
  if (auto g = default_quota.find(generation); g != default_quota.end()) return g->second;
  return std::nullopt;
}

StatusOr<WorldConfig> ParseWorldConfig(std::string_view text, const std::string& filename) {
  try {
    return FromTable(toml::parse(text, filename), filename);
  } catch (const toml::parse_error& e) {
    return InvalidArgument(base::Where(filename, e.source()) + ": " + std::string(e.description()));
  }
}

std::string GenerationOf(std::string_view accelerator_type) {
  const size_t dash = accelerator_type.rfind('-');
  return std::string(accelerator_type.substr(0, dash));
}

}  // namespace tpusim::cloud
