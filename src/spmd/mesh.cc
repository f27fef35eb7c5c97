#include "spmd/mesh.h"

#include <algorithm>

namespace tpusim::spmd {
namespace {

// Prime factors of n, largest first.
std::vector<int64_t> PrimeFactors(int64_t n) {
  std::vector<int64_t> factors;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      factors.push_back(p);
      n /= p;
    }
  }
  if (n > 1) factors.push_back(n);
  std::sort(factors.rbegin(), factors.rend());
  return factors;
}

// A digit of a tile coordinate: dimension `dim` of the tile grid, `size`
// values, `weight` its step in that dimension's coordinate.
struct Digit {
  size_t dim;
  int64_t size, weight;
};

int64_t FlatIndex(const std::vector<int64_t>& coords, const std::vector<int64_t>& extents) {
  int64_t flat = 0;
  for (size_t i = 0; i < extents.size(); ++i) flat = flat * extents[i] + coords[i];
  return flat;
}

}  // namespace

Mesh::Mesh(int64_t devices) : Mesh(std::vector<int64_t>{devices}) {}

Mesh::Mesh(const std::vector<int64_t>& axes) : devices_(1) {
  for (int64_t size : axes) {
    devices_ *= size;
    for (int64_t p : PrimeFactors(size)) sizes_.push_back(p);
  }
  strides_.resize(sizes_.size());
  int64_t stride = 1;
  for (size_t a = sizes_.size(); a-- > 0;) {
    strides_[a] = stride;
    stride *= sizes_[a];
  }
}

int64_t Mesh::Size(std::span<const int> axes) const {
  int64_t n = 1;
  for (int a : axes) n *= sizes_[a];
  return n;
}

int64_t Mesh::Index(int64_t device, std::span<const int> axes) const {
  int64_t index = 0;
  for (int a : axes) index = index * sizes_[a] + (device / strides_[a]) % sizes_[a];
  return index;
}

std::vector<std::vector<int64_t>> Mesh::Groups(std::span<const int> axes) const {
  Axes others;
  for (int a = 0; a < num_axes(); ++a) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) others.push_back(a);
  }
  std::vector<std::vector<int64_t>> groups(Size(others), std::vector<int64_t>(Size(axes)));
  for (int64_t d = 0; d < devices_; ++d) groups[Index(d, others)][Index(d, axes)] = d;
  return groups;
}

bool Sharding::IsReplicated() const {
  return std::all_of(dims.begin(), dims.end(), [](const Axes& a) { return a.empty(); });
}

Axes Sharding::UsedAxes() const {
  Axes used;
  for (const Axes& a : dims) used.insert(used.end(), a.begin(), a.end());
  return used;
}

std::string Sharding::ToString() const {
  std::string s = "[";
  for (size_t d = 0; d < dims.size(); ++d) {
    s += d ? ", {" : "{";
    for (size_t i = 0; i < dims[d].size(); ++i) {
      s += (i ? "," : "") + std::to_string(dims[d][i]);
    }
    s += "}";
  }
  return s + "]";
}

