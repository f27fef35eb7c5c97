// HLO text in both directions: printing a module, parsing the text and
// printing again gives the same text, and the parsed module computes what
// the original did. Programs: small ones covering the constructs HLO spells
// differently (tuples, loops, conditionals, calls), examples/mlp_step.mlir,
// and every conformance program whose ops all have HLO forms. Programs
// written in both formats (tests/hlo/*.{mlir,hlo}, examples/mlp_step.*)
// compute the same results and take the same time.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/test_util.h"
#include "tpusim/compiler/pipeline.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/frontend/hlo/parser.h"
#include "tpusim/frontend/hlo/printer.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/hw/chip.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/timing/timing.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::frontend {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;

// Deterministic, varied arguments for `f`'s parameters: small integers
// (valid indices), alternating booleans, multiples of 0.25 around zero.
StatusOr<std::vector<Tensor>> Arguments(const ir::Function& f) {
  std::vector<Tensor> args;
  for (const ir::Type& t : f.type().inputs) {
    if (!t.is_tensor()) return Status(StatusCode::kUnimplemented, "non-tensor parameter");
    TPUSIM_ASSIGN_OR_RETURN(Tensor a, Tensor::Allocate(t));
    const int width = ir::StorageBytes(t.element());
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      uint8_t* p = a.mutable_raw() + i * width;
      if (ir::IsFloat(t.element()) || ir::IsComplex(t.element())) {
        numerics::StoreDouble(t.element(), 0.25 * static_cast<double>(i % 9) - 1.0, p);
      } else {
        numerics::StoreInt64(t.element(), i % (ir::IsBool(t.element()) ? 2 : 3), p);
      }
    }
    args.push_back(std::move(a));
  }
  return args;
}

StatusOr<std::vector<Tensor>> RunMain(const ir::Module& m, const std::vector<Tensor>& args) {
  exec::Interpreter interpreter(m, ops::EvalOptions{});
  return interpreter.Run("main", args);
}

// `text`, printed from `original`, parsed back (`parsed`) and printed again
// reads the same, and the parsed module verifies and gives the same results
// on the same arguments. Returns the first failure.
Status CheckParsed(const ir::Module& original, const std::string& text, const ir::Module& parsed) {
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(parsed));
  TPUSIM_ASSIGN_OR_RETURN(std::string again, PrintHlo(parsed));
  if (again != text) {
    return Status(StatusCode::kInternal, "printing the parsed module differs:\n" + text +
                                             "\n---- reprinted ----\n" + again);
  }
  const ir::Function* main = original.Lookup("main");
  if (main == nullptr) return Status(StatusCode::kInvalidArgument, "no @main");
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> args, Arguments(*main));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> want, RunMain(original, args));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> got, RunMain(parsed, args));
  if (got.size() != want.size()) return Status(StatusCode::kInternal, "result counts differ");
  for (size_t i = 0; i < want.size(); ++i) {
    if (!got[i].BitwiseEquals(want[i])) {
      return Status(StatusCode::kInternal, "result " + std::to_string(i) + " differs: " +
                                               got[i].ToString() + " vs " + want[i].ToString());
    }
  }
  return Status::Ok();
}

// Prints `original`, parses the text back, and checks as above.
Status CheckRoundTrip(const ir::Module& original, const std::string& what) {
  TPUSIM_ASSIGN_OR_RETURN(std::string text, PrintHlo(original));
  auto parsed = ParseHlo(text, what + ".hlo");
  if (!parsed.ok()) {
    return Status(parsed.status().code(), parsed.status().ToString() + "\nin:\n" + text);
  }
  return CheckParsed(original, text, **parsed);
}

StatusOr<std::unique_ptr<ir::Module>> ParseVerified(std::string_view mlir,
                                                    const std::string& name) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> m, ParseStableHlo(mlir, name));
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*m));
  return m;
}

void ExpectRoundTrip(std::string_view mlir, const std::string& name) {
  auto m = ParseVerified(mlir, name);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Status s = CheckRoundTrip(**m, name);
  EXPECT_TRUE(s.ok()) << name << ": " << s.ToString();
}

