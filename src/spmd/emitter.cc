#include "spmd/emitter.h"

#include <algorithm>
#include <cstring>

namespace tpusim::spmd {
namespace {

using ir::Attribute;

ir::Type WithDim(const ir::Type& t, int64_t dim, int64_t size) {
  ir::Shape shape = t.shape();
  shape[dim] = size;
  return ir::Type::Tensor(t.element(), shape);
}

Attribute I64(int64_t v) { return Attribute::Int(v, ir::ElementType::kSI64); }

std::vector<uint8_t> I32Bytes(const std::vector<int64_t>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
  for (size_t i = 0; i < values.size(); ++i) {
    const auto v = static_cast<int32_t>(values[i]);
    std::memcpy(bytes.data() + i * sizeof v, &v, sizeof v);
  }
  return bytes;
}

}  // namespace

ir::Attribute I64Matrix(const std::vector<int64_t>& flat, int64_t cols) {
  std::vector<uint8_t> bytes(flat.size() * sizeof(int64_t));
  if (!flat.empty()) std::memcpy(bytes.data(), flat.data(), bytes.size());
  const auto rows = static_cast<int64_t>(flat.size()) / cols;
  return Attribute::DenseElements(ir::Type::Tensor(ir::ElementType::kSI64, {rows, cols}),
                                  std::move(bytes));
}

ir::Operation* Emitter::Emit(std::string_view name, std::vector<ir::Value> operands,
                             std::vector<ir::Type> results, std::vector<ir::NamedAttribute> attrs) {
  auto op = std::make_unique<ir::Operation>(ir::OpName(name), loc_);
  op->SetOperands(std::move(operands));
  for (ir::Type& t : results) op->AddResult(std::move(t));
  for (auto& [key, value] : attrs) op->attrs().Set(std::move(key), std::move(value));
  return Append(std::move(op));
}

ir::Attribute Emitter::NextChannel() {
  return Attribute::Struct("stablehlo.channel_handle",
                           {{"handle", I64(next_channel_++)}, {"type", I64(1)}});
}

std::vector<ir::NamedAttribute> Emitter::GroupAttrs(const Axes& axes) {
  std::vector<int64_t> flat;
  for (const auto& g : mesh_.Groups(axes)) flat.insert(flat.end(), g.begin(), g.end());
  return {{"replica_groups", I64Matrix(flat, mesh_.Size(axes))},
          {"channel_handle", NextChannel()},
          {"use_global_device_ids", Attribute::Unit()}};
}

void Emitter::AddCombiner(ir::Operation* op, ir::ElementType element, const std::string& combiner) {
  ir::Block& body = op->AddRegion().AddBlock();
  const ir::Type scalar = ir::Type::Tensor(element, {});
  ir::Value a = body.AddArgument(scalar), b = body.AddArgument(scalar);
  auto apply = std::make_unique<ir::Operation>(ir::OpName(combiner), loc_);
  apply->SetOperands({a, b});
  ir::Value sum = apply->AddResult(scalar);
  body.Append(std::move(apply));
  auto ret = std::make_unique<ir::Operation>(ir::OpName("stablehlo.return"), loc_);
  ret->SetOperands({sum});
  body.Append(std::move(ret));
}

ir::Value Emitter::AllGather(ir::Value v, int64_t dim, const Axes& axes) {
  std::vector<ir::NamedAttribute> attrs = GroupAttrs(axes);
  attrs.emplace_back("all_gather_dim", I64(dim));
  const ir::Type& t = v.type();
  ++stats_->inserted["stablehlo.all_gather"];
  return Emit("stablehlo.all_gather", {v}, {WithDim(t, dim, t.dim(dim) * mesh_.Size(axes))},
              std::move(attrs))
      ->result(0);
}

ir::Value Emitter::AllReduce(ir::Value v, const Axes& axes, const std::string& combiner) {
  ++stats_->inserted["stablehlo.all_reduce"];
  ir::Operation* op = Emit("stablehlo.all_reduce", {v}, {v.type()}, GroupAttrs(axes));
  AddCombiner(op, v.type().element(), combiner);
  return op->result(0);
}

ir::Value Emitter::AllToAll(ir::Value v, int64_t split, int64_t concat, const Axes& axes) {
  const int64_t n = mesh_.Size(axes);
  std::vector<ir::NamedAttribute> attrs = GroupAttrs(axes);
  attrs.emplace_back("split_dimension", I64(split));
  attrs.emplace_back("concat_dimension", I64(concat));
  attrs.emplace_back("split_count", I64(n));
  ir::Type t = WithDim(v.type(), split, v.type().dim(split) / n);
  t = WithDim(t, concat, t.dim(concat) * n);
  ++stats_->inserted["stablehlo.all_to_all"];
  return Emit("stablehlo.all_to_all", {v}, {t}, std::move(attrs))->result(0);
}

ir::Value Emitter::ReduceScatter(ir::Value v, int64_t dim, const Axes& axes,
                                 const std::string& combiner) {
  std::vector<ir::NamedAttribute> attrs = GroupAttrs(axes);
  attrs.emplace_back("scatter_dimension", I64(dim));
  const ir::Type& t = v.type();
  ++stats_->inserted["stablehlo.reduce_scatter"];
  ir::Operation* op = Emit("stablehlo.reduce_scatter", {v},
                           {WithDim(t, dim, t.dim(dim) / mesh_.Size(axes))}, std::move(attrs));
  AddCombiner(op, t.element(), combiner);
  return op->result(0);
}

ir::Value Emitter::Constant(ir::Type type, std::vector<uint8_t> bytes) {
  Attribute value = Attribute::DenseElements(type, std::move(bytes));
  return Emit("stablehlo.constant", {}, {type}, {{"value", value}})->result(0);
}

ir::Value Emitter::PerDevice(const std::vector<int64_t>& values) {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    if (auto it = scope->per_device.find(values); it != scope->per_device.end()) return it->second;
  }
  const ir::Type scalar = ir::Type::Tensor(ir::ElementType::kSI32, {});
  ir::Value out;
  if (std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == values[0]; })) {
    out = Constant(scalar, I32Bytes({values[0]}));
  } else {
    ir::Value id = PartitionId();
    const auto n = static_cast<int64_t>(values.size());
    ir::Value table = Constant(ir::Type::Tensor(ir::ElementType::kSI32, {n}), I32Bytes(values));
    ir::Value one = Emit("stablehlo.dynamic_slice", {table, id},
                         {ir::Type::Tensor(ir::ElementType::kSI32, {1})},
                         {{"slice_sizes", Attribute::DenseArray(ir::ElementType::kSI64, {1})}})
                        ->result(0);
    out = Emit("stablehlo.reshape", {one}, {scalar})->result(0);
  }
  scopes_.back().per_device.emplace(values, out);
  return out;
}

