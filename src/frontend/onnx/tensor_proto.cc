#include "frontend/onnx/tensor_proto.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "tpusim/numerics/float_formats.h"

namespace tpusim::frontend::onnx_import {

using ir::ElementType;
using P = onnx::TensorProto;

StatusOr<ElementType> ElementOfOnnx(int32_t t) {
  switch (t) {
    case P::FLOAT:
      return ElementType::kF32;
    case P::UINT8:
      return ElementType::kUI8;
    case P::INT8:
      return ElementType::kSI8;
    case P::UINT16:
      return ElementType::kUI16;
    case P::INT16:
      return ElementType::kSI16;
    case P::INT32:
      return ElementType::kSI32;
    case P::INT64:
      return ElementType::kSI64;
    case P::BOOL:
      return ElementType::kI1;
    case P::FLOAT16:
      return ElementType::kF16;
    case P::DOUBLE:
      return ElementType::kF64;
    case P::UINT32:
      return ElementType::kUI32;
    case P::UINT64:
      return ElementType::kUI64;
    case P::COMPLEX64:
      return ElementType::kC64;
    case P::COMPLEX128:
      return ElementType::kC128;
    case P::BFLOAT16:
      return ElementType::kBF16;
    case P::STRING:
      return Unimplemented("string tensors are not supported");
    default:
      return Unimplemented("ONNX element type " + std::to_string(t) + " is not supported");
  }
}

namespace {

std::string NameOf(const P& proto) {
  return proto.name().empty() ? std::string("a tensor") : "tensor '" + proto.name() + "'";
}

// Copies the typed elements through `put` (element index, destination).
// REQUIRES: the field holds them all (TensorOfProto checks).
void CopyTyped(Tensor& t, const std::function<void(int64_t, uint8_t*)>& put) {
  const int64_t bytes = ir::StorageBytes(t.element());
  for (int64_t i = 0; i < t.num_elements(); ++i) put(i, t.mutable_raw() + i * bytes);
}

void CopyFields(const P& proto, Tensor& t) {
  const ElementType e = t.element();
  switch (proto.data_type()) {
    case P::FLOAT:
      CopyTyped(t,
                [&](int64_t i, uint8_t* p) { std::memcpy(p, proto.float_data().data() + i, 4); });
      return;
    case P::COMPLEX64:
      CopyTyped(
          t, [&](int64_t i, uint8_t* p) { std::memcpy(p, proto.float_data().data() + 2 * i, 8); });
      return;
    case P::DOUBLE:
      CopyTyped(t,
                [&](int64_t i, uint8_t* p) { std::memcpy(p, proto.double_data().data() + i, 8); });
      return;
    case P::COMPLEX128:
      CopyTyped(t, [&](int64_t i, uint8_t* p) {
        std::memcpy(p, proto.double_data().data() + 2 * i, 16);
      });
      return;
    case P::INT64:
      CopyTyped(t, [&](int64_t i, uint8_t* p) {
        numerics::StoreInt64(e, proto.int64_data(static_cast<int>(i)), p);
      });
      return;
    case P::UINT32:
    case P::UINT64:
      CopyTyped(t, [&](int64_t i, uint8_t* p) {
        const uint64_t v = proto.uint64_data(static_cast<int>(i));
        std::memcpy(p, &v, ir::StorageBytes(e));
      });
      return;
    case P::FLOAT16:
    case P::BFLOAT16:
      // The bits of each element, in int32_data.
      CopyTyped(t, [&](int64_t i, uint8_t* p) {
        const uint16_t bits = static_cast<uint16_t>(proto.int32_data(static_cast<int>(i)));
        std::memcpy(p, &bits, 2);
      });
      return;
    default:  // the narrower integers and bool, in int32_data
      CopyTyped(t, [&](int64_t i, uint8_t* p) {
        numerics::StoreInt64(e, proto.int32_data(static_cast<int>(i)), p);
      });
      return;
  }
}

// How many values the typed field of `proto`'s type holds.
int64_t StoredValues(const P& proto) {
  switch (proto.data_type()) {
    case P::FLOAT:
    case P::COMPLEX64:
      return proto.float_data_size();
    case P::DOUBLE:
    case P::COMPLEX128:
      return proto.double_data_size();
    case P::INT64:
      return proto.int64_data_size();
    case P::UINT32:
    case P::UINT64:
      return proto.uint64_data_size();
    default:
      return proto.int32_data_size();
  }
}

}  // namespace

StatusOr<Tensor> TensorOfProto(const P& proto) {
  TPUSIM_ASSIGN_OR_RETURN(ElementType e, ElementOfOnnx(proto.data_type()));
  ir::Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument(NameOf(proto) + " has a negative dimension");
  }
  TPUSIM_ASSIGN_OR_RETURN(int64_t bytes, CheckedByteSize(shape, ir::StorageBytes(e)));
  if (proto.data_location() == P::EXTERNAL) {
    return InvalidArgument(NameOf(proto) + "'s external data was not read");
  }
  // The stored size first, so that a claim of a huge tensor allocates nothing.
  if (proto.has_raw_data() && static_cast<int64_t>(proto.raw_data().size()) != bytes) {
    return InvalidArgument(NameOf(proto) + " holds " + std::to_string(proto.raw_data().size()) +
                           " bytes where its dimensions need " + std::to_string(bytes));
  }
  const int64_t values = ir::NumElements(shape) * (ir::IsComplex(e) ? 2 : 1);
  if (!proto.has_raw_data() && StoredValues(proto) != values) {
    return InvalidArgument(NameOf(proto) + " holds " + std::to_string(StoredValues(proto)) +
                           " values where its dimensions need " + std::to_string(values));
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(ir::Type::Tensor(e, shape)));
  if (proto.has_raw_data()) {
    if (t.size_bytes() > 0) std::memcpy(t.mutable_raw(), proto.raw_data().data(), t.size_bytes());
    if (e == ElementType::kI1) {
      for (int64_t i = 0; i < t.size_bytes(); ++i) t.mutable_raw()[i] = t.raw()[i] != 0;
    }
    return t;
  }
  CopyFields(proto, t);
  return t;
}