TEST(HloRoundTripTest, LoopsAndConditionals) {
  ExpectRoundTrip(R"(
func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<i1>, %arg2: tensor<i32>) -> (tensor<4xf32>, tensor<i32>, tensor<4xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c5 = stablehlo.constant dense<5> : tensor<i32>
  %w:2 = stablehlo.while(%i = %c0, %x = %arg0) : tensor<i32>, tensor<4xf32>
    cond {
      %p = stablehlo.compare LT, %i, %c5 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c1 : tensor<i32>
      %y = stablehlo.add %x, %arg0 : tensor<4xf32>
      stablehlo.return %n, %y : tensor<i32>, tensor<4xf32>
    }
  %r = "stablehlo.if"(%arg1) ({
    %z = stablehlo.negate %w#1 : tensor<4xf32>
    stablehlo.return %z : tensor<4xf32>
  }, {
    %k = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    stablehlo.return %k : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  %cc:2 = "stablehlo.case"(%arg2) ({
    stablehlo.return %c0, %r : tensor<i32>, tensor<4xf32>
  }, {
    %t = stablehlo.add %w#0, %c1 : tensor<i32>
    stablehlo.return %t, %arg0 : tensor<i32>, tensor<4xf32>
  }) : (tensor<i32>) -> (tensor<i32>, tensor<4xf32>)
  return %r, %cc#0, %cc#1 : tensor<4xf32>, tensor<i32>, tensor<4xf32>
})",
                  "control");
}

TEST(HloRoundTripTest, VariadicOpsCallsAndBarriers) {
  ExpectRoundTrip(R"(
func.func @main(%arg0: tensor<6xf32>, %arg1: tensor<6xi32>) -> (tensor<6xf32>, tensor<6xi32>, tensor<f32>, tensor<i32>, tensor<6xf32>) {
  %s:2 = "stablehlo.sort"(%arg0, %arg1) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %lt = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<6xf32>, tensor<6xi32>) -> (tensor<6xf32>, tensor<6xi32>)
  %f0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %m:2 = stablehlo.reduce(%arg0 init: %f0), (%arg1 init: %i0) across dimensions = [0] : (tensor<6xf32>, tensor<6xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
    reducer(%x: tensor<f32>, %y: tensor<f32>) (%u: tensor<i32>, %v: tensor<i32>) {
      %mx = stablehlo.maximum %x, %y : tensor<f32>
      %sm = stablehlo.add %u, %v : tensor<i32>
      stablehlo.return %mx, %sm : tensor<f32>, tensor<i32>
    }
  %b:2 = stablehlo.optimization_barrier %s#0, %m#1 : tensor<6xf32>, tensor<i32>
  %c = func.call @twice(%b#0) : (tensor<6xf32>) -> tensor<6xf32>
  return %s#0, %s#1, %m#0, %b#1, %c : tensor<6xf32>, tensor<6xi32>, tensor<f32>, tensor<i32>, tensor<6xf32>
}
func.func private @twice(%arg0: tensor<6xf32>) -> tensor<6xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<6xf32>
  return %0 : tensor<6xf32>
})",
                  "variadic");
}

TEST(HloRoundTripTest, IndexingAndWindows) {
  ExpectRoundTrip(R"(
func.func @main(%arg0: tensor<5x3xf32>, %arg1: tensor<2x1xi32>, %arg2: tensor<1x6x6x2xf32>, %arg3: tensor<3x3x2x4xf32>) -> (tensor<2x3xf32>, tensor<5x3xf32>, tensor<1x3x3x4xf32>, tensor<1x3x3x2xf32>, tensor<3x5xf32>) {
  %0 = "stablehlo.gather"(%arg0, %arg1) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  %1 = "stablehlo.scatter"(%arg0, %arg1, %0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %2 = stablehlo.convolution(%arg2, %arg3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %3 = "stablehlo.reduce_window"(%arg2, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<1x6x6x2xf32>, tensor<f32>) -> tensor<1x3x3x2xf32>
  %4 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %5 = stablehlo.slice %4 [0:3, 0:5:1] : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %6 = stablehlo.pad %5, %z, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
  return %0, %1, %2, %3, %6 : tensor<2x3xf32>, tensor<5x3xf32>, tensor<1x3x3x4xf32>, tensor<1x3x3x2xf32>, tensor<3x5xf32>
})",
                  "indexing");
}

TEST(HloRoundTripTest, WindowsMapsRandomBitsAndCustomCalls) {
  ExpectRoundTrip(R"(
func.func @main(%arg0: tensor<4x6xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<2xui64>, %arg3: tensor<i32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<2xui64>, tensor<3xui32>, tensor<4x6xf32>, tensor<4x6xi32>, tensor<4x6xbf16>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%arg0, %arg1, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %ge = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  %1 = "stablehlo.map"(%arg0, %0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %2:2 = stablehlo.rng_bit_generator %arg2, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3xui32>)
  %3 = stablehlo.reverse %1, dims = [1] : tensor<4x6xf32>
  %4 = stablehlo.dynamic_update_slice %3, %arg1, %arg3, %arg3 : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>
  %5 = stablehlo.reduce_precision %4, format = e5m2 : tensor<4x6xf32>
  %6 = stablehlo.clamp %z, %5, %arg0 : (tensor<f32>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %7 = stablehlo.bitcast_convert %6 : (tensor<4x6xf32>) -> tensor<4x6xi32>
  %8 = stablehlo.convert %6 : (tensor<4x6xf32>) -> tensor<4x6xbf16>
  stablehlo.custom_call @check.expect_close(%6, %6) {has_side_effect = true} : (tensor<4x6xf32>, tensor<4x6xf32>) -> ()
  return %1, %3, %2#0, %2#1, %6, %7, %8 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<2xui64>, tensor<3xui32>, tensor<4x6xf32>, tensor<4x6xi32>, tensor<4x6xbf16>
})",
                  "windows");
}

// Collectives print and parse back stably; one process runs them as well.
TEST(HloRoundTripTest, Collectives) {
  ExpectRoundTrip(R"(
module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %0 = "stablehlo.all_reduce"(%arg0) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0]]> : tensor<1x1xi64>, use_global_device_ids} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.all_gather"(%0) {all_gather_dim = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.reduce_scatter"(%1) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>, scatter_dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "stablehlo.all_to_all"(%2) {concat_dimension = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>, split_count = 1 : i64, split_dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "stablehlo.collective_permute"(%3) {source_target_pairs = dense<[[0, 0]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
})",
                  "collectives");
}

