// The ONNX importer's mechanics on models built here with ONNX's own
// messages: the lowered program (golden text), shapes folded at import,
// dynamic inputs, values a shape depends on, external data, and one-line
// errors for what is malformed or unsupported. The ops' numerics are checked
// against ONNX's backend suite (scripts/onnx_conformance.py).
#include "tpusim/frontend/onnx/importer.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tpusim/ir/printer.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::frontend {
namespace {

using onnx::TensorProto;

void AddInput(onnx::GraphProto& g, const std::string& name, int32_t type,
              const std::vector<std::string>& dims) {
  onnx::ValueInfoProto* v = g.add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  for (const std::string& d : dims) {
    auto* dim = t->mutable_shape()->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) {
      dim->set_dim_value(std::stoll(d));
    } else {
      dim->set_dim_param(d);
    }
  }
}

// An output of `rank` dimensions left unnamed: the importer computes them.
void AddOutput(onnx::GraphProto& g, const std::string& name, int rank,
               int32_t type = TensorProto::FLOAT) {
  onnx::ValueInfoProto* v = g.add_output();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  t->mutable_shape();
  for (int i = 0; i < rank; ++i) {
    t->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(i));
  }
}

onnx::NodeProto* AddNode(onnx::GraphProto& g, const std::string& op,
                         const std::vector<std::string>& in, const std::vector<std::string>& out,
                         const std::string& name = "") {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const std::string& s : in) n->add_input(s);
  for (const std::string& s : out) n->add_output(s);
  return n;
}

TensorProto Int64s(const std::string& name, const std::vector<int64_t>& v) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t.add_int64_data(x);
  return t;
}

onnx::ModelProto Model(int opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* id = m.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

std::string Bytes(const onnx::ModelProto& m) { return m.SerializeAsString(); }

StatusOr<std::unique_ptr<ir::Module>> Import(const onnx::ModelProto& m,
                                             const OnnxImportOptions& options = {},
                                             const std::string& path = "model.onnx") {
  auto module = ImportOnnx(Bytes(m), path, options);
  if (module.ok()) {
    Status verified = verify::VerifyModule(**module);
    if (!verified.ok()) return verified;
  }
  return module;
}

TEST(OnnxImport, LowersAGraphToStableHlo) {
  onnx::ModelProto m = Model();
  onnx::GraphProto& g = *m.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {"2", "3"});
  AddInput(g, "y", TensorProto::FLOAT, {"3"});
  AddNode(g, "Add", {"x", "y"}, {"s"});
  AddNode(g, "Relu", {"s"}, {"r"});
  AddOutput(g, "r", 2);
  auto module = Import(m);
  ASSERT_TRUE(module.ok()) << module.status().message();
  // y broadcasts along x's last dimension; Relu is max(s, 0).
  EXPECT_EQ(ir::PrintModule(**module),
            R"(module @g {
  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>) -> (tensor<2x3xf32>) {
    %2 = "stablehlo.broadcast_in_dim"(%arg1) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
    %3 = "stablehlo.add"(%arg0, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %4 = "stablehlo.constant"() {value = dense<"0x00000000"> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
    %5 = "stablehlo.maximum"(%3, %4) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    "func.return"(%5) : (tensor<2x3xf32>) -> ()
  }
}
)");
  // The parameters keep the graph inputs' names (--arg-shape and --input use them).
  EXPECT_EQ((*module)->Lookup("main")->entry().argument(1).name(), "y");
}

TEST(OnnxImport, FoldsShapeComputations) {
  // PyTorch's flatten: Reshape(x, Concat(Gather(Shape(x), 0), [-1])).
  onnx::ModelProto m = Model();
  onnx::GraphProto& g = *m.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {"4", "3", "2"});
  *g.add_initializer() = Int64s("zero", {0});
  *g.add_initializer() = Int64s("minus_one", {-1});
  AddNode(g, "Shape", {"x"}, {"shape"});
  AddNode(g, "Gather", {"shape", "zero"}, {"batch"});
  AddNode(g, "Concat", {"batch", "minus_one"}, {"target"})->add_attribute()->set_name("axis");
  g.mutable_node(2)->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  g.mutable_node(2)->mutable_attribute(0)->set_i(0);
  AddNode(g, "Reshape", {"x", "target"}, {"y"});
  AddOutput(g, "y", 2);
  auto module = Import(m);
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ((*module)->Lookup("main")->type().results[0].ToString(), "tensor<4x6xf32>");
}

