#include "tpusim/exec/interpreter.h"

#include <gtest/gtest.h>

#include "tpusim/verify/verifier.h"

namespace tpusim::exec {
namespace {

using ir::ElementType;
using ir::Type;

const Type kScalarI32 = Type::Tensor(ElementType::kSI32, {});

ir::Attribute I32(int32_t v) {
  std::vector<uint8_t> bytes(4);
  std::memcpy(bytes.data(), &v, 4);
  return ir::Attribute::DenseElements(kScalarI32, bytes);
}

ir::Location Loc(int line) {
  return {std::make_shared<const std::string>("t.mlir"), line, 3};
}

// @name() -> i32 { %0 = <op>; return %0 }, with `op` a constant unless given.
ir::Function* AddFunction(ir::Module& m, const std::string& name, const std::string& op_name,
                          int32_t value) {
  auto f = std::make_unique<ir::Function>(name, ir::FunctionType{{}, {kScalarI32}}, Loc(1));
  ir::Block& entry = f->body().AddBlock();
  auto op = std::make_unique<ir::Operation>(ir::OpName(op_name), Loc(2));
  if (op_name == "stablehlo.constant") op->attrs().Set("value", I32(value));
  if (op_name == "func.call") op->attrs().Set("callee", ir::Attribute::SymbolRef(name));
  ir::Value v = op->AddResult(kScalarI32);
  entry.Append(std::move(op));
  auto ret = std::make_unique<ir::Operation>(ir::OpName("func.return"), Loc(3));
  ret->SetOperands({v});
  entry.Append(std::move(ret));
  f->Renumber();
  return m.AddFunction(std::move(f));
}

TEST(InterpreterTest, EvaluatesConstant) {
  ir::Module m;
  AddFunction(m, "main", "stablehlo.constant", 42);
  ASSERT_TRUE(verify::VerifyModule(m).ok());
  Interpreter interp(m, {});
  auto results = interp.Run("main", {});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ(*(*results)[0].data<int32_t>(), 42);
}

TEST(InterpreterTest, UnknownFunctionIsNotFound) {
  ir::Module m;
  Interpreter interp(m, {});
  EXPECT_EQ(interp.Run("nope", {}).status().code(), StatusCode::kNotFound);
}

TEST(InterpreterTest, UnknownOpIsUnsupportedWithLocation) {
  ir::Module m;
  AddFunction(m, "main", "stablehlo.frobnicate", 0);
  Status st = verify::VerifyModule(m);
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(st.message().rfind("t.mlir:2:3: ", 0), 0u) << st.message();
  EXPECT_NE(st.message().find("stablehlo.frobnicate"), std::string::npos);
}

TEST(InterpreterTest, UnboundedRecursionIsAnErrorNotACrash) {
  ir::Module m;
  AddFunction(m, "main", "func.call", 0);  // @main calls itself
  ASSERT_TRUE(verify::VerifyModule(m).ok());
  Interpreter interp(m, {});
  Status st = interp.Run("main", {}).status();
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("call depth"), std::string::npos);
}

TEST(InterpreterTest, WrongArgumentCountIsInvalid) {
  ir::Module m;
  AddFunction(m, "main", "stablehlo.constant", 1);
  Interpreter interp(m, {});
  auto t = Tensor::Allocate(kScalarI32);
  ASSERT_TRUE(t.ok());
  std::vector<Tensor> args{*t};
  EXPECT_EQ(interp.Run("main", args).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::exec
