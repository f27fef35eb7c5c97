// The recurrent layers' lowering (rnn.cc) where ONNX's backend cases do not
// reach: sequence_lens read at run time by both directions (in both
// layouts), the loop's shape (one while, not unrolled; the input projection
// hoisted out of it), and the refusal of an unknown activation.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <string>
#include <vector>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/onnx/importer.h"
#include "tpusim/ir/ir.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::frontend {
namespace {

// A float (or, with ints, int32) tensor: a graph input when `fed`, else an
// initializer.
struct Arg {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<float> floats;
  std::vector<int32_t> ints;
  bool fed = false;
};

void SetType(onnx::ValueInfoProto* v, const std::string& name, int elem,
             const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

// A model of one `op` node; `args` in the op's input order (an empty name
// for an absent input), `outputs` with their shapes.
std::string Model(const std::string& op, const std::vector<Arg>& args,
                  const std::vector<std::pair<std::string, std::vector<int64_t>>>& outputs,
                  const std::vector<onnx::AttributeProto>& attrs) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(14);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("rnn_test");
  onnx::NodeProto* node = g->add_node();
  node->set_op_type(op);
  for (const Arg& a : args) {
    node->add_input(a.name);
    if (a.name.empty()) continue;
    const int elem = a.ints.empty() ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT32;
    if (a.fed) {
      SetType(g->add_input(), a.name, elem, a.dims);
      continue;
    }
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(a.name);
    t->set_data_type(elem);
    for (int64_t d : a.dims) t->add_dims(d);
    for (float f : a.floats) t->add_float_data(f);
    for (int32_t i : a.ints) t->add_int32_data(i);
  }
  for (const auto& [name, dims] : outputs) {
    node->add_output(name);
    SetType(g->add_output(), name, onnx::TensorProto::FLOAT, dims);
  }
  for (const onnx::AttributeProto& a : attrs) *node->add_attribute() = a;
  return m.SerializeAsString();
}

onnx::AttributeProto IntAttr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto StringAttr(const std::string& name, const std::string& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}

onnx::AttributeProto StringsAttr(const std::string& name, const std::vector<std::string>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& s : v) a.add_strings(s);
  return a;
}

StatusOr<std::unique_ptr<ir::Module>> Import(const std::string& bytes) {
  TPUSIM_ASSIGN_OR_RETURN(auto module, ImportOnnx(bytes, "rnn_test.onnx", {}));
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*module));
  return module;
}

Tensor F32(const std::vector<int64_t>& dims, const std::vector<float>& v) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kF32, dims)).value();
  std::memcpy(t.mutable_raw(), v.data(), v.size() * sizeof(float));
  return t;
}

Tensor I32(const std::vector<int64_t>& dims, const std::vector<int32_t>& v) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kSI32, dims)).value();
  std::memcpy(t.mutable_raw(), v.data(), v.size() * sizeof(int32_t));
  return t;
}

std::vector<float> Floats(const Tensor& t) {
  std::vector<float> out(t.num_elements());
  std::memcpy(out.data(), t.raw(), out.size() * sizeof(float));
  return out;
}