ir::Value Emitter::PartitionId() {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    if (scope->partition_id) return scope->partition_id;
  }
  return scopes_.back().partition_id =
             Emit("stablehlo.partition_id", {}, {ir::Type::Tensor(ir::ElementType::kUI32, {})})
                 ->result(0);
}

ir::Value Emitter::Slice(ir::Value v, const std::vector<Axes>& axes) {
  const ir::Type& t = v.type();
  ir::Shape sizes = t.shape();
  for (size_t d = 0; d < sizes.size(); ++d) sizes[d] /= mesh_.Size(axes[d]);
  const ir::Type local = ir::Type::Tensor(t.element(), sizes);
  // Every part of a splat constant is a smaller splat, of a broadcast a
  // smaller broadcast, of an iota a shifted iota: made in place, the whole
  // array never is (and the unused original goes as dead code).
  const ir::Operation* def = v.defining_op();
  if (def != nullptr && def->name_str() == "stablehlo.constant" && def->attr("value").is_splat()) {
    return Constant(local, def->attr("value").bytes());
  }
  if (def != nullptr && def->name_str() == "stablehlo.broadcast_in_dim" &&
      def->num_operands() == 1) {
    return SliceOfBroadcast(*def, local, axes);
  }
  if (def != nullptr && def->name_str() == "stablehlo.iota") return SliceOfIota(*def, local, axes);
  std::vector<ir::Value> operands = {v};
  for (size_t d = 0; d < sizes.size(); ++d) {
    std::vector<int64_t> offsets(mesh_.devices());
    for (int64_t device = 0; device < mesh_.devices(); ++device) {
      offsets[device] = mesh_.Index(device, axes[d]) * sizes[d];
    }
    operands.push_back(PerDevice(offsets));
  }
  ++stats_->inserted["stablehlo.dynamic_slice"];
  return Emit("stablehlo.dynamic_slice", std::move(operands), {local},
              {{"slice_sizes", Attribute::DenseArray(ir::ElementType::kSI64, sizes)}})
      ->result(0);
}

