// Row softmax of a 16x128 batch, as JAX prints jax.jit(jax.nn.softmax).lower(x).as_text()
// (without the max's stop_gradient noise). tests/hlo/softmax.hlo is the same
// program as XLA dumps it.
module @jit_softmax attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x128xf32>) -> (tensor<16x128xf32> {jax.result_info = ""}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<16x128xf32>, tensor<f32>) -> tensor<16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<16xf32>) -> tensor<16x128xf32>
    %2 = stablehlo.subtract %arg0, %1 : tensor<16x128xf32>
    %3 = stablehlo.exponential %2 : tensor<16x128xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<16x128xf32>, tensor<f32>) -> tensor<16xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<16xf32>) -> tensor<16x128xf32>
    %6 = stablehlo.divide %3, %5 : tensor<16x128xf32>
    return %6 : tensor<16x128xf32>
  }
}
