// Test helpers for the simplification passes (inline, canonicalize,
// constant-fold, dce): golden rewrites written as StableHLO text.
#ifndef TPUSIM_COMPILER_SIMPLIFY_TEST_UTIL_H_
#define TPUSIM_COMPILER_SIMPLIFY_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "testing/test_util.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/compiler/pipeline.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/printer.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::compiler::testing {

using test::ParseVerified;

// `input` after `passes` (each verified after it), printed; "" on failure.
inline std::string AfterPasses(std::string_view input, std::initializer_list<PassFn> passes,
                               PassContext ctx = {}) {
  std::unique_ptr<ir::Module> module = ParseVerified(input);
  if (module == nullptr) return "";
  for (PassFn pass : passes) {
    Status s = pass(*module, ctx);
    EXPECT_TRUE(s.ok()) << s.ToString();
    Status verified = verify::VerifyModule(*module);
    EXPECT_TRUE(verified.ok()) << verified.ToString() << "\n" << ir::PrintModule(*module);
    if (!s.ok() || !verified.ok()) return "";
  }
  return ir::PrintModule(*module);
}

// `text` printed as the passes print (generic form, values renamed by
// position), so expectations can be written in the pretty form.
inline std::string Printed(std::string_view text) {
  std::unique_ptr<ir::Module> module = ParseVerified(text);
  return module == nullptr ? "" : ir::PrintModule(*module);
}

}  // namespace tpusim::compiler::testing

#endif  // TPUSIM_COMPILER_SIMPLIFY_TEST_UTIL_H_
