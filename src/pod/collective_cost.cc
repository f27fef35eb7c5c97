#include "tpusim/pod/collective_cost.h"

#include <algorithm>
#include <set>

#include "tpusim/base/text.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/collectives.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::pod {
namespace {

using ops::CollectiveKind;

// Bytes on every directed ICI link and DCN port of a slice, as transfers
// are routed over it.
class LinkLoads {
 public:
  explicit LinkLoads(const Slice& s)
      : s_(s),
        rank_(s.topology.rank()),
        ici_(static_cast<size_t>(s.LinkSlots()), 0.0),
        dcn_out_(s.total_chips(), 0.0),
        dcn_in_(dcn_out_.size(), 0.0),
        axis_bytes_(rank_, 0.0) {}

  // Routes `bytes` from device a to device b; returns the ICI hops taken.
  int64_t Send(int64_t a, int64_t b, double bytes) { return Walk(a, b, bytes); }
  int64_t Hops(int64_t a, int64_t b) { return Walk(a, b, 0.0); }

  CollectiveCost Cost(int64_t hops) const {
    CollectiveCost c;
    c.hops = hops;
    c.axis_seconds.assign(rank_, 0.0);
    for (size_t i = 0; i < ici_.size(); ++i) {
      c.max_link_bytes = std::max(c.max_link_bytes, ici_[i]);
      double& axis = c.axis_seconds[(i / 2) % rank_];
      axis = std::max(axis, ici_[i] / s_.chip.ici.link_bytes_per_s);
    }
    double dcn_port = 0;
    for (size_t i = 0; i < dcn_out_.size(); ++i) {
      dcn_port = std::max({dcn_port, dcn_out_[i], dcn_in_[i]});
      c.dcn_bytes += dcn_out_[i];
    }
    c.axis_bytes = axis_bytes_;
    c.link_loads = std::make_shared<const std::vector<double>>(ici_);
    for (double v : axis_bytes_) c.ici_bytes += v;
    c.ici_seconds = c.max_link_bytes / s_.chip.ici.link_bytes_per_s;
    c.dcn_seconds = dcn_port / s_.chip.slice.dcn_bytes_per_s_per_chip;
    c.latency_seconds = static_cast<double>(hops) * s_.chip.ici.hop_latency_s;
    c.seconds = c.ici_seconds + c.dcn_seconds + c.latency_seconds;
    return c;
  }

 private:
  // Dimension-order routing: x, then y, then z, the shorter way round a
  // wrapped axis (forward on a tie). Another slice is one DCN transfer.
  int64_t Walk(int64_t a, int64_t b, double bytes) {
    DevicePlace pa = s_.Place(a), pb = s_.Place(b);
    const int64_t chips = s_.chips();
    if (pa.slice != pb.slice) {
      dcn_out_[pa.slice * chips + s_.ChipIndex(pa)] += bytes;
      dcn_in_[pb.slice * chips + s_.ChipIndex(pb)] += bytes;
      return 0;
    }
    int64_t hops = 0;
    for (int axis = 0; axis < rank_; ++axis) {
      const int64_t n = s_.topology.dims[axis];
      const int64_t forward = ((pb.coords[axis] - pa.coords[axis]) % n + n) % n;
      int dir = 1;
      int64_t steps = forward;
      if (s_.topology.wrap[axis]) {
        if (n - forward < forward) dir = -1, steps = n - forward;
      } else if (pb.coords[axis] < pa.coords[axis]) {
        dir = -1, steps = pa.coords[axis] - pb.coords[axis];
      }
      for (int64_t k = 0; k < steps && bytes > 0; ++k) {
        const int64_t chip = pa.slice * chips + s_.ChipIndex(pa);
        ici_[s_.LinkIndex(chip, axis, dir > 0)] += bytes;
        pa.coords[axis] = (pa.coords[axis] + dir + n) % n;
      }
      pa.coords[axis] = pb.coords[axis];
      axis_bytes_[axis] += bytes * static_cast<double>(steps);
      hops += steps;
    }
    return hops;
  }

