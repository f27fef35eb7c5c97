// Lowers one ONNX graph, node by node, into a block: the values by name,
// what is known of them at import, and the folding of shape computations.
// Internal to src/frontend/onnx.
#ifndef TPUSIM_FRONTEND_ONNX_GRAPH_H_
#define TPUSIM_FRONTEND_ONNX_GRAPH_H_

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx/builder.h"
#include "tpusim/frontend/onnx/importer.h"

namespace tpusim::frontend::onnx_import {

// Results larger than this are computed at run time even when their inputs
// are known: folding is for shapes and indices, not for the model's math.
inline constexpr int64_t kMaxFoldedElements = 1 << 16;

// A value of the graph as lowered: a tensor (its IR value and, when
// computable at import, its elements), or a sequence of tensors, or an
// absent optional. Sequences and optionals never exist as one IR value: a
// sequence's length and an optional's presence are known at import, and
// a present optional is its element itself.
struct Lowered {
  Value value;
  std::optional<Tensor> known;
  std::string input_name;                        // a graph input's name: its value may be asked for
  std::optional<std::vector<Lowered>> sequence;  // a sequence: its elements (`value` unused)
  bool is_none = false;                          // an absent optional (`value` unused)

  bool is_tensor() const { return !sequence && !is_none; }
  // "a sequence", "an absent optional", "a tensor": what errors call it.
  std::string KindName() const;
};

// What every graph of one model shares.
struct ModelContext {
  std::string path;
  std::shared_ptr<const std::string> file;  // locations' file
  int opset = 0;                            // the ai.onnx opset imported
  const OnnxImportOptions* options = nullptr;
};

class Graph {
 public:
  // `parent`: the graph whose node owns this one (a subgraph captures its
  // values), or null for the main graph.
  Graph(ModelContext& model, ir::Block* block, Graph* parent)
      : model_(model), b_(block), parent_(parent) {}

  ModelContext& model() { return model_; }
  Builder& b() { return b_; }

  // Binds `name` (a graph input or initializer) to `v`.
  void Bind(const std::string& name, Lowered v) { values_[name] = std::move(v); }
  // The tensor `name`, here or in an enclosing graph; null if undefined.
  Lowered* Find(const std::string& name);

  // Lowers the graph's initializers and nodes, in order.
  Status LowerNodes(const onnx::GraphProto& graph);
  // The graph's outputs, after LowerNodes.
  StatusOr<std::vector<Lowered>> Outputs(const onnx::GraphProto& graph);

  // The location of the node at `index`.
  ir::Location LocationOf(int index) const;
  // "path:N:1: node 'name' (Op): " for errors about a node.
  std::string Where(const onnx::NodeProto& node, int index) const;

 private:
  Status LowerNode(const onnx::NodeProto& node, int index);
  // Computes the results of the ops emitted for a node from `first` on,
  // when every input is known and every output small.
  void Fold(const onnx::NodeProto& node, size_t first);

  ModelContext& model_;
  Builder b_;
  Graph* parent_;
  std::map<std::string, Lowered> values_;
};

}  // namespace tpusim::frontend::onnx_import

#endif  // TPUSIM_FRONTEND_ONNX_GRAPH_H_
