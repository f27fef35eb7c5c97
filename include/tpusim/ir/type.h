// Types of SSA values: ranked static tensors, tuples and tokens.
//
// Types are small immutable values; copying one is cheap (tuple element lists
// are shared). Shapes are static: the front end rejects dynamic dimensions.
#ifndef TPUSIM_IR_TYPE_H_
#define TPUSIM_IR_TYPE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tpusim/ir/element_type.h"

namespace tpusim::ir {

using Shape = std::vector<int64_t>;

// Product of the dimensions (1 for a scalar). REQUIRES: no negative dims.
int64_t NumElements(const Shape& shape);

class Type {
 public:
  enum class Kind : uint8_t { kTensor, kTuple, kToken };

  Type() = default;  // f32 scalar tensor
  static Type Tensor(ElementType element, Shape shape);
  static Type Tuple(std::vector<Type> elements);
  static Type Token();

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_token() const { return kind_ == Kind::kToken; }

  // Tensor accessors. REQUIRES: is_tensor().
  ElementType element() const { return element_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t num_elements() const { return NumElements(shape_); }
  // Same shape, another element type.
  Type WithElement(ElementType e) const { return Tensor(e, shape_); }

  // Tuple accessor. REQUIRES: is_tuple().
  const std::vector<Type>& tuple_elements() const;

  // MLIR spelling: "tensor<2x3xf32>", "tuple<tensor<f32>, !stablehlo.token>",
  // "!stablehlo.token".
  std::string ToString() const;

  friend bool operator==(const Type& a, const Type& b);
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }

 private:
  Kind kind_ = Kind::kTensor;
  ElementType element_ = ElementType::kF32;
  Shape shape_;
  std::shared_ptr<const std::vector<Type>> tuple_;
};

// "(tensor<2xf32>, tensor<i1>)", for messages.
std::string TypeListString(const std::vector<Type>& types);

// (inputs) -> results, as in func.func signatures.
struct FunctionType {
  std::vector<Type> inputs;
  std::vector<Type> results;
  std::string ToString() const;
};

}  // namespace tpusim::ir

#endif  // TPUSIM_IR_TYPE_H_
