// The device mesh the SPMD partitioner works on, and shardings as mesh axes
// per dimension (Shardy's view). Every sharding of a program, GSPMD string
// or Shardy attribute, is first read as an ir::HloSharding and then mapped
// onto one mesh: the devices' ids split into prime-sized axes, major first,
// so device d sits at the mixed-radix digits of d. Collectives' groups and
// each device's tile follow from the axes. Internal to src/spmd.
#ifndef TPUSIM_SPMD_MESH_H_
#define TPUSIM_SPMD_MESH_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/sharding.h"
#include "tpusim/ir/type.h"

namespace tpusim::spmd {

using Axes = std::vector<int>;  // mesh axes, major first

class Mesh {
 public:
  // `devices` split into its prime factors, largest first.
  // REQUIRES: devices >= 1.
  explicit Mesh(int64_t devices);
  // The axes of a named mesh, major first ("data"=2, "fsdp"=96), each split
  // into its prime factors, largest first: [2, 3, 2, 2, 2, 2, 2].
  // REQUIRES: every size >= 1.
  explicit Mesh(const std::vector<int64_t>& axes);

  int64_t devices() const { return devices_; }
  int num_axes() const { return static_cast<int>(sizes_.size()); }
  int64_t axis_size(int a) const { return sizes_[a]; }
  // How far apart in device id two neighbours along axis `a` are.
  int64_t axis_stride(int a) const { return strides_[a]; }
  // Devices along `axes`: the product of their sizes.
  int64_t Size(std::span<const int> axes) const;
  // `device`'s position along `axes`, mixed radix with the first axis major.
  int64_t Index(int64_t device, std::span<const int> axes) const;
  // The groups of devices that differ only along `axes`, each ordered by
  // Index(device, axes): replica groups of a collective over `axes`.
  std::vector<std::vector<int64_t>> Groups(std::span<const int> axes) const;

 private:
  int64_t devices_;
  std::vector<int64_t> sizes_, strides_;
};

// A value's sharding: the mesh axes that split each dimension; axes no
// dimension names hold replicas.
struct Sharding {
  std::vector<Axes> dims;

  static Sharding Replicated(int64_t rank) { return {std::vector<Axes>(rank)}; }
  bool IsReplicated() const;
  // Axes used by any dimension.
  Axes UsedAxes() const;
  // "[{0,1}, {}]" for notes and errors.
  std::string ToString() const;
  friend bool operator==(const Sharding&, const Sharding&) = default;
  friend auto operator<=>(const Sharding& a, const Sharding& b) { return a.dims <=> b.dims; }
};

// `s` as mesh axes for a value of `rank` dimensions. kUnimplemented when its
// tiles do not lie on `mesh` as a mixed-radix device grid (an arbitrary
// device permutation), or for maximal and manual shardings.
StatusOr<Sharding> FromHlo(const Mesh& mesh, const ir::HloSharding& s, int64_t rank);

// The same sharding in XLA's form, devices listed explicitly.
ir::HloSharding ToHlo(const Mesh& mesh, const Sharding& s);

// A dimension of `size` split `parts` ways: each device's part, the last
// ones padded at the end where it does not divide (XLA's uneven shards).
inline int64_t PartSize(int64_t size, int64_t parts) { return (size + parts - 1) / parts; }

// Whether every dimension of `global` splits evenly over its axes in `s`.
bool SplitsEvenly(const Mesh& mesh, const ir::Type& global, const Sharding& s);

// The type of each device's tile of a `global` value sharded by `s`.
ir::Type LocalType(const Mesh& mesh, const ir::Type& global, const Sharding& s);

}  // namespace tpusim::spmd

#endif  // TPUSIM_SPMD_MESH_H_
