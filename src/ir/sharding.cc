#include "tpusim/ir/sharding.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace tpusim::ir {
namespace {

// Cap on devices in one tile assignment; real meshes are far smaller.
constexpr int64_t kMaxDevices = int64_t{1} << 20;

// A character scanner over an mhlo.sharding string.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Consume(std::string_view word) {
    SkipSpace();
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= s_.size();
  }
  char Peek() {
    SkipSpace();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  Status Error(std::string_view what) const {
    return InvalidArgument("bad sharding \"" + std::string(s_) + "\": " + std::string(what) +
                           " at offset " + std::to_string(pos_));
  }
  StatusOr<int64_t> Int() {
    SkipSpace();
    int64_t v = 0;
    size_t start = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      if (v > (int64_t{1} << 40)) return Error("number too large");
      v = v * 10 + (s_[pos_++] - '0');
    }
    if (pos_ == start) return Error("expected a number");
    return v;
  }
  // `[a,b,c]`.
  StatusOr<std::vector<int64_t>> IntList(char open, char close) {
    if (!Consume(std::string_view(&open, 1))) return Error("expected a list");
    std::vector<int64_t> out;
    if (Consume(std::string_view(&close, 1))) return out;
    do {
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, Int());
      out.push_back(v);
    } while (Consume(","));
    if (!Consume(std::string_view(&close, 1))) return Error("unterminated list");
    return out;
  }
  // A run of letters and underscores (possibly empty).
  std::string Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }
  // Skips a balanced `{...}` (metadata).
  Status SkipBraces() {
    int depth = 0;
    do {
      if (pos_ >= s_.size()) return Error("unterminated braces");
      char c = s_[pos_++];
      if (c == '{') ++depth;
      if (c == '}') --depth;
    } while (depth > 0);
    return Status::Ok();
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) {
    if (x <= 0 || p > kMaxDevices / x) return -1;
    p *= x;
  }
  return p;
}

// The flattened device order of iota(prod(shape)) reshaped to `shape` and
// transposed by `perm`.
std::vector<int64_t> TransposedIota(const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& perm) {
  int64_t n = Product(shape);
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  std::vector<int64_t> out(n);
  std::vector<int64_t> index(perm.size(), 0);  // over the transposed shape
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t source = 0;
    for (size_t k = 0; k < perm.size(); ++k) source += index[k] * strides[perm[k]];
    out[flat] = source;
    for (size_t k = perm.size(); k-- > 0;) {
      if (++index[k] < shape[perm[k]]) break;
      index[k] = 0;
    }
  }
  return out;
}

Status ParseTileAssignment(Scanner& s, HloSharding* out) {
  TPUSIM_ASSIGN_OR_RETURN(out->tile_dims, s.IntList('[', ']'));
  int64_t tiles = Product(out->tile_dims);
  if (tiles < 0) return s.Error("bad tile dimensions");
  if (s.Consume("<=")) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, s.IntList('[', ']'));
    std::vector<int64_t> perm;
    for (size_t i = 0; i < shape.size(); ++i) perm.push_back(static_cast<int64_t>(i));
    if (s.Consume("T")) {
      TPUSIM_ASSIGN_OR_RETURN(perm, s.IntList('(', ')'));
    }
    std::vector<bool> seen(shape.size(), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(shape.size()) || seen[p]) {
        return s.Error("bad transpose permutation");
      }
      seen[p] = true;
    }
    if (perm.size() != shape.size() || Product(shape) != tiles) {
      return s.Error("iota shape does not match the tile dimensions");
    }
    out->devices = TransposedIota(shape, perm);
    return Status::Ok();
  }
  do {
    TPUSIM_ASSIGN_OR_RETURN(int64_t d, s.Int());
    out->devices.push_back(d);
    if (static_cast<int64_t>(out->devices.size()) > tiles) break;
  } while (s.Consume(","));
  if (static_cast<int64_t>(out->devices.size()) != tiles) {
    return s.Error("number of devices does not match the tile dimensions");
  }
  return Status::Ok();
}

