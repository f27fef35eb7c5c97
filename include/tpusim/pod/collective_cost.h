// What a collective costs on a slice: the bytes it puts on every ICI link
// and DCN port, and from them its time (docs/pod.md gives the formulas).
//
// Each algorithm is a set of transfers routed over the torus in dimension
// order (x, then y, then z; the shorter way round a wrapped axis). All groups
// of a collective run at once, so groups that share links share their
// bandwidth. Time = the busiest ICI link's bytes / link bandwidth + the
// busiest chip's DCN bytes / its DCN bandwidth + hops x hop latency.
//  - all_gather, reduce_scatter: bidirectional rings. A group that is a box
//    of the torus (every combination of its coordinates per axis) gathers
//    axis by axis; with k axes the data is cut into k parts that take the
//    axes in rotated orders, so every axis's links work at once. Any other
//    group is one ring in its own order.
//  - all_reduce: a reduce_scatter, then an all_gather.
//  - all_to_all: every member sends 1/n of its data straight to each other.
//  - collective_permute: each source sends its data to its target.
//  - collective_broadcast, collective_reduce: a pipelined chain around the
//    group's ring.
#ifndef TPUSIM_POD_COLLECTIVE_COST_H_
#define TPUSIM_POD_COLLECTIVE_COST_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/ops/work.h"
#include "tpusim/pod/slice.h"

namespace tpusim::pod {

using Groups = std::vector<std::vector<int64_t>>;  // device ids

struct CollectiveCost {
  double seconds = 0;
  double ici_seconds = 0, dcn_seconds = 0, latency_seconds = 0;
  double ici_bytes = 0;              // summed over every link
  double max_link_bytes = 0;         // the busiest ICI link, one way
  std::vector<double> axis_bytes;    // ICI bytes per torus axis, all links
  std::vector<double> axis_seconds;  // per torus axis: its busiest link's bytes / bandwidth
  double dcn_bytes = 0;
  int64_t hops = 0;
  // Bytes on each directed ICI link are link_scale * (*link_loads), indexed
  // by Slice::LinkIndex; the loads are shared between costs of one pattern.
  std::shared_ptr<const std::vector<double>> link_loads;
  double link_scale = 1;
};

// The cost of `kind` moving `bytes` per device among `groups` (for
// kPermute: (source, target) pairs). REQUIRES: every id < slice.num_devices().
CollectiveCost PriceCollective(const Slice& slice, ops::CollectiveKind kind, int64_t bytes,
                               const Groups& groups);

// The costs of collective patterns (a kind and its groups) on one slice,
// each routed once at a reference size: costs scale linearly in bytes. Many
// programs on one slice (a plan's candidates) can share one. Thread-safe.
class CollectivePatterns {
 public:
  explicit CollectivePatterns(Slice slice) : slice_(std::move(slice)) {}
  const Slice& slice() const { return slice_; }
  // `kind` moving the reference bytes (1 MiB) per device among `groups`, as
  // PriceCollective.
  CollectiveCost Reference(ops::CollectiveKind kind, const Groups& groups);

 private:
  Slice slice_;
  std::mutex mu_;
  std::map<std::pair<ops::CollectiveKind, Groups>, CollectiveCost> costs_;  // at the reference
};

// Prices the collective ops of one program on a slice, whose devices run its
// num_replicas x num_partitions processes (device = replica * partitions +
// partition). Each op's groups are resolved once and its pattern priced by
// `patterns` (a new one of its own when null).
class CollectivePricer {
 public:
  // kInvalidArgument if the grid needs more devices than the slice has.
  // REQUIRES: `patterns`, if given, is of `slice`.
  static StatusOr<CollectivePricer> Create(const Slice& slice, int64_t num_replicas,
                                           int64_t num_partitions,
                                           std::shared_ptr<CollectivePatterns> patterns = nullptr);

  const Slice& slice() const { return patterns_->slice(); }
  int64_t num_processes() const { return replicas_ * partitions_; }

  // Prices every collective op of `module` once, so that a bad process group
  // is an error before anything runs. REQUIRES: `module` outlives the pricer.
  Status Prepare(const ir::Module& module);

  // The cost of one execution of `op` doing `work`. Thread-safe. kInvalidArgument (naming
  // the op) if its groups name processes outside the grid. REQUIRES: `op`
  // outlives the pricer.
  StatusOr<CollectiveCost> Price(const ir::Operation& op, const ops::CollectiveWork& work);

 private:
  CollectivePricer(std::shared_ptr<CollectivePatterns> patterns, int64_t replicas,
                   int64_t partitions)
      : patterns_(std::move(patterns)),
        replicas_(replicas),
        partitions_(partitions),
        mu_(std::make_unique<std::mutex>()) {}

  std::shared_ptr<CollectivePatterns> patterns_;
  int64_t replicas_, partitions_;
  std::map<const ir::Operation*, CollectiveCost> per_op_;  // its pattern's reference cost
  std::unique_ptr<std::mutex> mu_;  // the devices of a values run price at once
};

}  // namespace tpusim::pod

#endif  // TPUSIM_POD_COLLECTIVE_COST_H_
