// Emits StableHLO ops with their result types into a block: what the ONNX
// lowerings (ops/*.cc) build programs from. Each method states the op it
// emits; shapes are static. Internal to src/frontend/onnx.
#ifndef TPUSIM_FRONTEND_ONNX_BUILDER_H_
#define TPUSIM_FRONTEND_ONNX_BUILDER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::frontend::onnx_import {

using ir::ElementType;
using ir::Shape;
using ir::Value;

// A dense attribute holding `t`'s elements.
ir::Attribute DenseOf(const Tensor& t);
ir::Attribute I64Array(const std::vector<int64_t>& v);
// [a, b, ...] as an array of integer attributes: the dimension lists of
// dot, gather and scatter numbers.
ir::Attribute IntList(const std::vector<int64_t>& v);
// from, from + 1, ..., to - 1: a run of dimension numbers.
std::vector<int64_t> IndexRange(int64_t from, int64_t to);

class Builder {
 public:
  explicit Builder(ir::Block* block) : block_(block) {}

  ir::Block* block() const { return block_; }
  void set_block(ir::Block* block) { block_ = block; }
  void set_location(ir::Location loc) { loc_ = std::move(loc); }
  const ir::Location& location() const { return loc_; }

  ir::Operation* Emit(std::string_view name, std::vector<Value> operands,
                      std::vector<ir::Type> results, std::vector<ir::NamedAttribute> attrs = {});

  // stablehlo.constant
  Value Constant(const Tensor& t);
  Value Scalar(ElementType element, double v);  // a rank-0 constant
  Value Splat(ElementType element, double v, const Shape& shape);
  Value I64s(const std::vector<int64_t>& v);  // a 1-D si64 constant
  // A scalar constant of `like`'s element type.
  Value ScalarLike(Value like, double v) { return Scalar(ElementOf(like), v); }
  Value FullLike(Value like, double v) { return Splat(ElementOf(like), v, ShapeOf(like)); }

  // Elementwise: stablehlo.<name> (or a qualified "chlo.erf") on operands of
  // one shape.
  Value Unary(std::string_view name, Value x);
  Value Binary(std::string_view name, Value a, Value b);
  Value Add(Value a, Value b) { return Binary("add", a, b); }
  Value Sub(Value a, Value b) { return Binary("subtract", a, b); }
  Value Mul(Value a, Value b) { return Binary("multiply", a, b); }
  Value Div(Value a, Value b) { return Binary("divide", a, b); }
  Value Max(Value a, Value b) { return Binary("maximum", a, b); }
  Value Min(Value a, Value b) { return Binary("minimum", a, b); }
  // a (name) b with numpy broadcasting (ONNX's multidirectional rule).
  // REQUIRES: the shapes broadcast (BroadcastShapes).
  Value BinaryBroadcast(std::string_view name, Value a, Value b);
  // stablehlo.compare; `direction` EQ, NE, LT, LE, GT, GE. Broadcasts.
  Value Compare(std::string_view direction, Value a, Value b);
  // stablehlo.select; broadcasts its three operands.
  Value Select(Value pred, Value on_true, Value on_false);
  Value Convert(Value x, ElementType element);  // a no-op when equal
  Value Clamp(Value lo, Value x, Value hi);     // lo, hi scalars or of x's shape

  // Shapes.
  Value Reshape(Value x, const Shape& shape);
  Value Transpose(Value x, const std::vector<int64_t>& perm);
  // stablehlo.broadcast_in_dim: x's dimension i becomes dims[i] of `shape`.
  Value BroadcastInDim(Value x, const Shape& shape, const std::vector<int64_t>& dims);
  // x broadcast to `shape` by numpy's rule (trailing dimensions aligned).
  Value BroadcastTo(Value x, const Shape& shape);
  Value Slice(Value x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
              const std::vector<int64_t>& strides);
  // Rows [begin, end) of dimension `dim`.
  Value SliceDim(Value x, int64_t dim, int64_t begin, int64_t end, int64_t stride = 1);
  Value Concat(const std::vector<Value>& xs, int64_t dim);
  Value Pad(Value x, Value pad_value, const std::vector<int64_t>& low,
            const std::vector<int64_t>& high, const std::vector<int64_t>& interior);
  Value Iota(const Shape& shape, int64_t dim, ElementType element);
  // stablehlo.dynamic_slice / dynamic_update_slice at `starts`, one integer
  // scalar per dimension.
  Value DynamicSlice(Value x, const std::vector<Value>& starts, const Shape& sizes);
  Value DynamicUpdateSlice(Value x, Value update, const std::vector<Value>& starts);
  Value Reverse(Value x, const std::vector<int64_t>& dims);

  // stablehlo.dot_general, with DEFAULT precision (the TPU's bf16 passes
  // under TPU numerics, as XLA compiles a PyTorch matmul).
  Value DotGeneral(Value a, Value b, const std::vector<int64_t>& a_batch,
                   const std::vector<int64_t>& b_batch, const std::vector<int64_t>& a_contract,
                   const std::vector<int64_t>& b_contract, ElementType result);

  // stablehlo.reduce of x over `dims` from `init` (a scalar), the body
  // stablehlo.<body> (add, maximum, ...) of two scalars.
  Value Reduce(Value x, Value init, const std::vector<int64_t>& dims, std::string_view body);
  // The body of a reduction-like op: two scalars of `element` combined by
  // stablehlo.<body>, in a new region of `op`.
  void AddScalarBody(ir::Operation* op, ElementType element, std::string_view body);
  // A region of `op` whose entry block takes `args` and returns what
  // `build` returns, emitted by this builder.
  void AddRegion(ir::Operation* op, const std::vector<ir::Type>& args,
                 const std::function<std::vector<Value>(const std::vector<Value>&)>& build);

  static ElementType ElementOf(Value v) { return v.type().element(); }
  static const Shape& ShapeOf(Value v) { return v.type().shape(); }
  static int64_t RankOf(Value v) { return v.type().rank(); }

 private:
  ir::Block* block_;
  ir::Location loc_;
};

// numpy's broadcast of two shapes; false when they do not broadcast.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out);

}  // namespace tpusim::frontend::onnx_import

#endif  // TPUSIM_FRONTEND_ONNX_BUILDER_H_
