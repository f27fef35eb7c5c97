// A pod slice: chips of one generation in a 2D or 3D torus joined by ICI
// links, the hosts that hold them, and, for multislice, several identical
// slices joined by the data-center network (DCN). The generation's rules
// (which shapes exist, which axes wrap around, how names count) are data in
// hw::ChipSpec::slice; this file turns them into a slice and numbers its
// devices as the TPU runtime does.
#ifndef TPUSIM_POD_SLICE_H_
#define TPUSIM_POD_SLICE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/hw/chip.h"

namespace tpusim::pod {

// Chips along each torus axis, x first, and whether the axis wraps around.
struct Topology {
  std::vector<int64_t> dims;
  std::vector<bool> wrap;

  int64_t num_chips() const;
  int rank() const { return static_cast<int>(dims.size()); }
  // "4x4x8"; wrapped axes are not marked.
  std::string ToString() const;
};

// Where a device sits: its slice, its chip's torus coordinates, and its
// TensorCore on the chip (0 unless the chip has a device per core).
struct DevicePlace {
  int64_t slice = 0;
  std::vector<int64_t> coords;
  int64_t core = 0;
};

struct Slice {
  std::string name;  // "v5p-128", "2xv5e-256", or "v5p 4x4x8"
  hw::ChipSpec chip;
  Topology topology;  // of one slice
  int64_t num_slices = 1;

  int64_t chips() const { return topology.num_chips(); }  // one slice
  int64_t total_chips() const { return chips() * num_slices; }
  int64_t hosts() const;                                  // one slice
  int64_t num_devices() const;                            // every slice
  int64_t ici_links() const;                              // one-way ICI links, every slice
  int64_t AxisLinks(int axis) const;                      // of them, along `axis`
  // Device ids follow the runtime: core fastest, then x, y, z, then slice:
  // id = core + D (x + X (y + Y (z + Z slice))), D devices per chip.
  // REQUIRES: 0 <= device < num_devices().
  DevicePlace Place(int64_t device) const;
  // The chip of a device within its slice: x + X (y + Y z).
  int64_t ChipIndex(const DevicePlace& p) const;
  // The ICI link leaving chip `chip` (ChipIndex + chips() * slice) along
  // `axis`, forward (to the next coordinate) or back; slots for links an
  // open end lacks stay unused. There are LinkSlots() indices.
  int64_t LinkIndex(int64_t chip, int axis, bool forward) const {
    return (chip * topology.rank() + axis) * 2 + (forward ? 0 : 1);
  }
  int64_t LinkSlots() const { return total_chips() * topology.rank() * 2; }
};

// "4x4x8" for `chip`, with the generation's wraparound rule. kInvalidArgument
// if it is malformed or of the wrong rank.
StatusOr<Topology> ParseTopology(const hw::ChipSpec& chip, std::string_view text);

// An accelerator type as Cloud TPU names it ("v5p-128", "v5litepod-16",
// "v6e-256", "v4-8"; "v5e-16" too), or a preset and any torus of it
// ("v4:4x4x12", as published runs on unlisted shapes give them); either
// optionally "Nx" for N slices over DCN ("2xv5e-256", "2xv4:12x16x16").
// kNotFound names the generation's offered sizes.
StatusOr<Slice> FindSlice(std::string_view name);

// A slice of any shape of `chip` ("4x4x8"), `num_slices` of them.
StatusOr<Slice> MakeSlice(const hw::ChipSpec& chip, std::string_view topology,
                          int64_t num_slices = 1);

// Every offered slice of every preset, in generation and size order.
std::vector<Slice> StandardSlices();

// The accelerator type name of a one-slice topology of `chip` ("v5p-128").
std::string AcceleratorType(const hw::ChipSpec& chip, const Topology& topology);

}  // namespace tpusim::pod

#endif  // TPUSIM_POD_SLICE_H_