TEST(HloRoundTripTest, LinalgFftAndComplex) {
  ExpectRoundTrip(R"(
func.func @main(%arg0: tensor<3x3xf32>, %arg1: tensor<3x2xf32>, %arg2: tensor<8xf32>) -> (tensor<3x2xf32>, tensor<3x3xf32>, tensor<5xcomplex<f32>>, tensor<8xf32>, tensor<3xf32>) {
  %0 = "stablehlo.triangular_solve"(%arg0, %arg1) {left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = true} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %1 = stablehlo.dot %arg0, %arg0 : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %2 = stablehlo.fft %arg2, type = RFFT, length = [8] : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
  %3 = stablehlo.real %2 : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
  %4 = stablehlo.imag %2 : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
  %5 = stablehlo.complex %3, %4 : tensor<5xcomplex<f32>>
  %6 = stablehlo.fft %5, type = IRFFT, length = [8] : (tensor<5xcomplex<f32>>) -> tensor<8xf32>
  %7 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0] x [0] : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %8 = stablehlo.slice %7 [0:3, 1:2] : (tensor<3x2xf32>) -> tensor<3x1xf32>
  %9 = stablehlo.reshape %8 : (tensor<3x1xf32>) -> tensor<3xf32>
  return %0, %1, %5, %6, %9 : tensor<3x2xf32>, tensor<3x3xf32>, tensor<5xcomplex<f32>>, tensor<8xf32>, tensor<3xf32>
})",
                  "linalg");
}

