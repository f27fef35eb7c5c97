// Context (sequence) parallel attention: softmax(q k^T) v with the sequence
// split over 8 devices, as JAX lowers it with
//   jax.jit(attention, in_shardings=P(None, "seq"), out_shardings=P(None, "seq"))
// (batch, sequence, model) = (4, 1024, 128). Each device holds the queries
// of its 128 positions and attends to every key, so the partitioner gathers
// the keys and the values along the sequence: two all-gathers, and the
// softmax and both dots stay local.
//   tpusim run examples/sharding/context_parallel_attention.mlir --slice v5p-16 --random-inputs
module @jit_attention attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x1024x128xf32> {mhlo.sharding = "{devices=[1,8,1]<=[8]}"},
                         %arg1: tensor<4x1024x128xf32> {mhlo.sharding = "{devices=[1,8,1]<=[8]}"},
                         %arg2: tensor<4x1024x128xf32> {mhlo.sharding = "{devices=[1,8,1]<=[8]}"})
      -> (tensor<4x1024x128xf32> {jax.result_info = "", mhlo.sharding = "{devices=[1,8,1]<=[8]}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<4x1024x128xf32>, tensor<4x1024x128xf32>) -> tensor<4x1024x1024xf32>
    %cst = stablehlo.constant dense<0.0883883461> : tensor<4x1024x1024xf32>
    %1 = stablehlo.multiply %0, %cst : tensor<4x1024x1024xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.maximum across dimensions = [2] : (tensor<4x1024x1024xf32>, tensor<f32>) -> tensor<4x1024xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<4x1024xf32>) -> tensor<4x1024x1024xf32>
    %4 = stablehlo.subtract %1, %3 : tensor<4x1024x1024xf32>
    %5 = stablehlo.exponential %4 : tensor<4x1024x1024xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%5 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<4x1024x1024xf32>, tensor<f32>) -> tensor<4x1024xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<4x1024xf32>) -> tensor<4x1024x1024xf32>
    %8 = stablehlo.divide %5, %7 : tensor<4x1024x1024xf32>
    %9 = stablehlo.dot_general %8, %arg2, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x1024x1024xf32>, tensor<4x1024x128xf32>) -> tensor<4x1024x128xf32>
    return %9 : tensor<4x1024x128xf32>
  }
}
