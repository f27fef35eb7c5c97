// Causal attention scores: a batched bf16 matmul accumulated in f32, scaled,
// and masked above the diagonal with iota and select. tests/hlo/causal_scores.hlo
// is the same program as XLA dumps it.
module @jit_scores attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x16x64xbf16>, %arg1: tensor<2x16x64xbf16>) -> (tensor<2x16x16xf32> {jax.result_info = ""}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xbf16>, tensor<2x16x64xbf16>) -> tensor<2x16x16xf32>
    %cst = stablehlo.constant dense<1.250000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x16x16xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<2x16x16xf32>
    %3 = stablehlo.iota dim = 1 : tensor<16x16xi32>
    %4 = stablehlo.iota dim = 0 : tensor<16x16xi32>
    %5 = stablehlo.compare  LE, %3, %4,  SIGNED : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %6 = stablehlo.broadcast_in_dim %5, dims = [1, 2] : (tensor<16x16xi1>) -> tensor<2x16x16xi1>
    %cst_0 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x16x16xf32>
    %8 = stablehlo.select %6, %2, %7 : tensor<2x16x16xi1>, tensor<2x16x16xf32>
    return %8 : tensor<2x16x16xf32>
  }
}
