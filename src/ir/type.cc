#include "tpusim/ir/type.h"

#include "tpusim/ir/dynamic.h"

namespace tpusim::ir {

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool IsStaticShape(const Shape& shape) {
  for (int64_t d : shape) {
    if (d == kDynamicDim) return false;
  }
  return true;
}

bool IsStatic(const Type& type) {
  if (type.is_tensor()) return IsStaticShape(type.shape());
  if (!type.is_tuple()) return true;
  for (const Type& t : type.tuple_elements()) {
    if (!IsStatic(t)) return false;
  }
  return true;
}

Type Type::Tensor(ElementType element, Shape shape) {
  Type t;
  t.kind_ = Kind::kTensor;
  t.element_ = element;
  t.shape_ = std::move(shape);
  return t;
}

Type Type::WithElement(ElementType e) const {
  Type t = *this;
  t.element_ = e;
  return t;
}

std::vector<int64_t> Type::MinorToMajor() const {
  if (!layout_.empty()) return layout_;
  std::vector<int64_t> order(shape_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(order.size() - 1 - i);
  return order;
}

Type Type::WithLayout(std::vector<int64_t> minor_to_major) const {
  Type t = *this;
  t.layout_ = std::move(minor_to_major);
  bool row_major = true;
  for (size_t i = 0; i < t.layout_.size(); ++i) {
    row_major &= t.layout_[i] == static_cast<int64_t>(t.layout_.size() - 1 - i);
  }
  if (row_major) t.layout_.clear();
  return t;
}

bool IsValidLayout(const std::vector<int64_t>& minor_to_major, int64_t rank) {
  if (static_cast<int64_t>(minor_to_major.size()) != rank) return false;
  std::vector<bool> seen(minor_to_major.size());
  for (int64_t d : minor_to_major) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

bool SameLayout(const Type& a, const Type& b) {
  if (a.is_tuple() && b.is_tuple()) {
    const auto& x = a.tuple_elements();
    const auto& y = b.tuple_elements();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!SameLayout(x[i], y[i])) return false;
    }
    return true;
  }
  return a.layout() == b.layout();
}

std::vector<int64_t> TransposedLayout(const Type& t, const std::vector<int64_t>& permutation) {
  std::vector<int64_t> result_dim_of(permutation.size());
  for (size_t d = 0; d < permutation.size(); ++d) {
    result_dim_of[permutation[d]] = static_cast<int64_t>(d);
  }
  std::vector<int64_t> minor_to_major;
  for (int64_t operand_dim : t.MinorToMajor()) minor_to_major.push_back(result_dim_of[operand_dim]);
  return minor_to_major;
}

std::string LayoutString(const std::vector<int64_t>& minor_to_major) {
  std::string s = "{";
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(minor_to_major[i]);
  }
  return s + "}";
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
      for (int64_t d : shape_) s += (d == kDynamicDim ? "?" : std::to_string(d)) + "x";
      s += ElementTypeName(element_);
      if (!layout_.empty()) s += ", #tpusim.layout<" + LayoutString(layout_) + ">";
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
