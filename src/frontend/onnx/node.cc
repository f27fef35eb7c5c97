#include "frontend/onnx/node.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "frontend/onnx/graph.h"
#include "frontend/onnx/tensor_proto.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::frontend::onnx_import {

Node::Node(Graph& graph, const onnx::NodeProto& proto, int index)
    : graph_(graph), proto_(proto), index_(index) {}

int Node::opset() const { return graph_.model().opset; }
Builder& Node::b() { return graph_.b(); }

Value Node::input(int i) const { return graph_.Find(proto_.input(i))->value; }

const Lowered& Node::lowered(int i) const { return *graph_.Find(proto_.input(i)); }

StatusOr<std::vector<Lowered>> Node::InputSequence(int i, std::string_view what) const {
  if (!has_input(i)) return Invalid(std::string(what) + " is missing");
  const Lowered& l = lowered(i);
  if (!l.sequence) return Invalid(std::string(what) + " is " + l.KindName() + ", not a sequence");
  return *l.sequence;
}

bool Node::IsKnown(int i) const {
  const Lowered* l = has_input(i) ? graph_.Find(proto_.input(i)) : nullptr;
  return l != nullptr && l->known.has_value();
}

StatusOr<Tensor> Node::Known(int i, std::string_view what) const {
  if (!has_input(i)) return Invalid(std::string(what) + " is missing");
  Lowered* l = graph_.Find(proto_.input(i));
  if (l->known) return *l->known;
  const auto& read = graph_.model().options->input_value;
  if (!l->input_name.empty() && read) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor t, read(l->input_name));
    if (t.type() != l->value.type()) {
      return Invalid("input '" + l->input_name + "' is " + t.type().ToString() + ", not " +
                     l->value.type().ToString());
    }
    l->known = t;
    return t;
  }
  std::string why = l->input_name.empty() ? "is computed from the inputs' values at run time"
                                          : "is the graph input '" + l->input_name +
                                                "', whose value a timing-only run does not have";
  // Not Unsupported's "... is not supported": the op is, this input's origin is not.
  return Unimplemented(
      graph_.Where(proto_, index_) + std::string(what) + " ('" + proto_.input(i) + "') " + why +
      ", but it fixes a shape of the result, which TPU programs need at compile time");
}

StatusOr<std::vector<int64_t>> Node::KnownInts(int i, std::string_view what) const {
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Known(i, what));
  if (!ir::IsInteger(t.element()) && !ir::IsBool(t.element())) {
    return Invalid(std::string(what) + " must be integers");
  }
  std::vector<int64_t> out(t.num_elements());
  const int bytes = ir::StorageBytes(t.element());
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    // si64 read as it is: exact beyond 2^53.
    out[k] = t.element() == ir::ElementType::kSI64
                 ? t.data<int64_t>()[k]
                 : static_cast<int64_t>(numerics::LoadAsDouble(t.element(), t.raw() + k * bytes));
  }
  return out;
}

StatusOr<std::vector<double>> Node::KnownDoubles(int i, std::string_view what) const {
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Known(i, what));
  if (ir::IsComplex(t.element())) return Invalid(std::string(what) + " must be real");
  std::vector<double> out(t.num_elements());
  const int bytes = ir::StorageBytes(t.element());
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    out[k] = numerics::LoadAsDouble(t.element(), t.raw() + k * bytes);
  }
  return out;
}

const onnx::AttributeProto* Node::Attr(std::string_view name) const {
  for (const onnx::AttributeProto& a : proto_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t Node::Int(std::string_view name, int64_t fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  return a != nullptr ? a->i() : fallback;
}

float Node::Float(std::string_view name, float fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  return a != nullptr ? a->f() : fallback;
}

std::string Node::String(std::string_view name, std::string_view fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  return a != nullptr ? a->s() : std::string(fallback);
}

std::vector<int64_t> Node::Ints(std::string_view name, std::vector<int64_t> fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr) return fallback;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> Node::Floats(std::string_view name, std::vector<float> fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr) return fallback;
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

StatusOr<Tensor> Node::TensorAttr(std::string_view name) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr || !a->has_t())
    return Invalid("needs the tensor attribute '" + std::string(name) + "'");
  StatusOr<Tensor> t = TensorOfProto(a->t());
  if (!t.ok()) {
    return Status(t.status().code(), graph_.Where(proto_, index_) + t.status().message());
  }
  return t;
}

