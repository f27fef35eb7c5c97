// Types of SSA values: ranked static tensors, tuples and tokens.
//
// Types are small immutable values; copying one is cheap (tuple element lists
// are shared). Shapes are static but where ir/dynamic.h says otherwise.
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
  // Same shape and layout, another element type.
  Type WithElement(ElementType e) const;

  // The physical order of the dimensions in memory, as XLA's minor_to_major:
  // layout()[0] is the dimension that varies fastest. Empty means the
  // default row-major order (rank-1, ..., 1, 0); a default order is always
  // stored empty. Layout is physical, so operator== ignores it; SameLayout
  // compares it. Only the compiler's layout assignment and front ends that
  // read layouts (XLA HLO) set one.
  const std::vector<int64_t>& layout() const { return layout_; }
  // The layout spelled out (never empty for rank >= 1). REQUIRES: is_tensor().
  std::vector<int64_t> MinorToMajor() const;
  // This type with `minor_to_major`. REQUIRES: IsValidLayout(it, rank()).
  Type WithLayout(std::vector<int64_t> minor_to_major) const;
  Type WithDefaultLayout() const { return Tensor(element_, shape_); }

  // Tuple accessor. REQUIRES: is_tuple().
  const std::vector<Type>& tuple_elements() const;

  // MLIR spelling: "tensor<2x3xf32>", "tuple<tensor<f32>, !stablehlo.token>",
  // "!stablehlo.token"; a non-default layout as an encoding:
  // "tensor<2x3xf32, #tpusim.layout<{0,1}>>".
  std::string ToString() const;

  friend bool operator==(const Type& a, const Type& b);
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }

 private:
  Kind kind_ = Kind::kTensor;
  ElementType element_ = ElementType::kF32;
  Shape shape_;
  std::vector<int64_t> layout_;  // minor_to_major; empty = row-major
  std::shared_ptr<const std::vector<Type>> tuple_;
};

// Whether `minor_to_major` is a permutation of [0, rank).
bool IsValidLayout(const std::vector<int64_t>& minor_to_major, int64_t rank);

// Same layouts (tensors), element by element for tuples; true for tokens.
// Does not compare shapes.
bool SameLayout(const Type& a, const Type& b);

// The layout of transpose(t, permutation) whose bytes are t's as they lie,
// making the transpose a bitcast: result dimension d is t's dimension
// permutation[d]. REQUIRES: permutation is a permutation of [0, t.rank()).
std::vector<int64_t> TransposedLayout(const Type& t, const std::vector<int64_t>& permutation);

// "{1,0}": XLA's spelling of a minor_to_major list.
std::string LayoutString(const std::vector<int64_t>& minor_to_major);

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
