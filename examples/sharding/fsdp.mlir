// FSDP (ZeRO-3): the SGD step of data_parallel.mlir with the parameters
// split too, as JAX lowers it under Shardy with
//   mesh = Mesh(devices, ("fsdp",))
//   in_shardings=(P("fsdp"), P("fsdp"), P("fsdp"), P("fsdp")), out_shardings=(P("fsdp"), P("fsdp"), P())
// Each device stores an eighth of each weight. The partitioner gathers each
// weight once before its first use, and each gradient, summed over the
// batch, leaves in one reduce-scatter as the updated weight's eighth: two
// all-gathers, two reduce-scatters and the loss's all-reduce.
//   tpusim run examples/sharding/fsdp.mlir --slice v5p-16 --random-inputs
module @jit_step attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["fsdp"=8]>
  func.func public @main(%arg0: tensor<512x2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {}]>},
                         %arg1: tensor<2048x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {}]>},
                         %arg2: tensor<256x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {}]>},
                         %arg3: tensor<256x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {}]>})
      -> (tensor<512x2048xf32> {jax.result_info = "[0]", sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {}]>},
          tensor<2048x512xf32> {jax.result_info = "[1]", sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {}]>},
          tensor<f32> {jax.result_info = "[2]", sdy.sharding = #sdy.sharding<@mesh, []>}) {
    %0 = stablehlo.dot_general %arg2, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x512xf32>, tensor<512x2048xf32>) -> tensor<256x2048xf32>
    %1 = stablehlo.tanh %0 : tensor<256x2048xf32>
    %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<2048x512xf32>) -> tensor<256x512xf32>
    %3 = stablehlo.subtract %2, %arg3 : tensor<256x512xf32>
    %4 = stablehlo.multiply %3, %3 : tensor<256x512xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<256x512xf32>, tensor<f32>) -> tensor<f32>
    %6 = stablehlo.dot_general %1, %3, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<256x512xf32>) -> tensor<2048x512xf32>
    %7 = stablehlo.dot_general %3, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<256x512xf32>, tensor<2048x512xf32>) -> tensor<256x2048xf32>
    %8 = stablehlo.multiply %1, %1 : tensor<256x2048xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<256x2048xf32>
    %9 = stablehlo.subtract %cst_0, %8 : tensor<256x2048xf32>
    %10 = stablehlo.multiply %7, %9 : tensor<256x2048xf32>
    %11 = stablehlo.dot_general %arg2, %10, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x512xf32>, tensor<256x2048xf32>) -> tensor<512x2048xf32>
    %cst_1 = stablehlo.constant dense<1.000000e-03> : tensor<512x2048xf32>
    %12 = stablehlo.multiply %cst_1, %11 : tensor<512x2048xf32>
    %13 = stablehlo.subtract %arg0, %12 : tensor<512x2048xf32>
    %cst_2 = stablehlo.constant dense<1.000000e-03> : tensor<2048x512xf32>
    %14 = stablehlo.multiply %cst_2, %6 : tensor<2048x512xf32>
    %15 = stablehlo.subtract %arg1, %14 : tensor<2048x512xf32>
    return %13, %15, %5 : tensor<512x2048xf32>, tensor<2048x512xf32>, tensor<f32>
  }
}
