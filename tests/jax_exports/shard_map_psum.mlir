// shard_map under Shardy, as JAX lowers it (jax.jit(f).lower(x, b).as_text()):
//   mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
//   @partial(shard_map, mesh=mesh, in_specs=(P("data", "model"), P("model")),
//            out_specs=P("data", "model"))
//   def f(x, b):
//     return x * 2.0 + jax.lax.psum(x, "data") + b
// Each device holds a 4x8 block of x; the psum over "data" is an all_reduce
// among the 4 devices of each "model" column.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22data\22=4, \22model\22=2]>}"}, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<16x16xf32> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<16xf32> {jax.buffer_donor = true, mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}) -> (tensor<16x16xf32> {jax.result_info = "result", mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) {
    %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"data"}, {"model"}]>, <@mesh, [{"model"}]>] out_shardings=[<@mesh, [{"data"}, {"model"}]>] manual_axes={"data", "model"} (%arg2: tensor<4x8xf32>, %arg3: tensor<8xf32>) {
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
      %2 = stablehlo.multiply %arg2, %1 : tensor<4x8xf32>
      %3 = "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %7 = stablehlo.add %arg4, %arg5 : tensor<f32>
        stablehlo.return %7 : tensor<f32>
      }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      %4 = stablehlo.add %2, %3 : tensor<4x8xf32>
      %5 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
      %6 = stablehlo.add %4, %5 : tensor<4x8xf32>
      sdy.return %6 : tensor<4x8xf32>
    } : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
    return %0 : tensor<16x16xf32>
  }
}
