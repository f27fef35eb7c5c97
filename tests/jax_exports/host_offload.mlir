// Host offloading inside jit, as JAX lowers jax.device_put to a memory kind
// (jax.jit(f, out_shardings=...).lower(x).as_text()):
//   s_host = SingleDeviceSharding(jax.devices()[0], memory_kind="pinned_host")
//   s_dev = s_host.with_memory_kind("device")
//   def f(x):
//     y = jnp.tanh(x)
//     saved = jax.device_put(y, s_host)        # offload to host memory
//     z = jax.device_put(saved, s_dev) * 2.0   # and bring it back
//     return z, saved
// The values are unchanged; each move is timed over the host link.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<512x256xf32> {mhlo.layout_mode = "default", mhlo.memory_kind = "device", mhlo.sharding = "{maximal device=0}"}) -> (tensor<512x256xf32> {jax.result_info = "result[0]", mhlo.layout_mode = "default", mhlo.memory_kind = "device", mhlo.sharding = "{maximal device=0}"}, tensor<512x256xf32> {jax.result_info = "result[1]", mhlo.layout_mode = "default", mhlo.memory_kind = "pinned_host", mhlo.sharding = "{maximal device=0}"}) {
    %0 = stablehlo.tanh %arg0 : tensor<512x256xf32>
    %1 = stablehlo.custom_call @annotate_device_placement(%0) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}} : (tensor<512x256xf32>) -> tensor<512x256xf32>
    %2 = stablehlo.custom_call @annotate_device_placement(%1) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "device"}} : (tensor<512x256xf32>) -> tensor<512x256xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<512x256xf32>
    return %4, %1 : tensor<512x256xf32>, tensor<512x256xf32>
  }
}
