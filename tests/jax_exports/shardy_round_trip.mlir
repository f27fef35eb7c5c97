// A shard_map over a 2-device mesh in Shardy's round-trip form, as JAX
// exports serialized with Shardy from 2025-03 to 2025-07 carry it: meshes,
// shardings and the manual computation as strings in
// mhlo.frontend_attributes, the shard_map body a function called between
// xla.sdy.GlobalToLocalShape and xla.sdy.LocalToGlobalShape, result
// shardings on xla.sdy.FuncResultSharding calls. f(x) = (s * s, s) where s
// is psum over the mesh of x's row halves.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22a\22=2]>}"}, mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x4xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22a\22}, {}]>"}, mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> (tensor<8x4xf32> {jax.result_info = "", mhlo.sharding = "{devices=[2,1]<=[2]}"}, tensor<8x4xf32> {jax.result_info = "", mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {}]>]>"}, mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%0) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22a\22}>"}} : (tensor<8x4xf32>) -> tensor<4x4xf32>
    %2 = call @xla.sdy.manual_computation_body(%1) {mhlo.frontend_attributes = {inlineable = "false"}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %3 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%2) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.manual_axes = "#sdy<manual_axes{\22a\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {}]>]>"}} : (tensor<4x4xf32>) -> tensor<8x4xf32>
    %4 = stablehlo.multiply %3, %3 : tensor<8x4xf32>
    %5 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%4) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {}]>]>"}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %6 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%3) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{}, {}]>]>"}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %5, %6 : tensor<8x4xf32>, tensor<8x4xf32>
  }
  func.func private @xla.sdy.manual_computation_body(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}
