// The recurrent layers' lowering (rnn.cc) where ONNX's backend cases do not
// reach: sequence_lens read at run time by both directions (in both
// layouts), the loop's shape (one while, not unrolled; the input projection
// hoisted out of it), and the refusal of an unknown activation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/onnx/testing/one_node_model.h"
#include "tpusim/exec/interpreter.h"

namespace tpusim::frontend {
namespace {

using onnx_testing::Arg;
using onnx_testing::F32;
using onnx_testing::IntAttr;
using onnx_testing::StringAttr;
using onnx_testing::StringsAttr;
using onnx_testing::Values;

// A model of one `op` node of opset 14; `args` in the op's input order.
std::string Model(const std::string& op, const std::vector<Arg>& args,
                  const std::vector<onnx_testing::Out>& outputs,
                  const std::vector<onnx::AttributeProto>& attrs) {
  return onnx_testing::OneNodeModel(op, 14, args, outputs, attrs);
}

StatusOr<std::unique_ptr<ir::Module>> Import(const std::string& bytes) {
  return onnx_testing::ImportVerified(bytes, "rnn_test.onnx");
}

// A bidirectional RNN of one unit, h = x + h/2 (Affine activations: exact),
// over two sequences of lengths 4 and 2 given as a run input: the forward
// direction stops after the length, the reverse one starts at the
// sequence's last element, Y is 0 past it and Y_h is the state after the
// last valid step.
void CheckLengths(int64_t layout) {
  constexpr int64_t T = 4, B = 2;
  const std::vector<int32_t> lens = {4, 2};
  const std::vector<int64_t> lens64(lens.begin(), lens.end());
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
       {"sequence_lens", {B}, {}, lens64, true, onnx::TensorProto::INT32}},
      {{"Y", y_dims}, {"Y_h", h_dims}},
      {IntAttr("hidden_size", 1), IntAttr("layout", layout),
       StringAttr("direction", "bidirectional"), StringsAttr("activations", {"Affine", "Affine"})});
  auto module = Import(bytes);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  exec::Interpreter interpreter(**module, ops::EvalOptions{});
  const std::vector<Tensor> inputs = {F32(x_dims, x),
                                      onnx_testing::TensorOf(ir::ElementType::kSI32, {B}, lens)};
  auto r = interpreter.Run("main", inputs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<float> y = Values<float>((*r)[0]), y_h = Values<float>((*r)[1]);
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
