// Shardings of values across devices, as JAX writes them on functions and
// ops: XLA's `mhlo.sharding = "{devices=[2,1]0,1}"` strings and Shardy's
// `sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>` attributes. The IR keeps
// the attributes as written (they print back unchanged); these functions
// give their meaning in one structured form.
#ifndef TPUSIM_IR_SHARDING_H_
#define TPUSIM_IR_SHARDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::ir {

// A unit module attribute: the program is per device already (the SPMD
// partitioner's output, or XLA's scheduled HLO), whatever its shardings
// say, and is never partitioned again.
inline constexpr std::string_view kSpmdPartitioned = "tpusim.spmd_partitioned";

// An argument or result attribute of a partitioned function (array<i64>):
// the whole array's shape where its dimensions do not split evenly, so
// that each device's tile is padded at the end (XLA's uneven shards).
inline constexpr std::string_view kGlobalShape = "tpusim.global_shape";

// XLA's HloSharding. A tiled sharding splits dimension d into tile_dims[d]
// tiles; tile t (row-major over tile_dims) lives on devices[t]. With
// last_tile_dim_replicate, the last tile dimension is not a tensor dimension
// but a group of replicas of each tile.
struct HloSharding {
  enum class Kind : uint8_t { kReplicated, kManual, kMaximal, kTiled, kTuple, kUnknown };
  Kind kind = Kind::kReplicated;
  int64_t device = 0;                       // kMaximal
  std::vector<int64_t> tile_dims;           // kTiled
  std::vector<int64_t> devices;             // kTiled, one per tile
  bool last_tile_dim_replicate = false;     // kTiled
  std::vector<std::string> last_tile_dims;  // kTiled: subgroup kinds ("manual", ...)
  std::vector<HloSharding> elements;        // kTuple

  // The `mhlo.sharding` spelling (iota tile assignments come out expanded).
  std::string ToString() const;
  friend bool operator==(const HloSharding&, const HloSharding&) = default;
};

// Parses an `mhlo.sharding` string: {replicated}, {manual}, {unknown},
// {maximal device=N}, {devices=[2,1]0,1}, {devices=[4,2]<=[8]},
// {devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate},
// {devices=[2,2]0,1,2,3 last_tile_dims={manual}}, tuples {{...}, {...}}.
// `metadata={...}` is ignored. kInvalidArgument on malformed text.
StatusOr<HloSharding> ParseHloSharding(std::string_view text);

// The name of a Shardy axis ref: a full axis (a string) or a sub-axis
// ("sdy.sub_axis" struct, `"x":(1)2`); "" for anything else.
std::string SdyAxisName(const Attribute& axis);

// The HloSharding of a `#sdy.sharding` attribute (kStruct "sdy.sharding",
// as the parser builds it) for a tensor of `rank` dimensions, given the
// module's meshes (the "sdy.meshes" module attribute) or its inline mesh.
// Sub-axes split their axis; kUnimplemented for unreduced axes.
StatusOr<HloSharding> SdyShardingToHlo(const Module& module, const Attribute& sharding,
                                       int64_t rank);

// The sharding of function argument / result `i`, or of `op`'s results
// (a tuple for several results), from `mhlo.sharding` or `sdy.sharding`;
// nullopt when there is none. REQUIRES: i is in range.
StatusOr<std::optional<HloSharding>> ArgSharding(const Module& module, const Function& f, int i);
StatusOr<std::optional<HloSharding>> ResultSharding(const Module& module, const Function& f,
                                                    int i);
StatusOr<std::optional<HloSharding>> OpSharding(const Module& module, const Operation& op);

// Where the tile of `device` starts in the whole array under tiled sharding
// `s`, given the tile's shape; nullopt if `s` puts no tile on `device`.
std::optional<Shape> TileOffset(const HloSharding& s, const Shape& tile, int64_t device);

// The whole array that tiles of shape `tile` under tiled sharding `s` make:
// `attrs`' kGlobalShape where it has one, else the tiles side by side.
Shape GlobalShape(const Shape& tile, const HloSharding& s, const AttributeMap& attrs);

}  // namespace tpusim::ir

#endif  // TPUSIM_IR_SHARDING_H_
