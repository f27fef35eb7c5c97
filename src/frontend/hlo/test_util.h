// Helpers for the HLO front end's tests: parse, verify, run.
#ifndef TPUSIM_FRONTEND_HLO_TEST_UTIL_H_
#define TPUSIM_FRONTEND_HLO_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/hlo/parser.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::frontend::hlo_test {

// Parses and verifies `text`; null (with a test failure) on error.
inline std::unique_ptr<ir::Module> MustParse(std::string_view text) {
  auto m = ParseHlo(text, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return nullptr;
  Status verified = verify::VerifyModule(**m);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  return verified.ok() ? std::move(m).value() : nullptr;
}

template <typename T>
Tensor Make(ir::ElementType e, ir::Shape shape, const std::vector<T>& values) {
  Tensor t = *Tensor::Allocate(ir::Type::Tensor(e, std::move(shape)));
  if (!values.empty()) std::memcpy(t.mutable_raw(), values.data(), values.size() * sizeof(T));
  return t;
}

inline Tensor F32(ir::Shape shape, const std::vector<float>& values) {
  return Make(ir::ElementType::kF32, std::move(shape), values);
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

// Runs @main of `m` on `args`.
inline StatusOr<std::vector<Tensor>> RunMain(const ir::Module& m, std::vector<Tensor> args) {
  exec::Interpreter interp(m, {});
  return interp.Run("main", args);
}

// The first op of @main's entry block named `name`, or null.
inline const ir::Operation* FindOp(const ir::Module& m, std::string_view name) {
  const ir::Function* f = m.Lookup("main");
  if (f == nullptr) return nullptr;
  for (const auto& op : f->entry().ops()) {
    if (op->name_str() == name) return op.get();
  }
  return nullptr;
}

}  // namespace tpusim::frontend::hlo_test

#endif  // TPUSIM_FRONTEND_HLO_TEST_UTIL_H_
