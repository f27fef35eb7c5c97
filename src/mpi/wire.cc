#include "mpi/wire.h"

#include <cstring>

namespace tpusim::mpi {
namespace {

enum class Kind : int64_t { kArray, kTuple, kToken };

Status Truncated() { return Internal("a message between tpusim processes is cut short"); }

void WriteTensor(const Tensor& t, std::string& out) {
  if (t.type().is_token()) {
    WriteInt(static_cast<int64_t>(Kind::kToken), out);
  } else if (t.type().is_tuple()) {
    WriteInt(static_cast<int64_t>(Kind::kTuple), out);
    WriteTensors(t.tuple_elements(), out);
  } else {
    WriteInt(static_cast<int64_t>(Kind::kArray), out);
    WriteInt(static_cast<int64_t>(t.element()), out);
    WriteInt(t.rank(), out);
    for (int64_t d : t.shape()) WriteInt(d, out);
    out.append(reinterpret_cast<const char*>(t.raw()), static_cast<size_t>(t.size_bytes()));
  }
}

StatusOr<Tensor> ReadTensor(std::string_view& in) {
  TPUSIM_ASSIGN_OR_RETURN(int64_t kind, ReadInt(in));
  switch (static_cast<Kind>(kind)) {
    case Kind::kToken:
      return Tensor::Token();
    case Kind::kTuple: {
      TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> elements, ReadTensors(in));
      return Tensor::Tuple(std::move(elements));
    }
    case Kind::kArray:
      break;
    default:
      return Internal("a message between tpusim processes holds an unknown value kind");
  }
  TPUSIM_ASSIGN_OR_RETURN(int64_t element, ReadInt(in));
  TPUSIM_ASSIGN_OR_RETURN(int64_t rank, ReadInt(in));
  if (element < 0 || element >= ir::kNumElementTypes || rank < 0 || rank > 64) return Truncated();
  ir::Shape shape;
  for (int64_t i = 0; i < rank; ++i) {
    TPUSIM_ASSIGN_OR_RETURN(int64_t d, ReadInt(in));
    if (d < 0) return Truncated();
    shape.push_back(d);
  }
  TPUSIM_ASSIGN_OR_RETURN(
      Tensor t, Tensor::Allocate(ir::Type::Tensor(static_cast<ir::ElementType>(element), shape)));
  const size_t bytes = static_cast<size_t>(t.size_bytes());
  if (in.size() < bytes) return Truncated();
  if (bytes) std::memcpy(t.mutable_raw(), in.data(), bytes);
  in.remove_prefix(bytes);
  return t;
}

}  // namespace

void WriteInt(int64_t v, std::string& out) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

void WriteString(std::string_view s, std::string& out) {
  WriteInt(static_cast<int64_t>(s.size()), out);
  out.append(s);
}

void WriteTensors(const std::vector<Tensor>& values, std::string& out) {
  WriteInt(static_cast<int64_t>(values.size()), out);
  for (const Tensor& t : values) WriteTensor(t, out);
}

StatusOr<int64_t> ReadInt(std::string_view& in) {
  int64_t v;
  if (in.size() < sizeof(v)) return Truncated();
  std::memcpy(&v, in.data(), sizeof(v));
  in.remove_prefix(sizeof(v));
  return v;
}

StatusOr<std::string> ReadString(std::string_view& in) {
  TPUSIM_ASSIGN_OR_RETURN(int64_t n, ReadInt(in));
  if (n < 0 || static_cast<uint64_t>(n) > in.size()) return Truncated();
  std::string s(in.substr(0, static_cast<size_t>(n)));
  in.remove_prefix(static_cast<size_t>(n));
  return s;
}

StatusOr<std::vector<Tensor>> ReadTensors(std::string_view& in) {
  TPUSIM_ASSIGN_OR_RETURN(int64_t n, ReadInt(in));
  if (n < 0 || static_cast<uint64_t>(n) > in.size()) return Truncated();
  std::vector<Tensor> values;
  for (int64_t i = 0; i < n; ++i) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor t, ReadTensor(in));
    values.push_back(std::move(t));
  }
  return values;
}

}  // namespace tpusim::mpi
