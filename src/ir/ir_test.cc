#include "tpusim/ir/ir.h"

#include <gtest/gtest.h>

namespace tpusim::ir {
namespace {

TEST(TypeTest, TensorSpelling) {
  EXPECT_EQ(Type::Tensor(ElementType::kBF16, {2, 3}).ToString(), "tensor<2x3xbf16>");
  EXPECT_EQ(Type::Tensor(ElementType::kSI32, {}).ToString(), "tensor<i32>");
  EXPECT_EQ(Type::Tensor(ElementType::kC64, {4}).ToString(), "tensor<4xcomplex<f32>>");
  EXPECT_EQ(Type::Tuple({Type::Token(), Type::Tensor(ElementType::kI1, {})}).ToString(),
            "tuple<!stablehlo.token, tensor<i1>>");
}

TEST(TypeTest, Equality) {
  EXPECT_EQ(Type::Tensor(ElementType::kF32, {2}), Type::Tensor(ElementType::kF32, {2}));
  EXPECT_NE(Type::Tensor(ElementType::kF32, {2}), Type::Tensor(ElementType::kF32, {3}));
  EXPECT_NE(Type::Tensor(ElementType::kF32, {2}), Type::Tensor(ElementType::kF16, {2}));
  EXPECT_NE(Type::Token(), Type::Tuple({}));
}

TEST(ElementTypeTest, ParseAndClassify) {
  EXPECT_EQ(ParseElementType("si32"), ElementType::kSI32);
  EXPECT_EQ(ParseElementType("i32"), ElementType::kSI32);
  EXPECT_EQ(ParseElementType("ui4"), ElementType::kUI4);
  EXPECT_EQ(ParseElementType("f8E4M3FN"), ElementType::kF8E4M3FN);
  EXPECT_EQ(ParseElementType("complex<f64>"), ElementType::kC128);
  EXPECT_FALSE(ParseElementType("f33").has_value());
  EXPECT_TRUE(IsFloat(ElementType::kBF16));
  EXPECT_FALSE(IsFloat(ElementType::kC64));
  EXPECT_TRUE(IsUnsignedInt(ElementType::kUI64));
  EXPECT_EQ(StorageBytes(ElementType::kSI4), 1);
  EXPECT_EQ(BitWidth(ElementType::kSI4), 4);
}

TEST(AttributeTest, IntListViews) {
  EXPECT_EQ(Attribute::DenseArray(ElementType::kSI64, {1, 0}).AsInts(),
            (std::vector<int64_t>{1, 0}));
  Attribute arr = Attribute::Array({Attribute::Int(3), Attribute::Int(4)});
  EXPECT_EQ(arr.AsInts(), (std::vector<int64_t>{3, 4}));
  // dense<[[0, 1]]> : tensor<1x2xi64>, and a splat dense<7> : tensor<3xi32>.
  std::vector<uint8_t> bytes(16, 0);
  bytes[8] = 1;
  Attribute dense = Attribute::DenseElements(Type::Tensor(ElementType::kSI64, {1, 2}), bytes);
  EXPECT_EQ(dense.AsInts(), (std::vector<int64_t>{0, 1}));
  Attribute splat = Attribute::DenseElements(Type::Tensor(ElementType::kSI32, {3}), {7, 0, 0, 0});
  EXPECT_TRUE(splat.is_splat());
  EXPECT_EQ(splat.AsInts(), (std::vector<int64_t>{7, 7, 7}));
  EXPECT_EQ(dense.ToString(), "dense<[[0, 1]]> : tensor<1x2xi64>");
}

TEST(AttributeTest, StructuredPrinting) {
  Attribute dot = Attribute::Struct(
      "stablehlo.dot", {{"lhs_contracting_dimensions", Attribute::Array({Attribute::Int(1)})}});
  EXPECT_EQ(dot.Get("lhs_contracting_dimensions").AsInts(), (std::vector<int64_t>{1}));
  EXPECT_FALSE(dot.Get("missing"));
  EXPECT_EQ(Attribute::Enum("stablehlo.comparison_direction", "EQ").ToString(),
            "#stablehlo<comparison_direction EQ>");
}

TEST(IrTest, BuildAndNumber) {
  FunctionType sig{{Type::Tensor(ElementType::kF32, {2})}, {Type::Tensor(ElementType::kF32, {2})}};
  Function f("main", sig, Location{});
  Block& entry = f.body().AddBlock();
  Value arg = entry.AddArgument(sig.inputs[0], "arg0");
  auto add = std::make_unique<Operation>(OpName("stablehlo.add"), Location{});
  add->SetOperands({arg, arg});
  Value sum = add->AddResult(sig.results[0]);
  entry.Append(std::move(add));
  auto ret = std::make_unique<Operation>(OpName("func.return"), Location{});
  ret->SetOperands({sum});
  entry.Append(std::move(ret));
  f.Renumber();
  EXPECT_EQ(f.num_values(), 2);
  EXPECT_EQ(arg.id(), 0);
  EXPECT_EQ(sum.id(), 1);
  EXPECT_EQ(sum.defining_op()->name_str(), "stablehlo.add");
  EXPECT_EQ(OpName("stablehlo.add"), sum.defining_op()->name());
}

}  // namespace
}  // namespace tpusim::ir