StatusOr<HloSharding> ParseOne(Scanner& s, int depth) {
  if (depth > 64) return s.Error("nesting too deep");
  if (!s.Consume("{")) return s.Error("expected '{'");
  HloSharding out;
  if (s.Peek() == '{' || s.Peek() == '}') {
    out.kind = HloSharding::Kind::kTuple;
    while (s.Peek() == '{') {
      TPUSIM_ASSIGN_OR_RETURN(HloSharding e, ParseOne(s, depth + 1));
      out.elements.push_back(std::move(e));
      if (!s.Consume(",")) break;
    }
  } else if (s.Consume("replicated")) {
    out.kind = HloSharding::Kind::kReplicated;
  } else if (s.Consume("manual")) {
    out.kind = HloSharding::Kind::kManual;
  } else if (s.Consume("unknown")) {
    out.kind = HloSharding::Kind::kUnknown;
  } else if (s.Consume("maximal")) {
    out.kind = HloSharding::Kind::kMaximal;
    if (!s.Consume("device=")) return s.Error("expected device=");
    TPUSIM_ASSIGN_OR_RETURN(out.device, s.Int());
  } else if (s.Consume("devices=")) {
    out.kind = HloSharding::Kind::kTiled;
    TPUSIM_RETURN_IF_ERROR(ParseTileAssignment(s, &out));
    if (s.Consume("last_tile_dim_replicate")) {
      out.last_tile_dim_replicate = true;
    } else if (s.Consume("last_tile_dims={")) {
      do {
        std::string kind = s.Word();
        if (kind.empty()) return s.Error("expected a subgroup kind");
        out.last_tile_dims.push_back(std::move(kind));
      } while (s.Consume(","));
      if (!s.Consume("}")) return s.Error("expected '}'");
    }
  } else {
    return s.Error("unknown sharding kind");
  }
  if (s.Consume("metadata=")) TPUSIM_RETURN_IF_ERROR(s.SkipBraces());
  if (!s.Consume("}")) return s.Error("expected '}'");
  return out;
}

std::string JoinInts(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

StatusOr<std::optional<HloSharding>> FromAttrs(const Module& module, const AttributeMap& attrs,
                                               const Type& type) {
  if (Attribute hlo = attrs.Get("mhlo.sharding")) {
    if (hlo.kind() != Attribute::Kind::kString) return InvalidArgument("mhlo.sharding must be a string");
    TPUSIM_ASSIGN_OR_RETURN(HloSharding s, ParseHloSharding(hlo.str()));
    return std::optional<HloSharding>(std::move(s));
  }
  if (Attribute sdy = attrs.Get("sdy.sharding")) {
    int64_t rank = type.is_tensor() ? type.rank() : 0;
    TPUSIM_ASSIGN_OR_RETURN(HloSharding s, SdyShardingToHlo(module, sdy, rank));
    return std::optional<HloSharding>(std::move(s));
  }
  return std::optional<HloSharding>();
}

}  // namespace

std::string HloSharding::ToString() const {
  switch (kind) {
    case Kind::kReplicated: return "{replicated}";
    case Kind::kManual: return "{manual}";
    case Kind::kUnknown: return "{unknown}";
    case Kind::kMaximal: return "{maximal device=" + std::to_string(device) + "}";
    case Kind::kTuple: {
      std::string s = "{";
      for (size_t i = 0; i < elements.size(); ++i) s += (i ? ", " : "") + elements[i].ToString();
      return s + "}";
    }
    case Kind::kTiled: {
      std::string s = "{devices=[" + JoinInts(tile_dims) + "]" + JoinInts(devices);
      if (last_tile_dim_replicate) s += " last_tile_dim_replicate";
      if (!last_tile_dims.empty()) {
        s += " last_tile_dims={";
        for (size_t i = 0; i < last_tile_dims.size(); ++i) s += (i ? ", " : "") + last_tile_dims[i];
        s += "}";
      }
      return s + "}";
    }
  }
  return "{unknown}";
}

StatusOr<HloSharding> ParseHloSharding(std::string_view text) {
  Scanner s(text);
  TPUSIM_ASSIGN_OR_RETURN(HloSharding out, ParseOne(s, 0));
  if (!s.AtEnd()) return s.Error("trailing text");
  return out;
}

