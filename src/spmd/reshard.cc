#include <algorithm>

#include "spmd/function_partitioner.h"

namespace tpusim::spmd {

// `target` differs from `l` in one dimension, which adds some of the
// partial axes to its sharding: a reduce-scatter over those gives it, and
// an all-reduce of the (smaller) parts over the others completes it. So
// FSDP's gradients over data x fsdp reduce-scatter over fsdp on ICI, and
// only their shards cross DCN over data.
std::optional<FunctionPartitioner::Scatter> FunctionPartitioner::ScatterDim(
    const Local& l, const Sharding& target) const {
  std::optional<Scatter> scatter;
  for (size_t d = 0; d < target.dims.size(); ++d) {
    const Axes& have = l.sharding.dims[d];
    const Axes& want = target.dims[d];
    if (want == have) continue;
    if (scatter || want.size() <= have.size() ||
        !std::equal(have.begin(), have.end(), want.begin())) {
      return std::nullopt;
    }
    Axes added(want.begin() + static_cast<int64_t>(have.size()), want.end());
    for (int a : added) {
      if (std::find(l.partial.begin(), l.partial.end(), a) == l.partial.end()) return std::nullopt;
    }
    scatter = Scatter{static_cast<int64_t>(d), std::move(added)};
  }
  return scatter;
}

// Padded (uneven) shards move only by gathering: an all-to-all or a
// reduce-scatter would need every device's part the same size.
ir::Value FunctionPartitioner::Reshard(ir::Value v, const Sharding& target) {
  if (std::optional<ir::Value> done = Resharded(v, target)) return *done;
  const Local& l = locals_.at(v.impl());
  Local moving = {l.value, l.sharding, {}, {}};
  const bool even =
      SplitsEvenly(mesh_, v.type(), l.sharding) && SplitsEvenly(mesh_, v.type(), target);
  if (!l.partial.empty()) {
    if (std::optional<Scatter> s = even ? ScatterDim(l, target) : std::nullopt) {
      ir::Value scattered = emit_->ReduceScatter(l.value, s->dim, s->axes, l.combiner);
      Axes rest;
      for (int a : l.partial) {
        if (std::find(s->axes.begin(), s->axes.end(), a) == s->axes.end()) rest.push_back(a);
      }
      if (!rest.empty()) scattered = emit_->AllReduce(scattered, rest, l.combiner);
      Remember(v, target, scattered);
      return scattered;
    }
    std::optional<ir::Value> combined = Resharded(v, l.sharding);
    if (!combined) {
      combined = emit_->AllReduce(l.value, l.partial, l.combiner);
      Remember(v, l.sharding, *combined);
    }
    moving.value = *combined;
  }
  if (moving.sharding == target) return moving.value;
  if (even) MoveAxes(moving, target);
  GatherAndSlice(moving, target, v.type());
  Remember(v, target, moving.value);
  return moving.value;
}

std::optional<ir::Value> FunctionPartitioner::Resharded(ir::Value v, const Sharding& s) const {
  const auto key = std::make_pair(v.impl(), s);
  for (auto scope = resharded_.rbegin(); scope != resharded_.rend(); ++scope) {
    if (auto it = scope->find(key); it != scope->end()) return it->second;
  }
  return std::nullopt;
}

void FunctionPartitioner::Remember(ir::Value v, const Sharding& s, ir::Value local) {
  resharded_.back().emplace(std::make_pair(v.impl(), s), local);
}

void FunctionPartitioner::Enter(ir::Block* block) {
  emit_->Enter(block);
  resharded_.emplace_back();
}

void FunctionPartitioner::Leave() {
  emit_->Leave();
  resharded_.pop_back();
}

// Axes leaving the minor end of one dimension for the minor end of another
// move in one all-to-all, as XLA reshards, instead of a gather and a slice.
void FunctionPartitioner::MoveAxes(Local& l, const Sharding& target) {
  std::vector<Axes>& dims = l.sharding.dims;
  for (size_t from = 0; from < dims.size(); ++from) {
    const Axes& keep = target.dims[from];
    if (dims[from].size() <= keep.size() ||
        !std::equal(keep.begin(), keep.end(), dims[from].begin())) {
      continue;
    }
    const Axes axes(dims[from].begin() + static_cast<int64_t>(keep.size()), dims[from].end());
    for (size_t to = 0; to < dims.size(); ++to) {
      Axes joined = dims[to];
      joined.insert(joined.end(), axes.begin(), axes.end());
      const Axes& want = target.dims[to];
      if (to == from || joined.size() > want.size() ||
          !std::equal(joined.begin(), joined.end(), want.begin())) {
        continue;
      }
      l.value =
          emit_->AllToAll(l.value, static_cast<int64_t>(to), static_cast<int64_t>(from), axes);
      dims[from] = keep;
      dims[to] = std::move(joined);
      break;
    }
  }
}

// Gathers each dimension whose axes do not begin `target`'s, then slices
// what `target` splits further. A dimension split unevenly before or after
// is gathered whole, its padding cut off, and padded again for the slice.
void FunctionPartitioner::GatherAndSlice(Local& l, const Sharding& target, const ir::Type& global) {
  std::vector<Axes> slices(target.dims.size());
  bool slice = false;
  for (size_t d = 0; d < target.dims.size(); ++d) {
    const auto dim = static_cast<int64_t>(d);
    const Axes& have = l.sharding.dims[d];
    const Axes& want = target.dims[d];
    const int64_t size = global.dim(dim), parts = mesh_.Size(want);
    const bool prefix =
        have.size() <= want.size() && std::equal(have.begin(), have.end(), want.begin());
    const bool even = size % mesh_.Size(have) == 0 && size % parts == 0;
    if (prefix && (even || have == want)) {
      slices[d].assign(want.begin() + static_cast<int64_t>(have.size()), want.end());
    } else {
      if (!have.empty()) {
        l.value = emit_->AllGather(l.value, dim, have);
        if (l.value.type().dim(dim) > size) l.value = emit_->Rows(l.value, dim, 0, size);
      }
      if (size % parts != 0) l.value = emit_->PadTo(l.value, dim, PartSize(size, parts) * parts);
      slices[d] = want;
    }
    slice |= !slices[d].empty();
  }
  if (slice) l.value = emit_->Slice(l.value, slices);
  l.sharding = target;
}

}  // namespace tpusim::spmd