ir::Value Emitter::Rows(ir::Value v, int64_t dim, int64_t begin, int64_t end) {
  const ir::Shape& shape = v.type().shape();
  std::vector<int64_t> start(shape.size(), 0), limit = shape, strides(shape.size(), 1);
  start[dim] = begin;
  limit[dim] = end;
  return Emit("stablehlo.slice", {v}, {WithDim(v.type(), dim, end - begin)},
              {{"start_indices", Attribute::DenseArray(ir::ElementType::kSI64, start)},
               {"limit_indices", Attribute::DenseArray(ir::ElementType::kSI64, limit)},
               {"strides", Attribute::DenseArray(ir::ElementType::kSI64, strides)}})
      ->result(0);
}

ir::Value Emitter::Shift(ir::Value v, const Axes& axes, int64_t step) {
  std::vector<int64_t> pairs;
  for (const std::vector<int64_t>& group : mesh_.Groups(axes)) {
    const auto n = static_cast<int64_t>(group.size());
    for (int64_t j = std::max<int64_t>(0, -step); j < n && j + step < n; ++j) {
      pairs.push_back(group[j]);
      pairs.push_back(group[j + step]);
    }
  }
  ++stats_->inserted["stablehlo.collective_permute"];
  return Emit("stablehlo.collective_permute", {v}, {v.type()},
              {{"source_target_pairs", I64Matrix(pairs, 2)}, {"channel_handle", NextChannel()}})
      ->result(0);
}

ir::Value Emitter::Edge(ir::Value v, const Axes& axes, int64_t index, ir::Value edge) {
  std::vector<int64_t> at(mesh_.devices());
  for (int64_t device = 0; device < mesh_.devices(); ++device) {
    at[device] = mesh_.Index(device, axes) == index ? 1 : 0;
  }
  const ir::Type pred = ir::Type::Tensor(ir::ElementType::kI1, {});
  ir::Value is_edge =
      Emit("stablehlo.compare", {PerDevice(at), PerDevice(std::vector<int64_t>(at.size(), 1))},
           {pred},
           {{"comparison_direction", Attribute::Enum("stablehlo.comparison_direction", "EQ")}})
          ->result(0);
  return Emit("stablehlo.select", {is_edge, Broadcast(edge, v.type()), v}, {v.type()})->result(0);
}

ir::Value Emitter::Halo(ir::Value v, int64_t dim, const Axes& axes, int64_t lo, int64_t hi,
                        std::optional<ir::Value> edge) {
  const int64_t n = v.type().dim(dim);
  const int64_t last = mesh_.Size(axes) - 1;
  std::vector<ir::Value> parts;
  if (lo > 0) {
    parts.push_back(Shift(Rows(v, dim, n - lo, n), axes, 1));
    if (edge) parts.back() = Edge(parts.back(), axes, 0, *edge);
  }
  const int64_t begin = std::max<int64_t>(0, -lo), end = n - std::max<int64_t>(0, -hi);
  parts.push_back(begin == 0 && end == n ? v : Rows(v, dim, begin, end));
  if (hi > 0) {
    parts.push_back(Shift(Rows(v, dim, 0, hi), axes, -1));
    if (edge) parts.back() = Edge(parts.back(), axes, last, *edge);
  }
  if (parts.size() == 1) return parts[0];
  int64_t size = 0;
  for (ir::Value p : parts) size += p.type().dim(dim);
  return Emit("stablehlo.concatenate", std::move(parts), {WithDim(v.type(), dim, size)},
              {{"dimension", I64(dim)}})
      ->result(0);
}

ir::Value Emitter::Zero(ir::ElementType element) {
  return Constant(ir::Type::Tensor(element, {}),
                  std::vector<uint8_t>(ir::StorageBytes(element), 0));
}

ir::Value Emitter::Broadcast(ir::Value scalar, const ir::Type& type) {
  return Emit("stablehlo.broadcast_in_dim", {scalar}, {type},
              {{"broadcast_dimensions", Attribute::DenseArray(ir::ElementType::kSI64, {})}})
      ->result(0);
}

