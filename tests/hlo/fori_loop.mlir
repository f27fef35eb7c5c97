// Ten steps of x <- tanh(W x), as JAX prints a jax.lax.fori_loop: the
// counter and the carried values are the while's operands, the bound a
// constant in the condition. tests/hlo/fori_loop.hlo is the same program as
// XLA dumps it, the loop state one tuple.
module @jit_iterate attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8xf32>) -> (tensor<8xf32> {jax.result_info = ""}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:3 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0, %iterArg_1 = %arg1) : tensor<i32>, tensor<8x8xf32>, tensor<8xf32>
     cond {
      %c_2 = stablehlo.constant dense<10> : tensor<i32>
      %1 = stablehlo.compare  LT, %iterArg, %c_2,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %1 = stablehlo.dot_general %iterArg_0, %iterArg_1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %2 = stablehlo.tanh %1 : tensor<8xf32>
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %3 = stablehlo.add %iterArg, %c_2 : tensor<i32>
      stablehlo.return %3, %iterArg_0, %2 : tensor<i32>, tensor<8x8xf32>, tensor<8xf32>
    }
    return %0#2 : tensor<8xf32>
  }
}
