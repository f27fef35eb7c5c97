// projects.locations.{acceleratorTypes,runtimeVersions}: what a zone offers,
// from the world's capacity and the slices tpusim knows.
#include "cloud/handlers.h"
#include "tpusim/pod/slice.h"

namespace tpusim::cloud {
namespace {

std::vector<json> AcceleratorTypes(const Context& ctx, const std::string& parent) {
  const Zone* zone = ctx.world.FindZone(ZoneOf(parent));
  std::vector<json> out;
  for (const pod::Slice& s : pod::StandardSlices()) {
    const std::string generation = GenerationOf(s.name);
    if (!zone->chips.count(generation)) continue;
    out.push_back({{"name", parent + "/acceleratorTypes/" + s.name},
                   {"type", s.name},
                   {"acceleratorConfigs",
                    json::array({AcceleratorConfigOf(generation, s.topology.ToString())})}});
  }
  return out;
}

}  // namespace

ApiError ListAcceleratorTypes(Context& ctx, const Call& call, json& out) {
  return ListPage(AcceleratorTypes(ctx, call.parent), call, out);
}

ApiError GetAcceleratorType(Context& ctx, const Call& call, json& out) {
  for (json& t : AcceleratorTypes(ctx, call.parent)) {
    if (t["name"] == call.name) {
      out = std::move(t);
      return {};
    }
  }
  return NotFoundError("Resource '" + call.name + "' was not found");
}

ApiError ListRuntimeVersions(Context& ctx, const Call& call, json& out) {
  std::vector<json> versions;
  for (const std::string& v : ctx.world.runtime_versions) {
    versions.push_back({{"name", call.parent + "/runtimeVersions/" + v}, {"version", v}});
  }
  return ListPage(std::move(versions), call, out);
}

ApiError GetRuntimeVersion(Context& ctx, const Call& call, json& out) {
  for (const std::string& v : ctx.world.runtime_versions) {
    if (v == call.id) {
      out = {{"name", call.name}, {"version", v}};
      return {};
    }
  }
  return NotFoundError("Resource '" + call.name + "' was not found");
}

}  // namespace tpusim::cloud