onnx::ModelProto DynamicBatch() {
  onnx::ModelProto m = Model();
  onnx::GraphProto& g = *m.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {"batch", "8"});
  AddNode(g, "Neg", {"x"}, {"y"});
  AddOutput(g, "y", 2);
  return m;
}

TEST(OnnxImport, DynamicDimensionsTakeTheGivenShapes) {
  auto unsized = Import(DynamicBatch());
  ASSERT_FALSE(unsized.ok());
  EXPECT_EQ(unsized.status().message(),
            "model.onnx: input 'x' has the dynamic shape batchx8: give its shape with "
            "--arg-shape x=DIMS (like 8x128) or an --input file");
  OnnxImportOptions options;
  options.input_shapes["x"] = {5, 8};
  auto sized = Import(DynamicBatch(), options);
  ASSERT_TRUE(sized.ok()) << sized.status().message();
  EXPECT_EQ((*sized)->Lookup("main")->type().inputs[0].ToString(), "tensor<5x8xf32>");
  options.input_shapes["x"] = {5, 9};  // 9 is not the model's 8
  auto wrong = Import(DynamicBatch(), options);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(), "model.onnx: input 'x' is batchx8, not 5x9");
}

onnx::ModelProto ReshapeByInput() {
  onnx::ModelProto m = Model();
  onnx::GraphProto& g = *m.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {"2", "6"});
  AddInput(g, "shape", TensorProto::INT64, {"2"});
  AddNode(g, "Reshape", {"x", "shape"}, {"y"}, "reshape");
  AddOutput(g, "y", 2);
  return m;
}

TEST(OnnxImport, ShapesFromInputValuesSpecializeTheProgram) {
  auto timing = Import(ReshapeByInput());
  ASSERT_FALSE(timing.ok());
  EXPECT_EQ(timing.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(timing.status().message(),
            "model.onnx:1:1: node 'reshape' (Reshape): shape ('shape') is the graph input 'shape', "
            "whose value a timing-only run does not have, but it fixes a shape of the result, "
            "which TPU programs need at compile time");
  OnnxImportOptions options;
  // Each small input is read at import; the program takes `shape`'s value.
  std::vector<std::string> read;
  options.input_value = [&](const std::string& name) -> StatusOr<Tensor> {
    read.push_back(name);
    if (name == "x") return Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kF32, {2, 6}));
    TPUSIM_ASSIGN_OR_RETURN(Tensor t,
                            Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kSI64, {2})));
    t.mutable_data<int64_t>()[0] = 3;
    t.mutable_data<int64_t>()[1] = 4;
    return t;
  };
  auto run = Import(ReshapeByInput(), options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ((*run)->Lookup("main")->type().results[0].ToString(), "tensor<3x4xf32>");
  EXPECT_EQ(read, (std::vector<std::string>{"x", "shape"}));
}

TEST(OnnxImport, UnknownOpsNameTheNode) {
  onnx::ModelProto m = Model();
  onnx::GraphProto& g = *m.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {"2"});
  AddNode(g, "Neg", {"x"}, {"a"}, "first");
  AddNode(g, "Frobnicate", {"a"}, {"y"}, "second")->set_domain("com.example");
  AddOutput(g, "y", 1);
  auto* id = m.add_opset_import();
  id->set_domain("com.example");
  id->set_version(1);
  auto module = Import(m);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(module.status().message(),
            "model.onnx:2:1: node 'second' (com.example.Frobnicate): the ONNX op Frobnicate of "
            "domain com.example is not supported");
}

TEST(OnnxImport, MalformedModelsAreOneLineErrors) {
  auto garbage = ImportOnnx(std::string("\x08\x07\x12\xff\xff\xff\x00", 7), "bad.onnx", {});
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().message(),
            "bad.onnx: not an ONNX model (its bytes do not parse as a ModelProto)");

  // A node reading a value defined only after it: not in topological order.
  onnx::ModelProto m = Model();
  onnx::GraphProto& g = *m.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {"2"});
  AddNode(g, "Neg", {"b"}, {"a"});
  AddNode(g, "Neg", {"a"}, {"b"});
  AddOutput(g, "b", 1);
  auto cyclic = Import(m);
  ASSERT_FALSE(cyclic.ok());
  EXPECT_EQ(cyclic.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cyclic.status().message().find('\n'), std::string::npos);
  EXPECT_NE(cyclic.status().message().find("invalid ONNX model"), std::string::npos);
}

