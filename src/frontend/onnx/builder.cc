#include "frontend/onnx/builder.h"

#include <algorithm>
#include <cstring>

#include "tpusim/numerics/float_formats.h"

namespace tpusim::frontend::onnx_import {

using ir::Attribute;
using ir::Type;

ir::Attribute DenseOf(const Tensor& t) {
  std::vector<uint8_t> bytes(t.raw(), t.raw() + t.size_bytes());
  return Attribute::DenseElements(t.type(), std::move(bytes));
}

ir::Attribute I64Array(const std::vector<int64_t>& v) {
  return Attribute::DenseArray(ElementType::kSI64, v);
}

ir::Attribute IntList(const std::vector<int64_t>& v) {
  std::vector<Attribute> out;
  for (int64_t x : v) out.push_back(Attribute::Int(x));
  return Attribute::Array(std::move(out));
}

std::vector<int64_t> IndexRange(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

namespace {

Attribute I64(int64_t v) { return Attribute::Int(v, ElementType::kSI64); }

// "add" names stablehlo.add; a dialect-qualified name ("chlo.erf") itself.
std::string OpNameOf(std::string_view name) {
  return name.find('.') == std::string_view::npos ? "stablehlo." + std::string(name)
                                                  : std::string(name);
}

// One element of `element` holding `v`, in its storage format.
std::vector<uint8_t> EncodeScalar(ElementType element, double v) {
  Tensor t = Tensor::Allocate(Type::Tensor(element, {})).value();
  numerics::StoreDouble(element, v, t.mutable_raw());
  return std::vector<uint8_t>(t.raw(), t.raw() + t.size_bytes());
}

}  // namespace

bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out) {
  const size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    r[i] = x == 1 ? y : x;
  }
  *out = std::move(r);
  return true;
}

ir::Operation* Builder::Emit(std::string_view name, std::vector<Value> operands,
                             std::vector<Type> results, std::vector<ir::NamedAttribute> attrs) {
  auto op = std::make_unique<ir::Operation>(ir::OpName(name), loc_);
  op->SetOperands(std::move(operands));
  for (Type& t : results) op->AddResult(std::move(t));
  for (auto& [key, value] : attrs) op->attrs().Set(std::move(key), std::move(value));
  return block_->Append(std::move(op));
}

Value Builder::Constant(const Tensor& t) {
  return Emit("stablehlo.constant", {}, {t.type()}, {{"value", DenseOf(t)}})->result(0);
}

Value Builder::Splat(ElementType element, double v, const Shape& shape) {
  Attribute value =
      Attribute::DenseElements(Type::Tensor(element, shape), EncodeScalar(element, v));
  return Emit("stablehlo.constant", {}, {Type::Tensor(element, shape)}, {{"value", value}})
      ->result(0);
}

Value Builder::Scalar(ElementType element, double v) { return Splat(element, v, {}); }

Value Builder::I64s(const std::vector<int64_t>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(int64_t));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  const Type type = Type::Tensor(ElementType::kSI64, {static_cast<int64_t>(v.size())});
  return Emit("stablehlo.constant", {}, {type},
              {{"value", Attribute::DenseElements(type, std::move(bytes))}})
      ->result(0);
}

Value Builder::Unary(std::string_view name, Value x) {
  return Emit(OpNameOf(name), {x}, {x.type()})->result(0);
}

Value Builder::Binary(std::string_view name, Value a, Value b) {
  return Emit(OpNameOf(name), {a, b}, {a.type()})->result(0);
}

Value Builder::BinaryBroadcast(std::string_view name, Value a, Value b) {
  Shape shape;
  BroadcastShapes(ShapeOf(a), ShapeOf(b), &shape);
  return Binary(name, BroadcastTo(a, shape), BroadcastTo(b, shape));
}

Value Builder::Compare(std::string_view direction, Value a, Value b) {
  Shape shape;
  BroadcastShapes(ShapeOf(a), ShapeOf(b), &shape);
  a = BroadcastTo(a, shape);
  b = BroadcastTo(b, shape);
  return Emit("stablehlo.compare", {a, b}, {Type::Tensor(ElementType::kI1, shape)},
              {{"comparison_direction",
                Attribute::Enum("stablehlo.comparison_direction", std::string(direction))}})
      ->result(0);
}