namespace {

// A mesh whose axes are cut at the sub-axes a sharding names, so that each
// axis ref is a run of whole pieces. An axis of size n cut into major-to-
// minor pieces keeps the devices' row-major order.
struct SplitMesh {
  struct Piece {
    size_t axis;
    int64_t pre;   // product of the axis's pieces before this one
    int64_t size;
  };
  std::vector<Piece> pieces;
};

// The axis index, pre-size and size of axis ref `ref` in the mesh.
StatusOr<std::tuple<size_t, int64_t, int64_t>> ResolveRef(const std::vector<Attribute>& names,
                                                          const std::vector<int64_t>& sizes,
                                                          const Attribute& ref) {
  const std::string name = SdyAxisName(ref);
  size_t a = 0;
  while (a < names.size() && names[a].str() != name) ++a;
  if (a == names.size()) {
    return InvalidArgument("sdy.sharding uses axis " + ref.ToString() + " that is not in the mesh");
  }
  if (ref.kind() != Attribute::Kind::kStruct) return std::tuple{a, int64_t{1}, sizes[a]};
  const int64_t pre = ref.Get("pre_size").int_value(), size = ref.Get("size").int_value();
  if (pre < 1 || size < 1 || sizes[a] % pre != 0 || (sizes[a] / pre) % size != 0) {
    return InvalidArgument("sub-axis " + ref.ToString() + " does not divide axis \"" + name +
                           "\" of size " + std::to_string(sizes[a]));
  }
  return std::tuple{a, pre, size};
}

StatusOr<SplitMesh> Split(const std::vector<Attribute>& names, const std::vector<int64_t>& sizes,
                          const std::vector<Attribute>& refs) {
  std::vector<std::vector<int64_t>> cuts(names.size());
  for (size_t a = 0; a < names.size(); ++a) cuts[a] = {1, sizes[a]};
  for (const Attribute& ref : refs) {
    TPUSIM_ASSIGN_OR_RETURN(auto resolved, ResolveRef(names, sizes, ref));
    auto [a, pre, size] = resolved;
    cuts[a].push_back(pre);
    cuts[a].push_back(pre * size);
  }
  SplitMesh out;
  for (size_t a = 0; a < names.size(); ++a) {
    std::vector<int64_t>& c = cuts[a];
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    for (size_t j = 0; j + 1 < c.size(); ++j) {
      if (c[j + 1] % c[j] != 0) {
        return InvalidArgument("sub-axes of axis " + names[a].ToString() + " overlap");
      }
      out.pieces.push_back({a, c[j], c[j + 1] / c[j]});
    }
  }
  return out;
}

}  // namespace

std::string SdyAxisName(const Attribute& axis) {
  if (axis.kind() == Attribute::Kind::kString) return axis.str();
  if (axis.kind() == Attribute::Kind::kStruct) return SdyAxisName(axis.Get("name"));
  return "";
}

// Shardy's dimension shardings name mesh axes (or sub-axes: runs of an
// axis's pieces); the HloSharding tiles each dimension by the product of its
// axes, and the device of each tile follows from walking the mesh with those
// axes outermost, unused axes last (as replicas).
StatusOr<HloSharding> SdyShardingToHlo(const Module& module, const Attribute& sharding,
                                       int64_t rank) {
  if (sharding.kind() != Attribute::Kind::kStruct || sharding.name() != "sdy.sharding") {
    return InvalidArgument("expected a #sdy.sharding attribute");
  }
  Attribute mesh_ref = sharding.Get("mesh");
  Attribute mesh = mesh_ref.kind() == Attribute::Kind::kStruct
                       ? mesh_ref
                       : module.attrs().Get("sdy.meshes").Get(
                             mesh_ref.kind() == Attribute::Kind::kSymbolRef ? mesh_ref.str() : "");
  if (!mesh) return NotFound("sdy.sharding refers to an undefined mesh " + mesh_ref.ToString());
  if (Attribute unreduced = sharding.Get("unreduced"); unreduced && !unreduced.array().empty()) {
    return Unimplemented("sdy.sharding with unreduced axes (" + sharding.ToString() +
                         ") is not supported");
  }
  const std::vector<Attribute>& names = mesh.Get("axis_names").array();
  std::vector<int64_t> sizes = mesh.Get("axis_sizes").AsInts();
  if (Product(sizes) < 0 || names.size() != sizes.size()) return InvalidArgument("bad sdy mesh");
  std::vector<int64_t> ids = mesh.Get("device_ids").AsInts();
  if (names.empty()) {  // a maximal mesh: one device
    HloSharding out;
    if (!ids.empty()) {
      out.kind = HloSharding::Kind::kMaximal;
      out.device = ids[0];
    }
    return out;
  }
  const std::vector<Attribute>& dims = sharding.Get("dims").array();
  if (static_cast<int64_t>(dims.size()) != rank) {
    return InvalidArgument("sdy.sharding has " + std::to_string(dims.size()) +
                           " dimension shardings for a rank-" + std::to_string(rank) + " value");
  }
  std::vector<Attribute> refs;
  for (const Attribute& dim : dims) refs.insert(refs.end(), dim.array().begin(), dim.array().end());
  TPUSIM_ASSIGN_OR_RETURN(SplitMesh split, Split(names, sizes, refs));
  std::vector<int64_t> piece_sizes, perm;
  for (const SplitMesh::Piece& piece : split.pieces) piece_sizes.push_back(piece.size);
  std::vector<bool> used(split.pieces.size(), false);
  HloSharding out;
  out.kind = HloSharding::Kind::kTiled;
  for (const Attribute& dim : dims) {
    int64_t tiles = 1;
    for (const Attribute& axis : dim.array()) {
      TPUSIM_ASSIGN_OR_RETURN(auto resolved, ResolveRef(names, sizes, axis));
      auto [a, pre, size] = resolved;
      for (size_t p = 0; p < split.pieces.size(); ++p) {
        const SplitMesh::Piece& piece = split.pieces[p];
        if (piece.axis != a || piece.pre < pre || piece.pre * piece.size > pre * size) continue;
        if (used[p]) {
          return InvalidArgument("sdy.sharding: axis " + axis.ToString() + " is used twice");
        }
        used[p] = true;
        perm.push_back(static_cast<int64_t>(p));
        tiles *= piece.size;
      }
    }
    out.tile_dims.push_back(tiles);
  }
  int64_t replicas = 1;
  for (size_t p = 0; p < split.pieces.size(); ++p) {
    if (!used[p]) {
      perm.push_back(static_cast<int64_t>(p));
      replicas *= split.pieces[p].size;
    }
  }
  if (replicas == Product(sizes)) return HloSharding{};  // nothing sharded
  if (replicas > 1) {
    out.tile_dims.push_back(replicas);
    out.last_tile_dim_replicate = true;
  }
  out.devices = TransposedIota(piece_sizes, perm);
  if (!ids.empty()) {
    if (ids.size() != out.devices.size()) return InvalidArgument("sdy mesh device_ids size mismatch");
    for (int64_t& d : out.devices) d = ids[d];
  }
  return out;
}

