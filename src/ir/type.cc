#include "tpusim/ir/type.h"

namespace tpusim::ir {

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Type Type::Tensor(ElementType element, Shape shape) {
  Type t;
  t.kind_ = Kind::kTensor;
  t.element_ = element;
  t.shape_ = std::move(shape);
  return t;
}

Type Type::Tuple(std::vector<Type> elements) {
  Type t;
  t.kind_ = Kind::kTuple;
  t.tuple_ = std::make_shared<const std::vector<Type>>(std::move(elements));
  return t;
}

Type Type::Token() {
  Type t;
  t.kind_ = Kind::kToken;
  return t;
}

const std::vector<Type>& Type::tuple_elements() const {
  static const std::vector<Type> kEmpty;
  return tuple_ ? *tuple_ : kEmpty;
}

std::string Type::ToString() const {
  switch (kind_) {
    case Kind::kToken:
      return "!stablehlo.token";
    case Kind::kTuple: {
      std::string s = "tuple<";
      const auto& elems = tuple_elements();
      for (size_t i = 0; i < elems.size(); ++i) {
        if (i) s += ", ";
        s += elems[i].ToString();
      }
      return s + ">";
    }
    case Kind::kTensor: {
      std::string s = "tensor<";
      for (int64_t d : shape_) s += std::to_string(d) + "x";
      s += ElementTypeName(element_);
      return s + ">";
    }
  }
  return "?";
}

bool operator==(const Type& a, const Type& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Type::Kind::kToken: return true;
    case Type::Kind::kTuple: return a.tuple_elements() == b.tuple_elements();
    case Type::Kind::kTensor:
      return a.element_ == b.element_ && a.shape_ == b.shape_;
  }
  return false;
}

std::string TypeListString(const std::vector<Type>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) s += ", ";
    s += types[i].ToString();
  }
  return s + ")";
}

std::string FunctionType::ToString() const {
  std::string s = "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) s += ", ";
    s += inputs[i].ToString();
  }
  s += ") -> ";
  if (results.size() == 1 && !results[0].is_tuple()) return s + results[0].ToString();
  s += "(";
  for (size_t i = 0; i < results.size(); ++i) {
    if (i) s += ", ";
    s += results[i].ToString();
  }
  return s + ")";
}

}  // namespace tpusim::ir
