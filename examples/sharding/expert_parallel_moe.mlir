// Expert parallel mixture of experts: 8 experts on 8 devices, as JAX
// lowers a switch-style MoE layer under Shardy with
//   mesh = Mesh(devices, ("expert",))
// The tokens come in 8 groups of 256, one group per device; each group's
// dispatch mask sends tokens to the experts' slots (capacity 64). The
// dispatched slots are constrained to be split by expert instead of by
// group, each device runs its expert's FFN, and the outputs go back to their
// groups: two all-to-alls, and nothing else moves.
//   tpusim run examples/sharding/expert_parallel_moe.mlir --slice v5p-16 --random-inputs
module @jit_moe attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["expert"=8]>
  func.func public @main(%arg0: tensor<8x256x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}]>},
                         %arg1: tensor<8x256x8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}, {}]>},
                         %arg2: tensor<8x512x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}]>},
                         %arg3: tensor<8x1024x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}]>})
      -> (tensor<8x256x512xf32> {jax.result_info = "", sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}]>}) {
    %0 = stablehlo.dot_general %arg1, %arg0, batching_dims = [0] x [0], contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x256x8x64xf32>, tensor<8x256x512xf32>) -> tensor<8x8x64x512xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"expert"}, {}, {}]> : tensor<8x8x64x512xf32>
    %2 = stablehlo.dot_general %1, %arg2, batching_dims = [1] x [0], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64x512xf32>, tensor<8x512x1024xf32>) -> tensor<8x8x64x1024xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<8x8x64x1024xf32>
    %3 = stablehlo.maximum %2, %cst : tensor<8x8x64x1024xf32>
    %4 = stablehlo.dot_general %3, %arg3, batching_dims = [0] x [0], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64x1024xf32>, tensor<8x1024x512xf32>) -> tensor<8x8x64x512xf32>
    %5 = sdy.sharding_constraint %4 <@mesh, [{}, {"expert"}, {}, {}]> : tensor<8x8x64x512xf32>
    %6 = stablehlo.dot_general %arg1, %5, batching_dims = [0] x [1], contracting_dims = [2, 3] x [0, 2], precision = [DEFAULT, DEFAULT] : (tensor<8x256x8x64xf32>, tensor<8x8x64x512xf32>) -> tensor<8x256x512xf32>
    return %6 : tensor<8x256x512xf32>
  }
}