StatusOr<std::optional<HloSharding>> ArgSharding(const Module& module, const Function& f, int i) {
  return FromAttrs(module, f.arg_attrs()[i], f.type().inputs[i]);
}

StatusOr<std::optional<HloSharding>> ResultSharding(const Module& module, const Function& f,
                                                    int i) {
  return FromAttrs(module, f.result_attrs()[i], f.type().results[i]);
}

StatusOr<std::optional<HloSharding>> OpSharding(const Module& module, const Operation& op) {
  Attribute per_value = op.attr("sdy.sharding");
  if (!per_value || per_value.kind() != Attribute::Kind::kStruct ||
      per_value.name() != "sdy.sharding_per_value") {
    return FromAttrs(module, op.attrs(), op.num_results() == 1 ? op.result(0).type() : Type());
  }
  const std::vector<Attribute>& shardings = per_value.Get("shardings").array();
  if (static_cast<int>(shardings.size()) != op.num_results()) {
    return InvalidArgument("sdy.sharding_per_value needs one sharding per result");
  }
  HloSharding tuple;
  tuple.kind = HloSharding::Kind::kTuple;
  for (int r = 0; r < op.num_results(); ++r) {
    const Type& t = op.result(r).type();
    TPUSIM_ASSIGN_OR_RETURN(HloSharding s,
                            SdyShardingToHlo(module, shardings[r], t.is_tensor() ? t.rank() : 0));
    tuple.elements.push_back(std::move(s));
  }
  if (tuple.elements.size() == 1) return std::optional<HloSharding>(tuple.elements[0]);
  return std::optional<HloSharding>(std::move(tuple));
}

std::optional<Shape> TileOffset(const HloSharding& s, const Shape& tile, int64_t device) {
  auto at = std::find(s.devices.begin(), s.devices.end(), device);
  if (at == s.devices.end()) return std::nullopt;
  int64_t t = at - s.devices.begin();
  Shape index(s.tile_dims.size());
  for (size_t d = s.tile_dims.size(); d-- > 0;) {
    index[d] = t % s.tile_dims[d];
    t /= s.tile_dims[d];
  }
  Shape offset(tile.size());
  for (size_t d = 0; d < tile.size() && d < index.size(); ++d) offset[d] = index[d] * tile[d];
  return offset;
}

Shape GlobalShape(const Shape& tile, const HloSharding& s, const AttributeMap& attrs) {
  if (Attribute global = attrs.Get(kGlobalShape)) return global.AsInts();
  Shape shape = tile;
  for (size_t d = 0; d < shape.size() && d < s.tile_dims.size(); ++d) shape[d] *= s.tile_dims[d];
  return shape;
}

}  // namespace tpusim::ir