namespace {

Status LoadTensor(P& proto, const std::filesystem::path& dir) {
  if (proto.data_location() != P::EXTERNAL) return Status::Ok();
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : proto.external_data()) {
    try {
      if (entry.key() == "location") location = entry.value();
      if (entry.key() == "offset") offset = std::stoll(entry.value());
      if (entry.key() == "length") length = std::stoll(entry.value());
    } catch (const std::exception&) {
      return InvalidArgument(NameOf(proto) + ": external data " + entry.key() + " '" +
                             entry.value() + "' is not a number");
    }
  }
  const std::filesystem::path file = (dir / location).lexically_normal();
  const auto rel = file.lexically_relative(dir.lexically_normal());
  if (location.empty() || rel.empty() || *rel.begin() == "..") {
    return InvalidArgument(NameOf(proto) + ": external data location '" + location +
                           "' is not a file in the model's folder");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return NotFound(NameOf(proto) + ": cannot open external data " + file.string());
  in.seekg(0, std::ios::end);
  const int64_t size = in.tellg();
  if (length < 0) length = size - offset;
  if (offset < 0 || length < 0 || offset + length > size) {
    return InvalidArgument(NameOf(proto) + ": external data " + file.string() + " holds " +
                           std::to_string(size) + " bytes, short of offset " +
                           std::to_string(offset) + " + length " + std::to_string(length));
  }
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  if (!in) return InvalidArgument(NameOf(proto) + ": cannot read " + file.string());
  proto.set_raw_data(std::move(bytes));
  proto.clear_external_data();
  proto.set_data_location(P::DEFAULT);
  return Status::Ok();
}

Status LoadGraph(onnx::GraphProto& graph, const std::filesystem::path& dir) {
  for (P& t : *graph.mutable_initializer()) TPUSIM_RETURN_IF_ERROR(LoadTensor(t, dir));
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
      if (a.has_t()) TPUSIM_RETURN_IF_ERROR(LoadTensor(*a.mutable_t(), dir));
      if (a.has_g()) TPUSIM_RETURN_IF_ERROR(LoadGraph(*a.mutable_g(), dir));
      for (onnx::GraphProto& g : *a.mutable_graphs()) TPUSIM_RETURN_IF_ERROR(LoadGraph(g, dir));
    }
  }
  return Status::Ok();
}

}  // namespace

Status LoadExternalData(onnx::ModelProto& model, const std::string& dir) {
  return LoadGraph(*model.mutable_graph(), dir.empty() ? "." : dir);
}

}  // namespace tpusim::frontend::onnx_import