const onnx::GraphProto* Node::GraphAttr(std::string_view name) const {
  const onnx::AttributeProto* a = Attr(name);
  return a != nullptr && a->has_g() ? &a->g() : nullptr;
}

void Node::SetOutput(int i, Value v) {
  if (!wants_output(i)) return;
  graph_.Bind(proto_.output(i), Lowered{v, std::nullopt, ""});
}

void Node::SetKnownOutput(int i, const Tensor& t) {
  if (!wants_output(i)) return;
  graph_.Bind(proto_.output(i), Lowered{b().Constant(t), t, ""});
}

void Node::SetOutputLowered(int i, Lowered v) {
  if (wants_output(i)) graph_.Bind(proto_.output(i), std::move(v));
}

void Node::SetOutputSequence(int i, std::vector<Lowered> elements) {
  Lowered l;
  l.sequence = std::move(elements);
  SetOutputLowered(i, std::move(l));
}

void Node::SetOutputNone(int i) {
  Lowered l;
  l.is_none = true;
  SetOutputLowered(i, std::move(l));
}

Status Node::Unsupported(std::string_view what) const {
  return Unimplemented(graph_.Where(proto_, index_) + std::string(what) + " is not supported");
}

Status Node::Invalid(std::string_view what) const {
  return InvalidArgument(graph_.Where(proto_, index_) + std::string(what));
}

StatusOr<int64_t> Node::Axis(int64_t axis, int64_t rank) const {
  if (axis < -rank || axis >= rank) {
    return Invalid("axis " + std::to_string(axis) + " is out of range for rank " +
                   std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

StatusOr<std::vector<Value>> Node::LowerSubgraph(const onnx::GraphProto& body,
                                                 const std::vector<Value>& args, ir::Block* block) {
  std::vector<Lowered> in;
  for (Value v : args) in.push_back(Lowered{v, std::nullopt, ""});
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Lowered> outs, LowerSubgraphLowered(body, in, block));
  std::vector<Value> out;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k].is_tensor()) {
      return Unsupported(outs[k].KindName() + " as the output '" + body.output(k).name() +
                         "' of its subgraph");
    }
    out.push_back(outs[k].value);
  }
  return out;
}

StatusOr<std::vector<Lowered>> Node::LowerSubgraphLowered(const onnx::GraphProto& body,
                                                          const std::vector<Lowered>& args,
                                                          ir::Block* block) {
  if (body.input_size() != static_cast<int>(args.size())) {
    return Invalid("its subgraph '" + body.name() + "' takes " + std::to_string(body.input_size()) +
                   " inputs, not " + std::to_string(args.size()));
  }
  Graph sub(graph_.model(), block, &graph_);
  for (int i = 0; i < body.input_size(); ++i) sub.Bind(body.input(i).name(), args[i]);
  TPUSIM_RETURN_IF_ERROR(sub.LowerNodes(body));
  return sub.Outputs(body);
}

namespace {

std::map<std::string, OnnxOpDef, std::less<>>& Table() {
  static auto* table = new std::map<std::string, OnnxOpDef, std::less<>>();
  return *table;
}

std::string Key(std::string_view domain, std::string_view op_type) {
  if (domain == "ai.onnx") domain = "";
  return domain.empty() ? std::string(op_type) : std::string(domain) + "." + std::string(op_type);
}

}  // namespace

bool OnnxOpRegistry::Register(OnnxOpDef def) {
  std::string key = Key(def.domain, def.op_type);
  if (!Table().emplace(key, std::move(def)).second) std::abort();  // defined twice: a bug
  return true;
}

const OnnxOpDef* OnnxOpRegistry::Lookup(std::string_view domain, std::string_view op_type) {
  auto it = Table().find(Key(domain, op_type));
  return it == Table().end() ? nullptr : &it->second;
}

}  // namespace tpusim::frontend::onnx_import
