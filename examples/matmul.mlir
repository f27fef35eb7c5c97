// The Cloud TPU tutorial's first program, as JAX prints it:
//   x = jax.random.normal(key, (2048, 2048)); jax.jit(lambda x, y: x @ y)
module @jit_matmul attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2048x2048xf32> {mhlo.layout_mode = "default"}, %arg1: tensor<2048x2048xf32> {mhlo.layout_mode = "default"}) -> (tensor<2048x2048xf32> {jax.result_info = "result", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
    return %0 : tensor<2048x2048xf32>
  }
}
