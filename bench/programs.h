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

// LayeredProgram as a global program for `data` x `model` devices, as JAX
// lowers a Megatron-style layer stack: the batch split `data` ways, the
// hidden units `model` ways (column- then row-parallel weights).
inline std::string GlobalLayeredProgram(int layers, int data, int model) {
  const std::string n = std::to_string(data * model), d = std::to_string(data),
                    m = std::to_string(model);
  const std::string by_model = "<=[" + d + "," + m + "]T(1,0) last_tile_dim_replicate}";
  std::string body = LayeredProgram(layers);
  auto annotate = [&](const std::string& type_end, const std::string& sharding) {
    const size_t at = body.find(type_end) + type_end.size();
    body.insert(at, " {mhlo.sharding = \"" + sharding + "\"}");
  };
  annotate("%x: tensor<512x1024xbf16>",
           "{devices=[" + d + ",1," + m + "]<=[" + n + "] last_tile_dim_replicate}");
  annotate("%w1: tensor<1024x4096xbf16>", "{devices=[1," + m + "," + d + "]" + by_model);
  annotate("%w2: tensor<4096x1024xbf16>", "{devices=[" + m + ",1," + d + "]" + by_model);
  annotate("%b: tensor<512x4096xbf16>", "{devices=[" + d + "," + m + "]<=[" + n + "]}");
  return "module @global attributes {mhlo.num_partitions = " + n +
         " : i32, mhlo.num_replicas = 1 : i32} {\n" + body + "}\n";
}

// LayeredProgram as one device's part of a `devices`-way SPMD program:
// after each block's second matmul a tensor-parallel all_reduce over groups
// of 8 neighbouring devices, and every 10th block a data-parallel all_reduce
// over every device (11 ops a block on average).
inline std::string ShardedLayeredProgram(int layers, int devices) {
  std::string groups_of_8 = "[", all = "[[";
  for (int d = 0; d < devices; ++d) {
    if (d % 8 == 0) groups_of_8 += std::string(d ? ", " : "") + "[";
    groups_of_8 += std::to_string(d) + (d % 8 == 7 ? "]" : ", ");
    all += std::to_string(d) + (d + 1 < devices ? ", " : "]]");
  }
  groups_of_8 += "]";
  auto all_reduce = [](const std::string& result, const std::string& operand,
                       const std::string& groups, int n, int rows) {
    const std::string t = "tensor<512x1024xbf16>";
    return "  " + result + " = \"stablehlo.all_reduce\"(" + operand +
           ") <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, "
           "replica_groups = dense<" +
           groups + "> : tensor<" + std::to_string(rows) + "x" + std::to_string(n) +
           "xi64>, use_global_device_ids}> ({\n"
           "  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):\n"
           "    %s = stablehlo.add %a, %b : tensor<bf16>\n"
           "    stablehlo.return %s : tensor<bf16>\n"
           "  }) : (" +
           t + ") -> " + t + "\n";
  };
  std::string body = LayeredProgram(layers);
  std::string out = "module @sharded attributes {mhlo.num_partitions = " + std::to_string(devices) +
                    " : i32, mhlo.num_replicas = 1 : i32} {\n";
  for (int i = 0; i < layers; ++i) {
    // Route each block's second matmul through the all_reduce(s).
    const std::string p = "%l" + std::to_string(i) + "_";
    const std::string def = "  " + p + "4 = ";
    size_t at = body.find(def);
    size_t end = body.find('\n', at) + 1;
    std::string line = body.substr(at, end - at);
    line.replace(line.find(p + "4 ="), p.size() + 1, p + "4a");
    std::string inserted = line + all_reduce(p + "4b", p + "4a", groups_of_8, 8, devices / 8);
    inserted += i % 10 == 0
                    ? all_reduce(p + "4", p + "4b", all, devices, 1)
                    : "  " + p + "4 = stablehlo.negate " + p + "4b : tensor<512x1024xbf16>\n";
    body.replace(at, end - at, inserted);
  }
  return out + body + "}\n";
}

}  // namespace tpusim::bench

#endif  // TPUSIM_BENCH_PROGRAMS_H_
