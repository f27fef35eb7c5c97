// Test helpers for the data-movement, indexing and reduction op tests:
// parse a small StableHLO program, verify it, and run its @main.
#ifndef TPUSIM_OPS_TESTING_MLIR_TEST_UTIL_H_
#define TPUSIM_OPS_TESTING_MLIR_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::ops::testing {

// Parses and verifies `text`; the first error of either.
inline Status VerifyMlir(std::string_view text) {
  auto module = frontend::ParseStableHlo(text, "test.mlir");
  if (!module.ok()) return module.status();
  return verify::VerifyModule(**module);
}

// Parses, verifies and runs @main of `text` on `args`.
inline StatusOr<std::vector<Tensor>> RunMlir(std::string_view text,
                                             const std::vector<Tensor>& args = {},
                                             EvalOptions options = {}) {
  auto module = frontend::ParseStableHlo(text, "test.mlir");
  if (!module.ok()) return module.status();
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(**module));
  exec::Interpreter interpreter(**module, options);
  return interpreter.Run("main", args);
}

// The storage of t as values of T (two per element for complex as float).
template <class T>
std::vector<T> Read(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.size_bytes()) / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), t.raw(), out.size() * sizeof(T));
  return out;
}

// A tensor of `type` whose storage holds `values`.
// REQUIRES: sizeof(T) is the element's storage size; values fill the shape.
template <class T>
Tensor Make(const ir::Type& type, const std::vector<T>& values) {
  Tensor t = Tensor::Allocate(type).value();
  if (!values.empty()) std::memcpy(t.mutable_raw(), values.data(), values.size() * sizeof(T));
  return t;
}

// Runs `text` and returns result `i` as values of T; empty on failure
// (after a test failure naming the error).
template <class T>
std::vector<T> RunAndRead(std::string_view text, int i = 0) {
  auto r = RunMlir(text);
  if (!r.ok()) {
    ADD_FAILURE() << r.status().ToString();
    return {};
  }
  return Read<T>((*r)[i]);
}

// Runs `text` and returns every result as values of T (a grid's results in
// process order); empty on failure, after a test failure naming the error.
template <class T>
std::vector<std::vector<T>> RunAndReadAll(std::string_view text) {
  auto r = RunMlir(text);
  if (!r.ok()) {
    ADD_FAILURE() << r.status().ToString();
    return {};
  }
  std::vector<std::vector<T>> out;
  for (const Tensor& t : *r) out.push_back(Read<T>(t));
  return out;
}

}  // namespace tpusim::ops::testing

#endif  // TPUSIM_OPS_TESTING_MLIR_TEST_UTIL_H_
