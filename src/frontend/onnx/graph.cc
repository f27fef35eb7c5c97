#include "frontend/onnx/graph.h"

#include <unordered_map>

#include "frontend/onnx/fold.h"
#include "frontend/onnx/node.h"
#include "frontend/onnx/tensor_proto.h"

namespace tpusim::frontend::onnx_import {
namespace {

std::string NodeLabel(const onnx::NodeProto& node) {
  std::string op = node.domain().empty() || node.domain() == "ai.onnx"
                       ? node.op_type()
                       : node.domain() + "." + node.op_type();
  return "node '" + node.name() + "' (" + op + ")";
}

}  // namespace

std::string Lowered::KindName() const {
  if (sequence) return "a sequence";
  return is_none ? "an absent optional" : "a tensor";
}

Lowered* Graph::Find(const std::string& name) {
  for (Graph* g = this; g != nullptr; g = g->parent_) {
    auto it = g->values_.find(name);
    if (it != g->values_.end()) return &it->second;
  }
  return nullptr;
}

ir::Location Graph::LocationOf(int index) const { return ir::Location{model_.file, index + 1, 1}; }

std::string Graph::Where(const onnx::NodeProto& node, int index) const {
  return LocationOf(index).ToString() + ": " + NodeLabel(node) + ": ";
}

Status Graph::LowerNodes(const onnx::GraphProto& graph) {
  for (const onnx::TensorProto& init : graph.initializer()) {
    StatusOr<Tensor> t = TensorOfProto(init);
    if (!t.ok()) {
      return Status(t.status().code(), model_.path + ": initializer: " + t.status().message());
    }
    Bind(init.name(), Lowered{b_.Constant(*t), *t, ""});
  }
  for (int i = 0; i < graph.node_size(); ++i) TPUSIM_RETURN_IF_ERROR(LowerNode(graph.node(i), i));
  return Status::Ok();
}

Status Graph::LowerNode(const onnx::NodeProto& proto, int index) {
  bool inputs_known = true;
  for (const std::string& in : proto.input()) {
    if (in.empty()) continue;
    const Lowered* l = Find(in);
    if (l == nullptr) {
      return InvalidArgument(Where(proto, index) + "its input '" + in +
                             "' is not defined by an earlier node, an initializer or an input");
    }
    inputs_known &= l->known.has_value();
  }
  const OnnxOpDef* def = OnnxOpRegistry::Lookup(proto.domain(), proto.op_type());
  if (def == nullptr) {
    return Unimplemented(Where(proto, index) + "the ONNX op " + proto.op_type() +
                         (proto.domain().empty() ? "" : " of domain " + proto.domain()) +
                         " is not supported");
  }
  b_.set_location(LocationOf(index));
  const size_t first = b_.block()->ops().size();
  Node node(*this, proto, index);
  for (const std::string& in : proto.input()) {
    const Lowered* l = in.empty() ? nullptr : Find(in);
    if (l != nullptr && !l->is_tensor() && !def->takes_sequences) {
      return node.Unsupported(l->KindName() + " ('" + in + "') as an input of " + proto.op_type());
    }
  }
  TPUSIM_RETURN_IF_ERROR(def->lower(node));
  for (int i = 0; i < proto.output_size(); ++i) {
    if (!proto.output(i).empty() && Find(proto.output(i)) == nullptr) {
      return Unimplemented(Where(proto, index) + "its output " + std::to_string(i) +
                           " is not supported");
    }
  }
  if (inputs_known) Fold(proto, first);
  return Status::Ok();
}

void Graph::Fold(const onnx::NodeProto& proto, size_t first) {
  std::vector<Lowered*> outputs;
  for (const std::string& out : proto.output()) {
    if (out.empty()) continue;
    Lowered* l = Find(out);
    if (l->known || !l->is_tensor()) continue;
    if (!l->value.type().is_tensor() || l->value.type().num_elements() > kMaxFoldedElements) return;
    outputs.push_back(l);
  }
  if (outputs.empty()) return;
  std::unordered_map<const ir::ValueImpl*, const Tensor*> inputs;
  for (const std::string& in : proto.input()) {
    if (!in.empty()) inputs[Find(in)->value.impl()] = &*Find(in)->known;
  }
  KnownFn known = [&](ir::Value v) -> const Tensor* {
    auto it = inputs.find(v.impl());
    return it == inputs.end() ? nullptr : it->second;
  };
  auto values = FoldOps(*b_.block(), first, known);
  if (!values) return;
  for (Lowered* l : outputs) {
    auto it = values->find(l->value.impl());
    if (it != values->end()) {
      l->known = it->second;
    } else if (const Tensor* t = known(l->value)) {
      l->known = *t;  // an output that is an input (Identity)
    }
  }
}

StatusOr<std::vector<Lowered>> Graph::Outputs(const onnx::GraphProto& graph) {
  std::vector<Lowered> out;
  for (const onnx::ValueInfoProto& o : graph.output()) {
    const Lowered* l = Find(o.name());
    if (l == nullptr) {
      return InvalidArgument(model_.path + ": graph '" + graph.name() + "' output '" + o.name() +
                             "' is not computed by any node");
    }
    out.push_back(*l);
  }
  return out;
}

}  // namespace tpusim::frontend::onnx_import
