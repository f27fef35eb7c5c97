// Lowerings that ONNX's backend cases do not reach: RoiAlign's adaptive
// sampling (a different number of samples per box, read from boxes known
// at import) in both modes, MaxPool's Indices over three spatial dimensions
// in column-major order with N and C counted, and Scan opset 8 over a batch
// of two with a reversed scan input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/onnx/testing/one_node_model.h"
#include "tpusim/exec/interpreter.h"

namespace tpusim::frontend {
namespace {

using onnx_testing::Dims;
using onnx_testing::F32;
using onnx_testing::IntAttr;
using onnx_testing::IntsAttr;
using onnx_testing::StringAttr;
using onnx_testing::Values;

StatusOr<std::unique_ptr<ir::Module>> Import(const std::string& op, int opset,
                                             const std::vector<onnx_testing::Arg>& args,
                                             const std::vector<onnx_testing::Out>& outs,
                                             const std::vector<onnx::AttributeProto>& attrs) {
  return onnx_testing::ImportVerified(onnx_testing::OneNodeModel(op, opset, args, outs, attrs),
                                      "sampling_test.onnx");
}

StatusOr<std::vector<Tensor>> Evaluate(const ir::Module& module,
                                       const std::vector<Tensor>& inputs) {
  exec::Interpreter interpreter(module, ops::EvalOptions{});
  return interpreter.Run("main", inputs);
}

// X[y][x] = 6y + x but for one dip at (2, 3); two boxes whose bins take
// 2 x 2 and 2 x 3 samples (ceil of the bin's extent). The expected values
// are ONNX's reference implementation's (onnx/reference/ops/op_roi_align.py).
void CheckRoiAlign(const std::string& mode, const std::vector<float>& want) {
  std::vector<float> x(36);
  for (int i = 0; i < 36; ++i) x[i] = static_cast<float>(i);
  x[2 * 6 + 3] = -50;
  auto module = Import("RoiAlign", 16,
                       {{"X", {1, 1, 6, 6}, {}, {}, true},
                        {"rois", {2, 4}, {0.4f, 0.6f, 4.4f, 3.1f, 3, 3, 7.5f, 6.5f}},
                        {"batch_indices", {2}, {}, {0, 0}}},
                       {{"Y", {2, 1, 2, 2}}},
                       {StringAttr("mode", mode), IntAttr("output_height", 2),
                        IntAttr("output_width", 2), IntAttr("sampling_ratio", 0)});
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto r = Evaluate(**module, {F32({1, 1, 6, 6}, x)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<float> y = Values<float>((*r)[0]);
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-4) << mode << " " << i;
}

TEST(OnnxSamplingTest, RoiAlignAdaptiveAverage) {
  CheckRoiAlign(
      "avg", {5.25f, 6.613542f, 12.75f, -8.586807f, 23.028646f, 16.833334f, 32.6875f, 22.708334f});
}

TEST(OnnxSamplingTest, RoiAlignAdaptiveMax) {
  CheckRoiAlign(
      "max", {6.0637503f, 7.796251f, 8.336251f, 7.6475005f, 19.195312f, 23.5625f, 28.875f, 35.0f});
}

TEST(OnnxSamplingTest, RoiAlignAdaptiveNeedsKnownBoxes) {
  auto module = Import("RoiAlign", 16,
                       {{"X", {1, 1, 6, 6}, {}, {}, true},
                        {"rois", {1, 4}, {}, {}, true},
                        {"batch_indices", {1}, {}, {0}}},
                       {{"Y", {1, 1, 2, 2}}}, {IntAttr("sampling_ratio", 0)});
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().ToString().find("rois"), std::string::npos)
      << module.status().ToString();
}

// A 2 x 2 x 2 window over each of two channels: channel 0's maximum at
// (1, 0, 0), channel 1's at (0, 1, 1). Column-major, (i, j, k) is
// i + 2j + 4k, after the 8 elements of channel 0.
TEST(OnnxSamplingTest, MaxPoolIndices3dColumnMajor) {
  std::vector<float> x(16, 0.0f);
  x[4] = 1;      // channel 0, (1, 0, 0) row-major
  x[8 + 3] = 2;  // channel 1, (0, 1, 1)
  for (int64_t order : {0, 1}) {
    auto module = Import("MaxPool", 12, {{"X", {1, 2, 2, 2, 2}, {}, {}, true}},
                         {{"Y", {1, 2, 1, 1, 1}}, {"I", {1, 2, 1, 1, 1}, onnx::TensorProto::INT64}},
                         {IntsAttr("kernel_shape", {2, 2, 2}), IntAttr("storage_order", order)});
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    auto r = Evaluate(**module, {F32({1, 2, 2, 2, 2}, x)});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(Values<float>((*r)[0]), (std::vector<float>{1, 2}));
    EXPECT_EQ(Values<int64_t>((*r)[1]),
              order == 0 ? (std::vector<int64_t>{4, 11}) : (std::vector<int64_t>{1, 14}));
  }
}

// Scan opset 8: a running sum over a batch of two sequences of three
// 1-element steps, scanned backwards; sequence_lens all the full length.
TEST(OnnxSamplingTest, Scan8BatchReversed) {
  onnx::AttributeProto body;
  body.set_name("body");
  body.set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* g = body.mutable_g();
  g->set_name("body");
  onnx_testing::SetType(g->add_input(), "s", onnx::TensorProto::FLOAT, {1});
  onnx_testing::SetType(g->add_input(), "a", onnx::TensorProto::FLOAT, {1});
  onnx::NodeProto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("s");
  add->add_input("a");
  add->add_output("s2");
  onnx::NodeProto* copy = g->add_node();
  copy->set_op_type("Identity");
  copy->add_input("s2");
  copy->add_output("y");
  onnx_testing::SetType(g->add_output(), "s2", onnx::TensorProto::FLOAT, {1});
  onnx_testing::SetType(g->add_output(), "y", onnx::TensorProto::FLOAT, {1});
  auto module = Import(
      "Scan", 8,
      {{"lens", {2}, {}, {3, 3}}, {"init", {2, 1}, {}, {}, true}, {"x", {2, 3, 1}, {}, {}, true}},
      {{"final", {2, 1}}, {"ys", {2, 3, 1}}},
      {body, IntAttr("num_scan_inputs", 1), IntsAttr("directions", {1})});
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto r = Evaluate(**module, {F32({2, 1}, {0, 100}), F32({2, 3, 1}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Values<float>((*r)[0]), (std::vector<float>{6, 115}));
  EXPECT_EQ(Values<float>((*r)[1]), (std::vector<float>{3, 5, 6, 106, 111, 115}));
}

}  // namespace
}  // namespace tpusim::frontend
