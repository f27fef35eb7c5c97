// Sequences and optionals where ONNX's backend cases do not reach: graph
// inputs and outputs of those types as @main's parameters and results, an
// If whose condition is computed at run time yielding sequences, a Loop
// carrying a sequence unrolled (with a scan output) or refused.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "tpusim/frontend/onnx/importer.h"
#include "tpusim/ir/printer.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::frontend {
namespace {

using onnx::TensorProto;

void TensorType(onnx::TypeProto* t, int elem, const std::vector<int64_t>& dims) {
  t->mutable_tensor_type()->set_elem_type(elem);
  auto* shape = t->mutable_tensor_type()->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

void AddTensor(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* to,
               const std::string& name, int elem, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* v = to->Add();
  v->set_name(name);
  TensorType(v->mutable_type(), elem, dims);
}

// A sequence of float tensors of `dims`, optional when `optional`.
void AddSequence(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* to,
                 const std::string& name, const std::vector<int64_t>& dims, bool optional = false) {
  onnx::ValueInfoProto* v = to->Add();
  v->set_name(name);
  onnx::TypeProto* t = v->mutable_type();
  if (optional) t = t->mutable_optional_type()->mutable_elem_type();
  TensorType(t->mutable_sequence_type()->mutable_elem_type(), TensorProto::FLOAT, dims);
}

onnx::NodeProto* AddNode(onnx::GraphProto& g, const std::string& op,
                         const std::vector<std::string>& in, const std::vector<std::string>& out) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  for (const std::string& s : in) n->add_input(s);
  for (const std::string& s : out) n->add_output(s);
  return n;
}

void GraphAttr(onnx::NodeProto* n, const std::string& name, const onnx::GraphProto& g) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
  a->mutable_g()->set_name(name);
}

TensorProto Scalar(const std::string& name, int type, int64_t v) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  if (type == TensorProto::BOOL) {
    t.add_int32_data(static_cast<int32_t>(v));
  } else {
    t.add_int64_data(v);
  }
  return t;
}

std::string Bytes(const onnx::GraphProto& g) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(16);
  *m.mutable_graph() = g;
  m.mutable_graph()->set_name("g");
  return m.SerializeAsString();
}

StatusOr<std::unique_ptr<ir::Module>> Import(const onnx::GraphProto& g,
                                             const OnnxImportOptions& options,
                                             std::vector<OnnxResult>* results = nullptr) {
  TPUSIM_ASSIGN_OR_RETURN(auto module, ImportOnnx(Bytes(g), "seq.onnx", options, results));
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*module));
  return module;
}

TEST(OnnxSequence, InputsAndOutputsAsElements) {
  onnx::GraphProto g;
  AddSequence(g.mutable_input(), "s", {2});
  AddTensor(g.mutable_input(), "t", TensorProto::FLOAT, {2});
  AddSequence(g.mutable_input(), "none", {2}, /*optional=*/true);
  AddNode(g, "SequenceInsert", {"s", "t", "pos"}, {"out"});
  AddNode(g, "OptionalHasElement", {"none"}, {"has"});
  *g.add_initializer() = Scalar("pos", TensorProto::INT64, -1);
  AddSequence(g.mutable_output(), "out", {2});
  AddTensor(g.mutable_output(), "has", TensorProto::BOOL, {});
  OnnxImportOptions options;
  options.sequence_shapes["s"] = {{2}, {2}};
  options.absent_inputs.insert("none");
  std::vector<OnnxResult> results;
  auto module = Import(g, options, &results);
  ASSERT_TRUE(module.ok()) << module.status().message();
  const ir::Function& main = *(*module)->Lookup("main");
  ASSERT_EQ(main.entry().num_arguments(), 3);
  EXPECT_EQ(main.entry().argument(0).name(), "s_0");
  EXPECT_EQ(main.entry().argument(1).name(), "s_1");
  EXPECT_EQ(main.entry().argument(2).name(), "t");
  // t before the last element; OptionalHasElement false, folded.
  const std::string text = ir::PrintModule(**module);
  EXPECT_NE(text.find("\"func.return\"(%arg0, %arg2, %arg1, "), std::string::npos) << text;
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[1].output, 0);
  EXPECT_EQ(results[1].element, 1);
  EXPECT_EQ(results[3].output, 1);
  EXPECT_EQ(results[3].element, -1);

  options.sequence_shapes.erase("s");
  auto missing = Import(g, options);
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("input 's' is a sequence"), std::string::npos);
}