Value Builder::Select(Value pred, Value on_true, Value on_false) {
  Shape shape, all;
  BroadcastShapes(ShapeOf(on_true), ShapeOf(on_false), &shape);
  BroadcastShapes(shape, ShapeOf(pred), &all);
  return Emit("stablehlo.select",
              {BroadcastTo(pred, all), BroadcastTo(on_true, all), BroadcastTo(on_false, all)},
              {Type::Tensor(ElementOf(on_true), all)})
      ->result(0);
}

Value Builder::Convert(Value x, ElementType element) {
  if (ElementOf(x) == element) return x;
  return Emit("stablehlo.convert", {x}, {Type::Tensor(element, ShapeOf(x))})->result(0);
}

Value Builder::Clamp(Value lo, Value x, Value hi) {
  return Emit("stablehlo.clamp", {lo, x, hi}, {x.type()})->result(0);
}

Value Builder::Reshape(Value x, const Shape& shape) {
  if (ShapeOf(x) == shape) return x;
  return Emit("stablehlo.reshape", {x}, {Type::Tensor(ElementOf(x), shape)})->result(0);
}

Value Builder::Transpose(Value x, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return x;
  Shape shape;
  for (int64_t p : perm) shape.push_back(ShapeOf(x)[p]);
  return Emit("stablehlo.transpose", {x}, {Type::Tensor(ElementOf(x), shape)},
              {{"permutation", I64Array(perm)}})
      ->result(0);
}

Value Builder::BroadcastInDim(Value x, const Shape& shape, const std::vector<int64_t>& dims) {
  return Emit("stablehlo.broadcast_in_dim", {x}, {Type::Tensor(ElementOf(x), shape)},
              {{"broadcast_dimensions", I64Array(dims)}})
      ->result(0);
}

Value Builder::BroadcastTo(Value x, const Shape& shape) {
  if (ShapeOf(x) == shape) return x;
  const int64_t offset = static_cast<int64_t>(shape.size()) - RankOf(x);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < RankOf(x); ++i) dims.push_back(offset + i);
  return BroadcastInDim(x, shape, dims);
}

Value Builder::Slice(Value x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
                     const std::vector<int64_t>& strides) {
  Shape shape;
  for (size_t i = 0; i < start.size(); ++i) {
    shape.push_back(std::max<int64_t>(0, (limit[i] - start[i] + strides[i] - 1) / strides[i]));
  }
  if (shape == ShapeOf(x)) return x;
  return Emit("stablehlo.slice", {x}, {Type::Tensor(ElementOf(x), shape)},
              {{"start_indices", I64Array(start)},
               {"limit_indices", I64Array(limit)},
               {"strides", I64Array(strides)}})
      ->result(0);
}

Value Builder::SliceDim(Value x, int64_t dim, int64_t begin, int64_t end, int64_t stride) {
  std::vector<int64_t> start(RankOf(x), 0), limit = ShapeOf(x), strides(RankOf(x), 1);
  start[dim] = begin;
  limit[dim] = end;
  strides[dim] = stride;
  return Slice(x, start, limit, strides);
}

Value Builder::Concat(const std::vector<Value>& xs, int64_t dim) {
  if (xs.size() == 1) return xs[0];
  Shape shape = ShapeOf(xs[0]);
  shape[dim] = 0;
  for (Value x : xs) shape[dim] += ShapeOf(x)[dim];
  return Emit("stablehlo.concatenate", xs, {Type::Tensor(ElementOf(xs[0]), shape)},
              {{"dimension", I64(dim)}})
      ->result(0);
}

Value Builder::Pad(Value x, Value pad_value, const std::vector<int64_t>& low,
                   const std::vector<int64_t>& high, const std::vector<int64_t>& interior) {
  Shape shape = ShapeOf(x);
  for (size_t i = 0; i < shape.size(); ++i) {
    shape[i] = low[i] + high[i] + shape[i] + std::max<int64_t>(0, shape[i] - 1) * interior[i];
  }
  return Emit("stablehlo.pad", {x, pad_value}, {Type::Tensor(ElementOf(x), shape)},
              {{"edge_padding_low", I64Array(low)},
               {"edge_padding_high", I64Array(high)},
               {"interior_padding", I64Array(interior)}})
      ->result(0);
}

