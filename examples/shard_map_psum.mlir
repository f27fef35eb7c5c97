// A global program with a manual region, as JAX lowers
//   shard_map(lambda a: a + jax.lax.psum(a, "i"), mesh, in_specs=P("i"), out_specs=P("i"))
// under GSPMD: the entry works on the whole 512x256 array, Sharding and
// SPMDFullToShardShape cut it into each of the 8 devices' 64-row tiles, the
// body adds the sum of all tiles to its own, and SPMDShardToFullShape puts
// the tiles back together.
//   tpusim run examples/shard_map_psum.mlir --slice v5e-8 --random-inputs
module @shard_map_psum attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<512x256xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"})
      -> (tensor<512x256xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) {
    %0 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{devices=[8,1]<=[8]}"} : (tensor<512x256xf32>) -> tensor<512x256xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<512x256xf32>) -> tensor<64x256xf32>
    %2 = call @shmap_body(%1) : (tensor<64x256xf32>) -> tensor<64x256xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<64x256xf32>) -> tensor<64x256xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[8,1]<=[8]}"} : (tensor<64x256xf32>) -> tensor<512x256xf32>
    return %4 : tensor<512x256xf32>
  }
  func.func private @shmap_body(%a: tensor<64x256xf32>) -> tensor<64x256xf32> {
    %s = "stablehlo.all_reduce"(%a) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %t = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<64x256xf32>) -> tensor<64x256xf32>
    %r = stablehlo.add %a, %s : tensor<64x256xf32>
    return %r : tensor<64x256xf32>
  }
}