// An axis must name a dimension: ops over a rank-0 input have none (a fuzzed
// Gather on a scalar once read past its empty shape).
TEST(OnnxImport, AnAxisOfAScalarIsOutOfRange) {
  for (const char* op : {"Gather", "GatherElements"}) {
    onnx::ModelProto m = Model();
    onnx::GraphProto& g = *m.mutable_graph();
    AddInput(g, "x", TensorProto::FLOAT, {});
    g.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();  // rank 0
    AddInput(g, "i", TensorProto::INT64, {"1"});
    AddNode(g, op, {"x", "i"}, {"y"}, "n");
    AddOutput(g, "y", 1);
    auto module = Import(m);
    ASSERT_FALSE(module.ok()) << op;
    EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument) << op;
    EXPECT_NE(module.status().message().find("out of range for rank 0"), std::string::npos)
        << op << ": " << module.status().message();
  }
}

TEST(OnnxImport, TensorsOfTheWrongSizeAreRefused) {
  onnx::ModelProto m = Model();
  onnx::GraphProto& g = *m.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {"2"});
  TensorProto w;
  w.set_name("w");
  w.set_data_type(TensorProto::FLOAT);
  w.add_dims(1000000000);  // claims 4 GB, holds 8 bytes
  w.set_raw_data(std::string(8, '\0'));
  *g.add_initializer() = w;
  AddNode(g, "Add", {"x", "w"}, {"y"});
  AddOutput(g, "y", 1);
  auto module = Import(m);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().message(),
            "model.onnx: initializer: tensor 'w' holds 8 bytes where its dimensions need "
            "4000000000");
}

TEST(OnnxImport, ReadsExternalDataBesideTheModel) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("onnx_ext_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const float w[2] = {1.5f, -2.0f};
  std::ofstream(dir / "weights.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(w), sizeof(w));
  onnx::ModelProto m = Model();
  onnx::GraphProto& g = *m.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {"2"});
  TensorProto t;
  t.set_name("w");
  t.set_data_type(TensorProto::FLOAT);
  t.add_dims(2);
  t.set_data_location(TensorProto::EXTERNAL);
  auto* loc = t.add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  *g.add_initializer() = t;
  AddNode(g, "Mul", {"x", "w"}, {"y"});
  AddOutput(g, "y", 1);
  auto module = Import(m, {}, (dir / "model.onnx").string());
  ASSERT_TRUE(module.ok()) << module.status().message();
  const ir::Operation& constant = *(*module)->Lookup("main")->entry().ops()[0];
  ASSERT_EQ(constant.name_str(), "stablehlo.constant");
  const std::vector<uint8_t>& bytes = constant.attr("value").bytes();
  ASSERT_EQ(bytes.size(), sizeof(w));
  EXPECT_EQ(std::memcmp(bytes.data(), w, sizeof(w)), 0);

  loc->set_value("../../etc/passwd");  // outside the model's folder
  *g.mutable_initializer(0) = t;
  auto escaped = Import(m, {}, (dir / "model.onnx").string());
  ASSERT_FALSE(escaped.ok());
  EXPECT_NE(escaped.status().message().find("is not a file in the model's folder"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(OnnxImport, ListsTheGraphInputsThatAreNotInitializers) {
  onnx::ModelProto m = Model();
  onnx::GraphProto& g = *m.mutable_graph();
  AddInput(g, "ids", TensorProto::INT64, {"batch", "16"});
  AddInput(g, "bias", TensorProto::INT64, {"16"});  // also an initializer: a default
  *g.add_initializer() = Int64s("bias", std::vector<int64_t>(16, 1));
  AddNode(g, "Add", {"ids", "bias"}, {"y"});
  AddOutput(g, "y", 2, TensorProto::INT64);
  auto inputs = ReadOnnxInputs(Bytes(m), "model.onnx");
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  ASSERT_EQ(inputs->size(), 1u);
  EXPECT_EQ((*inputs)[0].name, "ids");
  EXPECT_EQ((*inputs)[0].element, ir::ElementType::kSI64);
  EXPECT_EQ((*inputs)[0].dims, (std::vector<int64_t>{-1, 16}));
  EXPECT_EQ((*inputs)[0].dim_names[0], "batch");
  EXPECT_EQ(OnnxValueName("input.1"), "input_1");
  EXPECT_EQ(OnnxValueName("onnx::Gemm_0"), "onnx__Gemm_0");
  EXPECT_EQ(OnnxValueName("0"), "_0");
}

}  // namespace
}  // namespace tpusim::frontend
