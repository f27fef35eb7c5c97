// A global program with a manual region as JAX lowers it under Shardy:
//   mesh = Mesh(devices.reshape(4, 2), ("data", "model"))
//   shard_map(lambda a, b: a + jax.lax.psum(a, "data") + b, mesh,
//             in_specs=(P("data", "model"), P("model")), out_specs=P("data", "model"))
// Device 2 d + m holds tile (d, m) of x, a 128x128 block, and half m of b;
// the body adds to its block the sum of the blocks of its column (the
// devices of its "model" index) and its half of b.
//   tpusim run examples/shard_map_sdy.mlir --slice v5e-8 --random-inputs
module @shard_map_sdy attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%x: tensor<512x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>},
                         %b: tensor<256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>})
      -> (tensor<512x256xf32> {jax.result_info = "", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) {
    %0 = sdy.manual_computation(%x, %b) in_shardings=[<@mesh, [{"data"}, {"model"}]>, <@mesh, [{"model"}]>] out_shardings=[<@mesh, [{"data"}, {"model"}]>] manual_axes={"data", "model"} (%a: tensor<128x128xf32>, %c: tensor<128xf32>) {
      %s = "stablehlo.all_reduce"(%a) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %t = stablehlo.add %p, %q : tensor<f32>
        stablehlo.return %t : tensor<f32>
      }) : (tensor<128x128xf32>) -> tensor<128x128xf32>
      %1 = stablehlo.add %a, %s : tensor<128x128xf32>
      %2 = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<128xf32>) -> tensor<128x128xf32>
      %3 = stablehlo.add %1, %2 : tensor<128x128xf32>
      sdy.return %3 : tensor<128x128xf32>
    } : (tensor<512x256xf32>, tensor<256xf32>) -> tensor<512x256xf32>
    return %0 : tensor<512x256xf32>
  }
}
