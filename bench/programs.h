// Programs the benchmarks share, generated as StableHLO text.
#ifndef TPUSIM_BENCH_PROGRAMS_H_
#define TPUSIM_BENCH_PROGRAMS_H_

#include <string>

namespace tpusim::bench {

// A transformer-like chain of `layers` blocks, 10 ops each: two matmuls,
// bias adds, a GELU-ish tanh, a residual and a reduction.
inline std::string LayeredProgram(int layers) {
  std::string s =
      "func.func public @main(%x: tensor<512x1024xbf16>, %w1: tensor<1024x4096xbf16>, "
      "%w2: tensor<4096x1024xbf16>, %b: tensor<512x4096xbf16>) -> tensor<512x1024xbf16> {\n"
      "  %zero = stablehlo.constant dense<0.0> : tensor<bf16>\n";
  std::string h = "%x";
  for (int i = 0; i < layers; ++i) {
    std::string p = "%l" + std::to_string(i) + "_";
    s += "  " + p + "0 = stablehlo.dot_general " + h + ", %w1, contracting_dims = [1] x [0] : "
         "(tensor<512x1024xbf16>, tensor<1024x4096xbf16>) -> tensor<512x4096xbf16>\n";
    s += "  " + p + "1 = stablehlo.add " + p + "0, %b : tensor<512x4096xbf16>\n";
    s += "  " + p + "2 = stablehlo.tanh " + p + "1 : tensor<512x4096xbf16>\n";
    s += "  " + p + "3 = stablehlo.multiply " + p + "2, " + p + "1 : tensor<512x4096xbf16>\n";
    s += "  " + p + "4 = stablehlo.dot_general " + p + "3, %w2, contracting_dims = [1] x [0] : "
         "(tensor<512x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<512x1024xbf16>\n";
    s += "  " + p + "5 = stablehlo.add " + p + "4, " + h + " : tensor<512x1024xbf16>\n";
    s += "  " + p + "6 = stablehlo.multiply " + p + "5, " + p + "5 : tensor<512x1024xbf16>\n";
    s += "  " + p + "7 = stablehlo.reduce(" + p + "6 init: %zero) applies stablehlo.add across "
         "dimensions = [1] : (tensor<512x1024xbf16>, tensor<bf16>) -> tensor<512xbf16>\n";
    s += "  " + p + "8 = stablehlo.broadcast_in_dim " + p + "7, dims = [0] : "
         "(tensor<512xbf16>) -> tensor<512x1024xbf16>\n";
    s += "  " + p + "9 = stablehlo.divide " + p + "5, " + p + "8 : tensor<512x1024xbf16>\n";
    h = p + "9";
  }
  return s + "  return " + h + " : tensor<512x1024xbf16>\n}\n";
}

}  // namespace tpusim::bench

#endif  // TPUSIM_BENCH_PROGRAMS_H_
