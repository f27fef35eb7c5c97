// Megatron tensor parallelism: two MLP blocks with residuals on a 2x4 mesh,
// as JAX lowers them under Shardy with
//   mesh = Mesh(devices.reshape(2, 4), ("data", "model"))
//   x: P("data"), w_in: P(None, "model") (column parallel), w_out: P("model") (row parallel)
// Each device holds a quarter of the hidden units of each block and half the
// batch. The hidden activations never move; each block's row-parallel dot
// leaves partial sums that one all-reduce over the 4 "model" devices adds up:
// one all-reduce per block.
//   tpusim run examples/sharding/megatron.mlir --slice v5e-8 --random-inputs
module @jit_mlp attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<64x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                         %arg1: tensor<1024x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                         %arg2: tensor<4096x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>},
                         %arg3: tensor<1024x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                         %arg4: tensor<4096x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>})
      -> (tensor<64x1024xbf16> {jax.result_info = "", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x1024xbf16>, tensor<1024x4096xbf16>) -> tensor<64x4096xbf16>
    %1 = stablehlo.tanh %0 : tensor<64x4096xbf16>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<64x1024xbf16>
    %3 = stablehlo.add %arg0, %2 : tensor<64x1024xbf16>
    %4 = stablehlo.dot_general %3, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x1024xbf16>, tensor<1024x4096xbf16>) -> tensor<64x4096xbf16>
    %5 = stablehlo.tanh %4 : tensor<64x4096xbf16>
    %6 = stablehlo.dot_general %5, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<64x1024xbf16>
    %7 = stablehlo.add %3, %6 : tensor<64x1024xbf16>
    return %7 : tensor<64x1024xbf16>
  }
}