Value Builder::Iota(const Shape& shape, int64_t dim, ElementType element) {
  return Emit("stablehlo.iota", {}, {Type::Tensor(element, shape)}, {{"iota_dimension", I64(dim)}})
      ->result(0);
}

Value Builder::DynamicSlice(Value x, const std::vector<Value>& starts, const Shape& sizes) {
  std::vector<Value> operands = {x};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return Emit("stablehlo.dynamic_slice", std::move(operands), {Type::Tensor(ElementOf(x), sizes)},
              {{"slice_sizes", I64Array(sizes)}})
      ->result(0);
}

Value Builder::DynamicUpdateSlice(Value x, Value update, const std::vector<Value>& starts) {
  std::vector<Value> operands = {x, update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return Emit("stablehlo.dynamic_update_slice", std::move(operands), {x.type()})->result(0);
}

Value Builder::Reverse(Value x, const std::vector<int64_t>& dims) {
  return Emit("stablehlo.reverse", {x}, {x.type()}, {{"dimensions", I64Array(dims)}})->result(0);
}

Value Builder::DotGeneral(Value a, Value b, const std::vector<int64_t>& a_batch,
                          const std::vector<int64_t>& b_batch,
                          const std::vector<int64_t>& a_contract,
                          const std::vector<int64_t>& b_contract, ElementType result) {
  Shape shape;
  for (int64_t d : a_batch) shape.push_back(ShapeOf(a)[d]);
  for (int64_t d = 0; d < RankOf(a); ++d) {
    if (std::count(a_batch.begin(), a_batch.end(), d) == 0 &&
        std::count(a_contract.begin(), a_contract.end(), d) == 0) {
      shape.push_back(ShapeOf(a)[d]);
    }
  }
  for (int64_t d = 0; d < RankOf(b); ++d) {
    if (std::count(b_batch.begin(), b_batch.end(), d) == 0 &&
        std::count(b_contract.begin(), b_contract.end(), d) == 0) {
      shape.push_back(ShapeOf(b)[d]);
    }
  }
  Attribute dnums =
      Attribute::Struct("stablehlo.dot", {{"lhs_batching_dimensions", IntList(a_batch)},
                                          {"rhs_batching_dimensions", IntList(b_batch)},
                                          {"lhs_contracting_dimensions", IntList(a_contract)},
                                          {"rhs_contracting_dimensions", IntList(b_contract)}});
  Attribute precision = Attribute::Array({Attribute::Enum("stablehlo.precision", "DEFAULT"),
                                          Attribute::Enum("stablehlo.precision", "DEFAULT")});
  return Emit("stablehlo.dot_general", {a, b}, {Type::Tensor(result, shape)},
              {{"dot_dimension_numbers", dnums}, {"precision_config", precision}})
      ->result(0);
}

void Builder::AddRegion(ir::Operation* op, const std::vector<Type>& args,
                        const std::function<std::vector<Value>(const std::vector<Value>&)>& build) {
  ir::Block& block = op->AddRegion().AddBlock();
  std::vector<Value> values;
  for (const Type& t : args) values.push_back(block.AddArgument(t));
  ir::Block* outer = block_;
  block_ = &block;
  std::vector<Value> results = build(values);
  Emit("stablehlo.return", std::move(results), {});
  block_ = outer;
}

void Builder::AddScalarBody(ir::Operation* op, ElementType element, std::string_view body) {
  const Type scalar = Type::Tensor(element, {});
  AddRegion(op, {scalar, scalar}, [&](const std::vector<Value>& a) {
    return std::vector<Value>{Binary(body, a[0], a[1])};
  });
}

Value Builder::Reduce(Value x, Value init, const std::vector<int64_t>& dims,
                      std::string_view body) {
  Shape shape;
  for (int64_t d = 0; d < RankOf(x); ++d) {
    if (std::count(dims.begin(), dims.end(), d) == 0) shape.push_back(ShapeOf(x)[d]);
  }
  ir::Operation* op = Emit("stablehlo.reduce", {x, init}, {Type::Tensor(ElementOf(x), shape)},
                           {{"dimensions", I64Array(dims)}});
  AddScalarBody(op, ElementOf(x), body);
  return op->result(0);
}

}  // namespace tpusim::frontend::onnx_import
