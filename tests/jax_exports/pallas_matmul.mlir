// A Pallas TPU kernel, as JAX lowers pl.pallas_call (jax.jit(f).lower(x, y).as_text()):
//   def matmul_kernel(x_ref, y_ref, o_ref):
//     o_ref[...] = x_ref[...] @ y_ref[...]
//   def f(x, y):
//     z = pl.pallas_call(matmul_kernel, out_shape=jax.ShapeDtypeStruct((256, 256), x.dtype),
//                        cost_estimate=pl.CostEstimate(flops=2 * 256**3, transcendentals=0,
//                                                      bytes_accessed=3 * 256 * 256 * 4))(x, y)
//     return jnp.tanh(z)
// The body is the kernel's Mosaic bytecode (base64; shortened here). JAX
// also writes operand_layouts / result_layouts (index-typed), left out.
// tpusim cannot run the kernel; --timing-only prices its cost_estimate.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<256x256xf32> {mhlo.layout_mode = "default"}, %arg1: tensor<256x256xf32> {mhlo.layout_mode = "default"}) -> (tensor<256x256xf32> {jax.result_info = "result", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.custom_call @tpu_custom_call(%arg0, %arg1) {backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElSMjEuMC4wZ2l0AAErBwEDBQEFAwEDBwMJAwsDDQMPAxEDEwMVAxcDGQMbAx0DHwMhAyMDJQMnAykDKwMtAy8DMQMzAzUDNwM5AzsDPQM/A0EDQwNFA0cDSQ==\22, \22cost_estimate\22: {\0A\22bytes_accessed\22:786432,\0A\22flops\22:33554432,\0A\22remote_bytes_transferred\22:0,\0A\22transcendentals\22:0\0A}, \22serialization_format\22: 1, \22needs_layout_passes\22: true}}", kernel_name = "matmul_kernel"} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    %1 = stablehlo.tanh %0 : tensor<256x256xf32>
    return %1 : tensor<256x256xf32>
  }
}
