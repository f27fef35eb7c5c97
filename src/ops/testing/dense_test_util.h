// Helpers for the dense ops' unit tests: run a StableHLO snippet and move
// values in and out of tensors.
#ifndef TPUSIM_OPS_TESTING_DENSE_TEST_UTIL_H_
#define TPUSIM_OPS_TESTING_DENSE_TEST_UTIL_H_

#include <cstring>
#include <string_view>
#include <vector>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/tensor/tensor.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::ops::testing {

// Parses and verifies `text`, then runs its @main on `args`.
inline StatusOr<std::vector<Tensor>> RunMain(std::string_view text, std::vector<Tensor> args,
                                             EvalOptions options = {}) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                          frontend::ParseStableHlo(text, "test.mlir"));
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*module));
  exec::Interpreter interp(*module, options);
  return interp.Run("main", args);
}

// The status of parsing and verifying `text` (no evaluation).
inline Status VerifyText(std::string_view text) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                          frontend::ParseStableHlo(text, "test.mlir"));
  return verify::VerifyModule(*module);
}

// A tensor of `type` holding `values` (storage type T, row-major).
template <typename T>
Tensor MakeTensor(ir::ElementType e, ir::Shape shape, const std::vector<T>& values) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(e, std::move(shape))).value();
  if (!values.empty()) std::memcpy(t.mutable_raw(), values.data(), values.size() * sizeof(T));
  return t;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

}  // namespace tpusim::ops::testing

#endif  // TPUSIM_OPS_TESTING_DENSE_TEST_UTIL_H_