// then: [a, b]; else: [b, a] (or [a] when `mismatched`).
onnx::GraphProto IfModel(bool mismatched) {
  onnx::GraphProto then_g, else_g, g;
  AddNode(then_g, "SequenceConstruct", {"a", "b"}, {"o1"});
  AddSequence(then_g.mutable_output(), "o1", {3});
  AddNode(else_g, "SequenceConstruct",
          mismatched ? std::vector<std::string>{"a"} : std::vector<std::string>{"b", "a"}, {"o2"});
  AddSequence(else_g.mutable_output(), "o2", {3});
  AddTensor(g.mutable_input(), "c", TensorProto::BOOL, {});
  AddTensor(g.mutable_input(), "a", TensorProto::FLOAT, {3});
  AddTensor(g.mutable_input(), "b", TensorProto::FLOAT, {3});
  onnx::NodeProto* n = AddNode(g, "If", {"c"}, {"s"});
  GraphAttr(n, "then_branch", then_g);
  GraphAttr(n, "else_branch", else_g);
  AddSequence(g.mutable_output(), "s", {3});
  return g;
}

TEST(OnnxSequence, IfAtRunTimeYieldsSequences) {
  // No input values: the condition is computed at run time.
  auto module = Import(IfModel(false), {});
  ASSERT_TRUE(module.ok()) << module.status().message();
  const std::string text = ir::PrintModule(**module);
  EXPECT_NE(text.find("\"stablehlo.return\"(%arg2, %arg1)"), std::string::npos) << text;
  EXPECT_NE(text.find("\"func.return\"(%3#0, %3#1)"), std::string::npos) << text;

  auto mismatched = Import(IfModel(true), {});
  EXPECT_EQ(mismatched.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(mismatched.status().message().find("differs in kind or sequence length"),
            std::string::npos)
      << mismatched.status().message();
}

// A Loop appending its iteration number to a sequence each time, with the
// square as a scan output; the trip count an initializer or an input.
onnx::GraphProto LoopModel(bool known_trips) {
  onnx::GraphProto body, g;
  AddTensor(body.mutable_input(), "i", TensorProto::INT64, {});
  AddTensor(body.mutable_input(), "cin", TensorProto::BOOL, {});
  AddSequence(body.mutable_input(), "sin", {});
  AddNode(body, "Identity", {"cin"}, {"cout"});
  onnx::NodeProto* cast = AddNode(body, "Cast", {"i"}, {"f"});
  onnx::AttributeProto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(TensorProto::FLOAT);
  AddNode(body, "SequenceInsert", {"sin", "f"}, {"sout"});
  AddNode(body, "Mul", {"f", "f"}, {"sq"});
  AddTensor(body.mutable_output(), "cout", TensorProto::BOOL, {});
  AddSequence(body.mutable_output(), "sout", {});
  AddTensor(body.mutable_output(), "sq", TensorProto::FLOAT, {});
  if (known_trips) {
    *g.add_initializer() = Scalar("M", TensorProto::INT64, 3);
  } else {
    AddTensor(g.mutable_input(), "M", TensorProto::INT64, {});
  }
  AddNode(g, "SequenceEmpty", {}, {"e"});
  GraphAttr(AddNode(g, "Loop", {"M", "", "e"}, {"final", "scan"}), "body", body);
  AddSequence(g.mutable_output(), "final", {});
  AddTensor(g.mutable_output(), "scan", TensorProto::FLOAT, {3});
  return g;
}

TEST(OnnxSequence, LoopCarryingASequenceIsUnrolled) {
  std::vector<OnnxResult> results;
  auto module = Import(LoopModel(true), {}, &results);
  ASSERT_TRUE(module.ok()) << module.status().message();
  const std::string text = ir::PrintModule(**module);
  EXPECT_EQ(text.find("stablehlo.while"), std::string::npos) << text;
  const ir::Function& main = *(*module)->Lookup("main");
  ASSERT_EQ(main.type().results.size(), 4u);  // three elements and the scan output
  EXPECT_EQ(main.type().results[3].ToString(), "tensor<3xf32>");
  EXPECT_EQ(results[2].element, 2);

  auto unknown = Import(LoopModel(false), {});
  EXPECT_EQ(unknown.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(unknown.status().message().find("trip count M of an unrolled Loop"),
            std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace tpusim::frontend