ir::Value Emitter::Mask(ir::Value v, int64_t dim, const Axes& axes, int64_t size,
                        std::optional<ir::Value> fill) {
  const int64_t part = v.type().dim(dim);
  std::vector<int64_t> rows(mesh_.devices());
  for (int64_t device = 0; device < mesh_.devices(); ++device) {
    rows[device] = std::clamp<int64_t>(size - mesh_.Index(device, axes) * part, 0, part);
  }
  const ir::Type index = ir::Type::Tensor(ir::ElementType::kSI32, v.type().shape());
  ir::Value iota = Emit("stablehlo.iota", {}, {index}, {{"iota_dimension", I64(dim)}})->result(0);
  ir::Value inside =
      Emit("stablehlo.compare", {iota, Broadcast(PerDevice(rows), index)},
           {ir::Type::Tensor(ir::ElementType::kI1, v.type().shape())},
           {{"comparison_direction", Attribute::Enum("stablehlo.comparison_direction", "LT")}})
          ->result(0);
  ir::Value padding = Broadcast(fill ? *fill : Zero(v.type().element()), v.type());
  return Emit("stablehlo.select", {inside, v, padding}, {v.type()})->result(0);
}

ir::Value Emitter::PadTo(ir::Value v, int64_t dim, int64_t size) {
  // Reductions mask the padding (MaskPadding) and nothing else reads it, so
  // a splat, a broadcast scalar or an iota just grows: Slice then makes
  // each device's part in place, and the whole array is never built.
  const ir::Type padded = WithDim(v.type(), dim, size);
  if (const ir::Operation* def = v.defining_op()) {
    const std::string_view name = def->name_str();
    if (name == "stablehlo.constant" && def->attr("value").is_splat()) {
      return Constant(padded, def->attr("value").bytes());
    }
    if (name == "stablehlo.iota") {
      return Emit(name, {}, {padded}, {{"iota_dimension", def->attr("iota_dimension")}})->result(0);
    }
    if (name == "stablehlo.broadcast_in_dim" && def->operand(0).type().rank() == 0) {
      return Broadcast(def->operand(0), padded);
    }
  }
  const auto rank = static_cast<size_t>(v.type().rank());
  std::vector<int64_t> high(rank, 0);
  high[dim] = size - v.type().dim(dim);
  return Emit("stablehlo.pad", {v, Zero(v.type().element())}, {padded},
              {{"edge_padding_low",
                Attribute::DenseArray(ir::ElementType::kSI64, std::vector<int64_t>(rank, 0))},
               {"edge_padding_high", Attribute::DenseArray(ir::ElementType::kSI64, high)},
               {"interior_padding",
                Attribute::DenseArray(ir::ElementType::kSI64, std::vector<int64_t>(rank, 0))}})
      ->result(0);
}

ir::Value Emitter::SliceOfBroadcast(const ir::Operation& broadcast, const ir::Type& local,
                                    const std::vector<Axes>& axes) {
  ir::Value operand = broadcast.operand(0);
  const std::vector<int64_t> dims = broadcast.attr("broadcast_dimensions").AsInts();
  std::vector<Axes> operand_axes(static_cast<size_t>(operand.type().rank()));
  bool sliced = false;
  for (size_t i = 0; i < operand_axes.size() && i < dims.size(); ++i) {
    if (operand.type().dim(static_cast<int64_t>(i)) == broadcast.result(0).type().dim(dims[i])) {
      operand_axes[i] = axes[dims[i]];
      sliced |= !operand_axes[i].empty();
    }
  }
  if (sliced) operand = Slice(operand, operand_axes);
  return Emit("stablehlo.broadcast_in_dim", {operand}, {local},
              {{"broadcast_dimensions", Attribute::DenseArray(ir::ElementType::kSI64, dims)}})
      ->result(0);
}

ir::Value Emitter::SliceOfIota(const ir::Operation& iota, const ir::Type& local,
                               const std::vector<Axes>& axes) {
  const int64_t dim = iota.attr("iota_dimension").int_value();
  ir::Value part = Emit("stablehlo.iota", {}, {local}, {{"iota_dimension", I64(dim)}})->result(0);
  if (axes[dim].empty()) return part;
  std::vector<int64_t> offsets(mesh_.devices());
  for (int64_t device = 0; device < mesh_.devices(); ++device) {
    offsets[device] = mesh_.Index(device, axes[dim]) * local.dim(dim);
  }
  const ir::Type scalar = ir::Type::Tensor(local.element(), {});
  ir::Value offset = PerDevice(offsets);
  if (local.element() != ir::ElementType::kSI32) {
    offset = Emit("stablehlo.convert", {offset}, {scalar})->result(0);
  }
  return Emit("stablehlo.add", {part, Broadcast(offset, local)}, {local})->result(0);
}

}  // namespace tpusim::spmd
