// Nearest neighbours by inner product with lax.approx_max_k, as JAX lowers
// it for TPU (jax.jit(mips).lower(qy, db).as_text()):
//   def mips(qy, db):
//     dists = jnp.einsum("ik,jk->ij", qy, db)
//     return jax.lax.approx_max_k(dists, k=8, recall_target=0.95)
// tpusim computes the exact top 8 (recall 1).
module @jit_mips attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func private @top_k_gt_f32_comparator(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> tensor<i1> {
    %0 = stablehlo.compare  GT, %arg0, %arg1 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %0 : tensor<i1>
  }
  func.func public @main(%arg0: tensor<16x64xf32> {mhlo.layout_mode = "default"}, %arg1: tensor<1024x64xf32> {mhlo.layout_mode = "default"}) -> (tensor<16x8xf32> {jax.result_info = "result[0]", mhlo.layout_mode = "default"}, tensor<16x8xi32> {jax.result_info = "result[1]", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x64xf32>, tensor<1024x64xf32>) -> tensor<16x1024xf32>
    %1 = stablehlo.iota dim = 1 : tensor<16x1024xi32>
    %c = stablehlo.constant dense<-1> : tensor<i32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %2:2 = stablehlo.custom_call @ApproxTopK(%0, %1, %cst, %c) {called_computations = [@top_k_gt_f32_comparator], mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 8 : i64}} : (tensor<16x1024xf32>, tensor<16x1024xi32>, tensor<f32>, tensor<i32>) -> (tensor<16x8xf32>, tensor<16x8xi32>)
    return %2#0, %2#1 : tensor<16x8xf32>, tensor<16x8xi32>
  }
}