StatusOr<Sharding> FromHlo(const Mesh& mesh, const ir::HloSharding& s, int64_t rank) {
  using Kind = ir::HloSharding::Kind;
  if (s.kind == Kind::kReplicated || s.kind == Kind::kUnknown) return Sharding::Replicated(rank);
  if (s.kind != Kind::kTiled || !s.last_tile_dims.empty()) {
    return Unimplemented("partitioning a value with sharding " + s.ToString() +
                         " (only tiled and replicated shardings are)");
  }
  const std::vector<int64_t>& extents = s.tile_dims;
  const size_t tensor_dims = extents.size() - (s.last_tile_dim_replicate ? 1 : 0);
  if (static_cast<int64_t>(tensor_dims) != rank) {
    return InvalidArgument("sharding " + s.ToString() + " tiles " + std::to_string(tensor_dims) +
                           " dimensions of a rank-" + std::to_string(rank) + " value");
  }
  if (static_cast<int64_t>(s.devices.size()) != mesh.devices()) {
    return InvalidArgument("sharding " + s.ToString() + " spans " +
                           std::to_string(s.devices.size()) + " devices, the program " +
                           std::to_string(mesh.devices()));
  }
  auto off_mesh = [&] {
    return Unimplemented("sharding " + s.ToString() +
                         " does not lay its tiles out as a device mesh (an arbitrary device "
                         "order)");
  };
  if (s.devices[0] != 0) return off_mesh();
  // Each digit of the tile grid must step along one mesh axis; from the
  // minor end, the device one step on names the axis by its stride.
  std::vector<Digit> digits;
  std::vector<int> axis_of;
  std::vector<bool> used(mesh.num_axes(), false);
  for (size_t i = 0; i < extents.size(); ++i) {
    const size_t first = digits.size();
    for (int64_t weight = 1; weight < extents[i];) {
      std::vector<int64_t> coords(extents.size(), 0);
      coords[i] = weight;
      const int64_t stride = s.devices[FlatIndex(coords, extents)];
      int a = 0;
      while (a < mesh.num_axes() && (used[a] || mesh.axis_stride(a) != stride ||
                                     extents[i] % (weight * mesh.axis_size(a)) != 0)) {
        ++a;
      }
      if (a == mesh.num_axes()) return off_mesh();
      used[a] = true;
      digits.push_back({i, mesh.axis_size(a), weight});
      axis_of.push_back(a);
      weight *= mesh.axis_size(a);
    }
    // Major first within the dimension, as Sharding lists its axes.
    std::reverse(digits.begin() + static_cast<int64_t>(first), digits.end());
    std::reverse(axis_of.begin() + static_cast<int64_t>(first), axis_of.end());
  }
  // The digits fit; every tile must sit where they say.
  std::vector<int64_t> coords(extents.size(), 0);
  for (int64_t flat = 0; flat < mesh.devices(); ++flat) {
    int64_t rest = flat;
    for (size_t i = extents.size(); i-- > 0;) {
      coords[i] = rest % extents[i];
      rest /= extents[i];
    }
    int64_t device = 0;
    for (size_t j = 0; j < digits.size(); ++j) {
      const int64_t digit = coords[digits[j].dim] / digits[j].weight % digits[j].size;
      device += digit * mesh.axis_stride(axis_of[j]);
    }
    if (s.devices[flat] != device) return off_mesh();
  }
  Sharding out = Sharding::Replicated(rank);
  for (size_t j = 0; j < digits.size(); ++j) {
    if (digits[j].dim < tensor_dims) out.dims[digits[j].dim].push_back(axis_of[j]);
  }
  return out;
}

ir::HloSharding ToHlo(const Mesh& mesh, const Sharding& s) {
  ir::HloSharding out;
  if (s.IsReplicated()) return out;
  out.kind = ir::HloSharding::Kind::kTiled;
  Axes replicas;
  const Axes used = s.UsedAxes();
  for (int a = 0; a < mesh.num_axes(); ++a) {
    if (std::find(used.begin(), used.end(), a) == used.end()) replicas.push_back(a);
  }
  std::vector<Axes> grid = s.dims;
  if (mesh.Size(replicas) > 1) {
    grid.push_back(replicas);
    out.last_tile_dim_replicate = true;
  }
  for (const Axes& axes : grid) out.tile_dims.push_back(mesh.Size(axes));
  out.devices.resize(mesh.devices());
  std::vector<int64_t> coords(grid.size());
  for (int64_t d = 0; d < mesh.devices(); ++d) {
    for (size_t i = 0; i < grid.size(); ++i) coords[i] = mesh.Index(d, grid[i]);
    out.devices[FlatIndex(coords, out.tile_dims)] = d;
  }
  return out;
}

ir::Type LocalType(const Mesh& mesh, const ir::Type& global, const Sharding& s) {
  if (!global.is_tensor() || s.IsReplicated()) return global;
  ir::Shape shape = global.shape();
  for (size_t d = 0; d < shape.size(); ++d) shape[d] = PartSize(shape[d], mesh.Size(s.dims[d]));
  return ir::Type::Tensor(global.element(), shape);
}

bool SplitsEvenly(const Mesh& mesh, const ir::Type& global, const Sharding& s) {
  if (!global.is_tensor()) return true;
  for (size_t d = 0; d < s.dims.size(); ++d) {
    if (global.dim(static_cast<int64_t>(d)) % mesh.Size(s.dims[d]) != 0) return false;
  }
  return true;
}

}  // namespace tpusim::spmd