TEST(HloRoundTripTest, CallsAndBranchesWithoutCaptures) {
  ExpectRoundTrip(R"(
func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = func.call @double(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "stablehlo.case"(%arg1) ({
    %c = stablehlo.constant dense<1.0> : tensor<4xf32>
    stablehlo.return %c : tensor<4xf32>
  }, {
    stablehlo.return %0 : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
func.func private @double(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
})",
                  "calls");
}

TEST(HloRoundTripTest, MlpStep) {
  const std::string text = ReadFile(fs::path(TPUSIM_SOURCE_DIR) / "examples/mlp_step.mlir");
  ASSERT_FALSE(text.empty());
  ExpectRoundTrip(text, "mlp_step");
}

// After the compiler's passes: fusions, copies and layouts print as XLA's
// fusion computations, copy instructions and minor_to_major layouts, and
// come back the same.
TEST(HloRoundTripTest, CompiledMlpStep) {
  auto m = ParseVerified(ReadFile(fs::path(TPUSIM_SOURCE_DIR) / "examples/mlp_step.mlir"),
                         "mlp_step.mlir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto chip = hw::FindPreset("v5e");
  ASSERT_TRUE(chip.ok()) << chip.status().ToString();
  auto passes = compiler::SelectPasses("all");
  ASSERT_TRUE(passes.ok()) << passes.status().ToString();
  compiler::PassContext ctx{.chip = &*chip, .entry = "main"};
  ASSERT_TRUE(compiler::RunPipeline(**m, {.passes = *passes}, ctx).ok());
  auto text = PrintHlo(**m);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find(" fusion("), std::string::npos) << *text;
  Status s = CheckRoundTrip(**m, "compiled_mlp_step");
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// Every conformance program that verifies and whose ops all have HLO forms
// (and the HLO parser reads) round-trips; at least `kMinimum` of them must,
// so that the test cannot pass by skipping everything.
TEST(HloRoundTripTest, ConformancePrograms) {
  constexpr int kMinimum = 200;
  const fs::path root = fs::path(TPUSIM_SHARED_DIR) / "conformance/stablehlo/testdata";
  ASSERT_TRUE(fs::exists(root)) << root;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.path().extension() == ".mlir") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  int checked = 0;
  std::string skipped;
  for (const fs::path& file : files) {
    auto m = ParseVerified(ReadFile(file), file.string());
    if (!m.ok()) continue;  // unsupported input: the conformance test's business
    auto text = PrintHlo(**m);
    auto parsed = text.ok() ? ParseHlo(*text, file.stem().string() + ".hlo") : text.status();
    if (!parsed.ok()) {
      // Only "not supported" may stop a program: by the printer (an op
      // without HLO form) or by the parser (an HLO construct it lacks).
      EXPECT_EQ(parsed.status().code(), StatusCode::kUnimplemented)
          << file << ": " << parsed.status().ToString();
      skipped +=
          "\n  " + file.filename().string() + ": " + parsed.status().message().substr(0, 120);
      continue;
    }
    Status s = CheckParsed(**m, *text, **parsed);
    EXPECT_TRUE(s.ok()) << file << ": " << s.ToString().substr(0, 4000);
    ++checked;
  }
  EXPECT_GE(checked, kMinimum) << "skipped:" << skipped;
  std::cout << "[ INFO     ] " << checked << " conformance programs round-trip; skipped:" << skipped
            << "\n";
}

// Programs written in both formats compute the same results on the same
// arguments and take the same time on v5e.
TEST(HloCrossFormatTest, SameResultsAndTimes) {
  const fs::path source(TPUSIM_SOURCE_DIR);
  std::vector<std::pair<fs::path, fs::path>> pairs = {
      {source / "examples/mlp_step.mlir", source / "examples/mlp_step.hlo"}};
  for (const auto& entry : fs::directory_iterator(source / "tests/hlo")) {
    if (entry.path().extension() != ".hlo") continue;
    pairs.push_back({fs::path(entry.path()).replace_extension(".mlir"), entry.path()});
  }
  std::sort(pairs.begin() + 1, pairs.end());
  ASSERT_GE(pairs.size(), 4u);
  auto chip = hw::FindPreset("v5e");
  ASSERT_TRUE(chip.ok()) << chip.status().ToString();
  for (const auto& [mlir_path, hlo_path] : pairs) {
    SCOPED_TRACE(hlo_path.string());
    auto mlir = ParseVerified(ReadFile(mlir_path), mlir_path.string());
    ASSERT_TRUE(mlir.ok()) << mlir.status().ToString();
    auto hlo = ParseHlo(ReadFile(hlo_path), hlo_path.string());
    ASSERT_TRUE(hlo.ok()) << hlo.status().ToString();
    ASSERT_TRUE(verify::VerifyModule(**hlo).ok());

    auto args = Arguments(*(*mlir)->Lookup("main"));
    ASSERT_TRUE(args.ok()) << args.status().ToString();
    auto want = RunMain(**mlir, *args);
    auto got = RunMain(**hlo, *args);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i) {
      EXPECT_TRUE((*got)[i].BitwiseEquals((*want)[i]))
          << "result " << i << ": " << (*got)[i].ToString() << " vs " << (*want)[i].ToString();
    }

    auto mlir_time = timing::TimeStatically(**mlir, "main", *chip, {});
    auto hlo_time = timing::TimeStatically(**hlo, "main", *chip, {});
    ASSERT_TRUE(mlir_time.ok()) << mlir_time.status().ToString();
    ASSERT_TRUE(hlo_time.ok()) << hlo_time.status().ToString();
    EXPECT_GT(mlir_time->total_seconds(), 0);
    EXPECT_DOUBLE_EQ(hlo_time->total_seconds(), mlir_time->total_seconds());
  }
}

}  // namespace
}  // namespace tpusim::frontend
