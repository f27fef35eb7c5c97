// Test helpers for the elementwise op tests: build a one-op function by
// hand, verify it and run it on host tensors.
#ifndef TPUSIM_OPS_TESTING_ELEMENTWISE_TEST_UTIL_H_
#define TPUSIM_OPS_TESTING_ELEMENTWISE_TEST_UTIL_H_

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tpusim/exec/interpreter.h"
#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::ops::testing {

// A tensor of element type e and `shape` whose storage holds `values`.
// REQUIRES: sizeof(T) == StorageBytes(e) and values fill the shape.
template <class T>
Tensor Make(ir::ElementType e, ir::Shape shape, const std::vector<T>& values) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(e, std::move(shape))).value();
  // memcpy's pointers must be non-null even for zero bytes; an empty vector's may not be.
  if (!values.empty()) std::memcpy(t.mutable_raw(), values.data(), values.size() * sizeof(T));
  return t;
}

// A rank-1 tensor of `values`.
template <class T>
Tensor Vec(ir::ElementType e, const std::vector<T>& values) {
  return Make(e, {static_cast<int64_t>(values.size())}, values);
}

// The storage of t as values of T.
template <class T>
std::vector<T> Read(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.num_elements()));
  if (!out.empty()) std::memcpy(out.data(), t.raw(), out.size() * sizeof(T));
  return out;
}

// A module holding `@main(operands) -> result { return name(operands) }`.
inline std::unique_ptr<ir::Module> OneOpModule(const std::string& name,
                                               const std::vector<ir::Type>& operands,
                                               const ir::Type& result,
                                               const std::vector<ir::NamedAttribute>& attrs) {
  auto module = std::make_unique<ir::Module>();
  auto f = std::make_unique<ir::Function>("main", ir::FunctionType{operands, {result}},
                                          ir::Location{});
  ir::Block& entry = f->body().AddBlock();
  std::vector<ir::Value> args;
  for (const ir::Type& t : operands) args.push_back(entry.AddArgument(t));
  auto op = std::make_unique<ir::Operation>(ir::OpName(name), ir::Location{});
  op->SetOperands(args);
  for (const auto& [key, value] : attrs) op->attrs().Set(key, value);
  ir::Value r = op->AddResult(result);
  entry.Append(std::move(op));
  auto ret = std::make_unique<ir::Operation>(ir::OpName("func.return"), ir::Location{});
  ret->SetOperands({r});
  entry.Append(std::move(ret));
  f->Renumber();
  module->AddFunction(std::move(f));
  return module;
}

// Verifies name(operands) -> result without running it.
inline Status Verify(const std::string& name, const std::vector<ir::Type>& operands,
                     const ir::Type& result, const std::vector<ir::NamedAttribute>& attrs = {}) {
  return verify::VerifyModule(*OneOpModule(name, operands, result, attrs));
}

// Verifies and runs name(args) -> result.
inline StatusOr<Tensor> Run(const std::string& name, const std::vector<Tensor>& args,
                            const ir::Type& result,
                            const std::vector<ir::NamedAttribute>& attrs = {},
                            EvalOptions options = {}) {
  std::vector<ir::Type> types;
  for (const Tensor& t : args) types.push_back(t.type());
  auto module = OneOpModule(name, types, result, attrs);
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*module));
  exec::Interpreter interpreter(*module, options);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, interpreter.Run("main", args));
  return out.at(0);
}

// Runs a binary op whose result has the operands' type.
inline StatusOr<Tensor> RunSame(const std::string& name, const std::vector<Tensor>& args) {
  return Run(name, args, args.at(0).type());
}

}  // namespace tpusim::ops::testing

#endif  // TPUSIM_OPS_TESTING_ELEMENTWISE_TEST_UTIL_H_