  const Slice& s_;
  const int rank_;
  std::vector<double> ici_;  // by Slice::LinkIndex
  std::vector<double> dcn_out_, dcn_in_;
  std::vector<double> axis_bytes_;
};

// A device's coordinates on every axis a collective can span: its core, the
// torus axes, its slice.
std::vector<int64_t> AllCoords(const Slice& s, int64_t device) {
  DevicePlace p = s.Place(device);
  std::vector<int64_t> c = {p.core};
  c.insert(c.end(), p.coords.begin(), p.coords.end());
  c.push_back(p.slice);
  return c;
}

// The largest route between two members; exact up to 256 members, else
// twice the farthest from the first (a bound by the triangle inequality).
int64_t Diameter(LinkLoads& loads, const std::vector<int64_t>& g) {
  int64_t d = 0;
  if (g.size() > 256) {
    for (int64_t v : g) d = std::max(d, loads.Hops(g[0], v));
    return 2 * d;
  }
  for (int64_t u : g) {
    for (int64_t v : g) d = std::max(d, loads.Hops(u, v));
  }
  return d;
}

// Both directions of a ring in `order`, `bytes` each way on every edge.
void BidirectionalRing(LinkLoads& loads, const std::vector<int64_t>& order, double bytes) {
  if (order.size() < 2) return;
  for (size_t i = 0; i < order.size(); ++i) {
    const int64_t u = order[i], v = order[(i + 1) % order.size()];
    loads.Send(u, v, bytes);
    loads.Send(v, u, bytes);
  }
}

// The members of group `g` split by axis: its distinct values on each axis,
// or empty if `g` is not every combination of them (not a box).
std::vector<std::vector<int64_t>> BoxAxes(const Slice& s, const std::vector<int64_t>& g) {
  std::vector<std::set<int64_t>> values;
  for (int64_t d : g) {
    std::vector<int64_t> c = AllCoords(s, d);
    values.resize(c.size());
    for (size_t a = 0; a < c.size(); ++a) values[a].insert(c[a]);
  }
  std::vector<std::vector<int64_t>> axes;
  size_t combinations = 1;
  for (const auto& v : values) {
    combinations *= v.size();
    axes.emplace_back(v.begin(), v.end());
  }
  if (combinations != g.size()) return {};
  return axes;
}

// All-gather of `bytes` (the gathered array) in group `g`: bidirectional
// rings, axis by axis for a box (one part per axis, in rotated orders).
void Gather(const Slice& s, LinkLoads& loads, const std::vector<int64_t>& g, double bytes) {
  const double n = static_cast<double>(g.size());
  std::vector<std::vector<int64_t>> axes = BoxAxes(s, g);
  std::vector<int> varying;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].size() > 1) varying.push_back(static_cast<int>(a));
  }
  if (varying.empty()) {  // not a box: one ring in the group's order
    BidirectionalRing(loads, g, (n - 1) * bytes / n / 2);
    return;
  }
  std::map<std::vector<int64_t>, int64_t> device_at;
  for (int64_t d : g) device_at[AllCoords(s, d)] = d;
  const size_t k = varying.size();
  for (size_t part = 0; part < k; ++part) {
    double held = bytes / static_cast<double>(k) / n;  // each member's share of this part
    for (size_t step = 0; step < k; ++step) {
      const int axis = varying[(part + step) % k];
      const double len = static_cast<double>(axes[axis].size());
      // Every line of the box along `axis` is a ring; n_a - 1 ring steps
      // each send `held`, half each way.
      for (const auto& [coords, device] : device_at) {
        if (coords[axis] != axes[axis][0]) continue;
        std::vector<int64_t> ring;
        std::vector<int64_t> c = coords;
        for (int64_t v : axes[axis]) {
          c[axis] = v;
          ring.push_back(device_at.at(c));
        }
        BidirectionalRing(loads, ring, (len - 1) * held / 2);
      }
      held *= len;
    }
  }
}

constexpr int64_t kReferenceBytes = 1 << 20;

CollectiveCost Scaled(CollectiveCost c, double factor) {
  c.ici_seconds *= factor;
  c.dcn_seconds *= factor;
  c.ici_bytes *= factor;
  c.max_link_bytes *= factor;
  for (double& v : c.axis_bytes) v *= factor;
  for (double& v : c.axis_seconds) v *= factor;
  c.dcn_bytes *= factor;
  c.link_scale *= factor;
  c.seconds = c.ici_seconds + c.dcn_seconds + c.latency_seconds;
  return c;
}

}  // namespace

