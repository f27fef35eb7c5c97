// jax.pure_callback on TPU, as JAX lowers it (jax.jit(f).lower(x).as_text()):
//   def host_sort(v):
//     return np.sort(v)
//   def f(x):
//     y = jax.pure_callback(host_sort, jax.ShapeDtypeStruct(x.shape, x.dtype), x * 2.0)
//     return y + 1.0
// The operand goes to the host over a send and the result comes back over a
// recv, both named by the callback. tpusim cannot call into Python: running
// it fails naming host_sort; --timing-only prices the round trip.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4096xf32> {mhlo.layout_mode = "default"}) -> (tensor<4096xf32> {jax.result_info = "result", mhlo.layout_mode = "default"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4096xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<4096xf32>
    %2 = stablehlo.create_token : !stablehlo.token
    %3 = "stablehlo.send"(%1, %2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true}> {mhlo.frontend_attributes = {_xla_host_transfer_handler_name = "host_sort", _xla_host_transfer_rendezvous = "host_sort"}} : (tensor<4096xf32>, !stablehlo.token) -> !stablehlo.token
    %4:2 = "stablehlo.recv"(%3) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 3>, is_host_transfer = true}> {mhlo.frontend_attributes = {_xla_host_transfer_handler_name = "host_sort", _xla_host_transfer_original_type = "f32", _xla_host_transfer_rendezvous = "host_sort"}} : (!stablehlo.token) -> (tensor<4096xf32>, !stablehlo.token)
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4096xf32>
    %6 = stablehlo.add %4#0, %5 : tensor<4096xf32>
    return %6 : tensor<4096xf32>
  }
}