// A bidirectional RNN of one unit, h = x + h/2 (Affine activations: exact),
// over two sequences of lengths 4 and 2 given as a run input: the forward
// direction stops after the length, the reverse one starts at the
// sequence's last element, Y is 0 past it and Y_h is the state after the
// last valid step.
void CheckLengths(int64_t layout) {
  constexpr int64_t T = 4, B = 2;
  const std::vector<int32_t> lens = {4, 2};
  auto x_at = [](int64_t t, int64_t b) { return static_cast<float>(t + 1 + 10 * b); };
  std::vector<float> x(T * B);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t b = 0; b < B; ++b) x[layout == 0 ? t * B + b : b * T + t] = x_at(t, b);
  }
  const std::vector<int64_t> x_dims =
      layout == 0 ? std::vector<int64_t>{T, B, 1} : std::vector<int64_t>{B, T, 1};
  const std::vector<int64_t> y_dims =
      layout == 0 ? std::vector<int64_t>{T, 2, B, 1} : std::vector<int64_t>{B, T, 2, 1};
  const std::vector<int64_t> h_dims =
      layout == 0 ? std::vector<int64_t>{2, B, 1} : std::vector<int64_t>{B, 2, 1};
  std::string bytes = Model(
      "RNN",
      {{"X", x_dims, {}, {}, true},
       {"W", {2, 1, 1}, {1, 1}},
       {"R", {2, 1, 1}, {0.5f, 0.5f}},
       {""},
       {"sequence_lens", {B}, {}, lens, true}},
      {{"Y", y_dims}, {"Y_h", h_dims}},
      {IntAttr("hidden_size", 1), IntAttr("layout", layout),
       StringAttr("direction", "bidirectional"), StringsAttr("activations", {"Affine", "Affine"})});
  auto module = Import(bytes);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  exec::Interpreter interpreter(**module, ops::EvalOptions{});
  const std::vector<Tensor> inputs = {F32(x_dims, x), I32({B}, lens)};
  auto r = interpreter.Run("main", inputs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<float> y = Floats((*r)[0]), y_h = Floats((*r)[1]);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<float> want(2 * T, 0.0f);  // [direction][t]
    float h = 0;
    for (int64_t t = 0; t < lens[b]; ++t) want[t] = h = x_at(t, b) + h / 2;
    const float forward = h;
    h = 0;
    for (int64_t t = lens[b] - 1; t >= 0; --t) want[T + t] = h = x_at(t, b) + h / 2;
    for (int64_t d = 0; d < 2; ++d) {
      for (int64_t t = 0; t < T; ++t) {
        const int64_t at = layout == 0 ? (t * 2 + d) * B + b : (b * T + t) * 2 + d;
        EXPECT_EQ(y[at], want[d * T + t])
            << "layout " << layout << " b " << b << " d " << d << " t " << t;
      }
      const int64_t at = layout == 0 ? d * B + b : b * 2 + d;
      EXPECT_EQ(y_h[at], d == 0 ? forward : h) << "layout " << layout << " b " << b << " d " << d;
    }
  }
}

TEST(OnnxRnnTest, SequenceLengthsAtRunTime) { CheckLengths(0); }
TEST(OnnxRnnTest, SequenceLengthsAtRunTimeBatchFirst) { CheckLengths(1); }

// The ops of `block` named `name`, not counting nested regions.
int Count(const ir::Block& block, const std::string& name) {
  int n = 0;
  for (const auto& op : block.ops()) n += op->name_str() == name;
  return n;
}

// A bidirectional LSTM of T steps: its module.
std::unique_ptr<ir::Module> Lstm(int64_t T) {
  constexpr int64_t B = 2, I = 3, H = 4;
  std::string bytes = Model("LSTM",
                            {{"X", {T, B, I}, {}, {}, true},
                             {"W", {2, 4 * H, I}, std::vector<float>(2 * 4 * H * I, 0.1f)},
                             {"R", {2, 4 * H, H}, std::vector<float>(2 * 4 * H * H, 0.1f)}},
                            {{"Y", {T, 2, B, H}}, {"Y_h", {2, B, H}}, {"Y_c", {2, B, H}}},
                            {IntAttr("hidden_size", H), StringAttr("direction", "bidirectional")});
  auto module = Import(bytes);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

TEST(OnnxRnnTest, OneLoopWithTheInputProjectionHoisted) {
  auto m64 = Lstm(64), m4 = Lstm(4);
  ASSERT_TRUE(m64 && m4);
  const ir::Block& entry = m64->Lookup("main")->entry();
  ASSERT_EQ(Count(entry, "stablehlo.while"), 1);
  // X·W^T of every step and direction before the loop: [T, B, dirs, 4H].
  ASSERT_EQ(Count(entry, "stablehlo.dot_general"), 1);
  for (const auto& op : entry.ops()) {
    if (op->name_str() == "stablehlo.dot_general") {
      EXPECT_EQ(op->result(0).type().shape(), (ir::Shape{64, 2, 2, 16}));
    }
    if (op->name_str() == "stablehlo.while") {
      // H·R^T, batched over the directions: the only matmul of a step.
      EXPECT_EQ(Count(op->region(1).front(), "stablehlo.dot_general"), 1);
    }
  }
  // The program's size does not grow with the sequence.
  EXPECT_EQ(entry.ops().size(), m4->Lookup("main")->entry().ops().size());
}

TEST(OnnxRnnTest, UnknownActivationIsRefused) {
  std::string bytes = Model(
      "RNN", {{"X", {2, 1, 1}, {}, {}, true}, {"W", {1, 1, 1}, {1}}, {"R", {1, 1, 1}, {1}}},
      {{"Y", {2, 1, 1, 1}}}, {IntAttr("hidden_size", 1), StringsAttr("activations", {"Gelu"})});
  auto module = ImportOnnx(bytes, "rnn_test.onnx", {});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented) << module.status().ToString();
  EXPECT_NE(module.status().message().find("activation 'Gelu'"), std::string::npos)
      << module.status().ToString();
}

}  // namespace
}  // namespace tpusim::frontend