CollectiveCost PriceCollective(const Slice& s, ops::CollectiveKind kind, int64_t size,
                               const Groups& groups) {
  const double bytes = static_cast<double>(size);
  LinkLoads loads(s);
  int64_t hops = 0;
  for (const std::vector<int64_t>& g : groups) {
    if (g.size() < 2) continue;
    const double n = static_cast<double>(g.size());
    switch (kind) {
      case CollectiveKind::kAllGather:
      case CollectiveKind::kReduceScatter:
        Gather(s, loads, g, bytes);
        hops = std::max(hops, Diameter(loads, g));
        break;
      case CollectiveKind::kAllReduce:
        Gather(s, loads, g, 2 * bytes);  // reduce_scatter, then all_gather
        hops = std::max(hops, 2 * Diameter(loads, g));
        break;
      case CollectiveKind::kAllToAll:
        for (int64_t u : g) {
          for (int64_t v : g) {
            if (u != v) loads.Send(u, v, bytes / n);
          }
        }
        hops = std::max(hops, Diameter(loads, g));
        break;
      case CollectiveKind::kPermute:
        hops = std::max(hops, loads.Send(g[0], g[1], bytes));
        break;
      case CollectiveKind::kBroadcast:
      case CollectiveKind::kReduce: {
        int64_t chain = 0;
        for (size_t i = 0; i + 1 < g.size(); ++i) chain += loads.Send(g[i], g[i + 1], bytes);
        hops = std::max(hops, chain);
        break;
      }
    }
  }
  return loads.Cost(hops);
}

CollectiveCost CollectivePatterns::Reference(ops::CollectiveKind kind, const Groups& groups) {
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(kind, groups);
  auto it = costs_.find(key);
  if (it == costs_.end()) {
    CollectiveCost cost = PriceCollective(slice_, kind, kReferenceBytes, groups);
    it = costs_.emplace(std::move(key), std::move(cost)).first;
  }
  return it->second;
}

StatusOr<CollectivePricer> CollectivePricer::Create(const Slice& slice, int64_t num_replicas,
                                                    int64_t num_partitions,
                                                    std::shared_ptr<CollectivePatterns> patterns) {
  if (num_replicas < 1 || num_partitions < 1 ||
      num_replicas * num_partitions > slice.num_devices()) {
    return InvalidArgument("the program runs " + CountOf(num_replicas, "replica") + " x " +
                           CountOf(num_partitions, "partition") + ", but " + slice.name +
                           " has " + CountOf(slice.num_devices(), "device"));
  }
  if (patterns == nullptr) patterns = std::make_shared<CollectivePatterns>(slice);
  return CollectivePricer(std::move(patterns), num_replicas, num_partitions);
}

Status CollectivePricer::Prepare(const ir::Module& module) {
  Status status;
  for (const auto& f : module.functions()) {
    ir::Walk(f->body(), [&](ir::Operation& op) {
      const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
      if (!status.ok() || def == nullptr || def->work == nullptr) return;
      ops::Work work = def->work(op);
      if (work.collective) status = Price(op, *work.collective).status();
    });
  }
  return status;
}

StatusOr<CollectiveCost> CollectivePricer::Price(const ir::Operation& op,
                                                 const ops::CollectiveWork& work) {
  std::lock_guard<std::mutex> lock(*mu_);
  auto it = per_op_.find(&op);
  if (it == per_op_.end()) {
    auto groups = ops::CollectiveGroups(op, replicas_, partitions_);
    if (!groups.ok()) {
      return InvalidArgument(op.loc().ToString() + ": '" + op.name_str() + "' on " + slice().name +
                             ": " + groups.status().message());
    }
    it = per_op_.emplace(&op, patterns_->Reference(work.kind, *groups)).first;
  }
  return Scaled(it->second, static_cast<double>(work.bytes) / static_cast<double>(kReferenceBytes));
}

}  // namespace tpusim::pod
