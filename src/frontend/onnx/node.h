// What an ONNX op's lowering sees: its node (inputs, attributes, outputs)
// and a Builder; and the table of lowerings, one OnnxOpDef per op type,
// each defined once in the ops/ file of its family. Internal to
// src/frontend/onnx.
#ifndef TPUSIM_FRONTEND_ONNX_NODE_H_
#define TPUSIM_FRONTEND_ONNX_NODE_H_

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/onnx/builder.h"
#include "frontend/onnx/graph.h"
#include "tpusim/base/status.h"

namespace tpusim::frontend::onnx_import {

class Node {
 public:
  Node(Graph& graph, const onnx::NodeProto& proto, int index);

  const onnx::NodeProto& proto() const { return proto_; }
  const std::string& op_type() const { return proto_.op_type(); }
  // The ai.onnx opset the model imports: lowerings branch on it where the
  // op changed (Squeeze's axes became an input in 13, ...).
  int opset() const;
  Builder& b();

  // Inputs: an absent optional input is missing or named "".
  int num_inputs() const { return proto_.input_size(); }
  bool has_input(int i) const { return i < num_inputs() && !proto_.input(i).empty(); }
  // REQUIRES: has_input(i) (the graph checks that inputs are defined).
  Value input(int i) const;
  // The value of input i, needed while lowering because a result's shape
  // depends on it: computed at import from initializers, constants and
  // shapes, or read from the run's input (the program is then specialized
  // to it). `what` names it in the error when it is not known.
  StatusOr<Tensor> Known(int i, std::string_view what) const;
  // Known(i) as integers (any integer type).
  StatusOr<std::vector<int64_t>> KnownInts(int i, std::string_view what) const;
  // Known(i) as doubles (any real type).
  StatusOr<std::vector<double>> KnownDoubles(int i, std::string_view what) const;
  // Whether input i's value is known without asking for the run's inputs.
  bool IsKnown(int i) const;
  // Input i as lowered: a tensor, a sequence or an absent optional. Only ops
  // registered with `takes_sequences` see the latter two (the graph refuses
  // them as inputs of other ops). REQUIRES: has_input(i).
  const Lowered& lowered(int i) const;
  // The elements of input i, a sequence; kInvalidArgument naming `what`
  // when it is not one.
  StatusOr<std::vector<Lowered>> InputSequence(int i, std::string_view what) const;

  // Attributes, with ONNX's defaults when absent. The checker has checked
  // their types against the op's schema.
  bool has_attr(std::string_view name) const { return Attr(name) != nullptr; }
  const onnx::AttributeProto* Attr(std::string_view name) const;
  int64_t Int(std::string_view name, int64_t fallback) const;
  float Float(std::string_view name, float fallback) const;
  std::string String(std::string_view name, std::string_view fallback) const;
  std::vector<int64_t> Ints(std::string_view name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> Floats(std::string_view name, std::vector<float> fallback = {}) const;
  // A tensor attribute's value (Constant's `value`, ConstantOfShape's).
  StatusOr<Tensor> TensorAttr(std::string_view name) const;
  // A graph attribute (If's branches, Loop's and Scan's body); null if absent.
  const onnx::GraphProto* GraphAttr(std::string_view name) const;

  // Outputs: an unwanted optional output is missing or named "".
  int num_outputs() const { return proto_.output_size(); }
  bool wants_output(int i) const { return i < num_outputs() && !proto_.output(i).empty(); }
  void SetOutput(int i, Value v);
  // The value of output i when the lowering computes it itself (a shape).
  void SetKnownOutput(int i, const Tensor& t);
  // Output i as `v` (a tensor with what is known of it, a sequence, none).
  void SetOutputLowered(int i, Lowered v);
  void SetOutputSequence(int i, std::vector<Lowered> elements);
  void SetOutputNone(int i);  // an absent optional

  // kUnimplemented: "node 'name' (Op): <what> is not supported", located by
  // the graph.
  Status Unsupported(std::string_view what) const;
  // kInvalidArgument: the node breaks the op's rules in a way the checker
  // does not see (shapes that do not broadcast, an axis out of range).
  Status Invalid(std::string_view what) const;
  // An axis attribute or input in [-rank, rank): as a dimension number.
  StatusOr<int64_t> Axis(int64_t axis, int64_t rank) const;
  // Lowers `graph` (a subgraph attribute) into `region`'s block, whose
  // arguments are bound to the subgraph's inputs; values of enclosing graphs
  // are captured. Returns the subgraph's outputs (not yet returned).
  // Tensors only: a subgraph output that is a sequence or optional is
  // refused.
  StatusOr<std::vector<Value>> LowerSubgraph(const onnx::GraphProto& graph,
                                             const std::vector<Value>& args, ir::Block* block);
  // The same with arguments and outputs as lowered: sequences, absent
  // optionals, and what is known of tensors at import (a Loop unrolled).
  StatusOr<std::vector<Lowered>> LowerSubgraphLowered(const onnx::GraphProto& graph,
                                                      const std::vector<Lowered>& args,
                                                      ir::Block* block);
  Graph& graph() { return graph_; }

 private:
  Graph& graph_;
  const onnx::NodeProto& proto_;
  int index_;
};

using LowerFn = std::function<Status(Node& node)>;

struct OnnxOpDef {
  std::string op_type;  // "Conv"
  LowerFn lower;
  std::string domain;  // "" for ai.onnx
  // Whether its inputs may be sequences and absent optionals (Node::lowered).
  bool takes_sequences = false;
};

class OnnxOpRegistry {
 public:
  static bool Register(OnnxOpDef def);  // duplicates abort at start-up
  static const OnnxOpDef* Lookup(std::string_view domain, std::string_view op_type);
};

#define TPUSIM_ONNX_CONCAT_INNER(a, b) a##b
#define TPUSIM_ONNX_CONCAT(a, b) TPUSIM_ONNX_CONCAT_INNER(a, b)
// Registers an OnnxOpDef at start-up: TPUSIM_REGISTER_ONNX_OP({"Relu", Relu});
#define TPUSIM_REGISTER_ONNX_OP(...)                                          \
  [[maybe_unused]] static const bool TPUSIM_ONNX_CONCAT(onnx_op_, __LINE__) = \
      ::tpusim::frontend::onnx_import::OnnxOpRegistry::Register(__VA_ARGS__)

}  // namespace tpusim::frontend::onnx_import

#endif  // TPUSIM_FRONTEND_ONNX_NODE_H_
