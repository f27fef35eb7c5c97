// Reductions whose sizes are symbolic, as jax.export writes them for
// symbolic_shape("b, 4") on TPU: jnp.cumsum(x, axis=0) through
// reduce_window with a b-row window (stablehlo.dynamic_reduce_window),
// lax.top_k and lax.approx_max_k of x.T with k = b // 2
// (stablehlo.dynamic_top_k, stablehlo.dynamic_approx_top_k), and random bits
// of shape (b, 4) (stablehlo.dynamic_rng_bit_generator). Once b is known,
// each becomes its static op.
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4x?xf32>, tensor<4x?xi32>, tensor<4x?xf32>, tensor<?x4xui32>) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>
    %c = stablehlo.constant dense<1> : tensor<i64>
    %2 = stablehlo.compare  GE, %1, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%2, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[0].shape = (b, 4). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[0].shape[0] (= {0}), . Please see https://jax.readthedocs.io/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> ()
    %3:5 = call @_wrapped_jax_export_main(%1, %arg0) : (tensor<i64>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4x?xf32>, tensor<4x?xi32>, tensor<4x?xf32>, tensor<?x4xui32>)
    return %3#0, %3#1, %3#2, %3#3, %3#4 : tensor<?x4xf32>, tensor<4x?xf32>, tensor<4x?xi32>, tensor<4x?xf32>, tensor<?x4xui32>
  }
  func.func private @reduce_window_stablehlo.add_float32_reducer(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @top_k_gt_f32_comparator(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> tensor<i1> {
    %0 = stablehlo.compare  GT, %arg0, %arg1,  TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    return %0 : tensor<i1>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "b"}, %arg1: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4x?xf32>, tensor<4x?xi32>, tensor<4x?xf32>, tensor<?x4xui32>) {
    %0 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
    %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
    %c = stablehlo.constant dense<1> : tensor<1xi32>
    %2 = stablehlo.concatenate %1, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %c_0 = stablehlo.constant dense<1> : tensor<2xi32>
    %3 = stablehlo.subtract %1, %c : tensor<1xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<3xi32>
    %4 = stablehlo.concatenate %3, %c_1, dim = 0 : (tensor<1xi32>, tensor<3xi32>) -> tensor<4xi32>
    %5 = stablehlo.reshape %4 : (tensor<4xi32>) -> tensor<2x2xi32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%arg1, %cst, %2, %c_0, %c_0, %c_0, %5) {api_version = 2 : i32, called_computations = [@reduce_window_stablehlo.add_float32_reducer]} : (tensor<?x4xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<?x4xf32>
    %7 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<?x4xf32>) -> tensor<4x?xf32>
    %c_2 = stablehlo.constant dense<2> : tensor<i32>
    %8 = stablehlo.divide %0, %c_2 : tensor<i32>
    %9:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%7, %8) {api_version = 2 : i32} : (tensor<4x?xf32>, tensor<i32>) -> (tensor<4x?xf32>, tensor<4x?xi32>)
    %c_3 = stablehlo.constant dense<4> : tensor<1xi32>
    %10 = stablehlo.concatenate %c_3, %1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %11 = stablehlo.dynamic_iota %10, dim = 1 : (tensor<2xi32>) -> tensor<4x?xi32>
    %cst_4 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c_5 = stablehlo.constant dense<-1> : tensor<i32>
    %12 = stablehlo.reshape %8 : (tensor<i32>) -> tensor<1xi32>
    %13 = stablehlo.concatenate %c_3, %12, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %14:2 = stablehlo.custom_call @stablehlo.dynamic_approx_top_k(%7, %11, %cst_4, %c_5, %8, %13, %13) {called_computations = [@top_k_gt_f32_comparator], indices_of_shape_operands = dense<[5, 6]> : tensor<2xi64>, mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64}} : (tensor<4x?xf32>, tensor<4x?xi32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<4x?xf32>, tensor<4x?xi32>)
    %c_6 = stablehlo.constant dense<[42, 0]> : tensor<2xui64>
    %15 = stablehlo.concatenate %1, %c_3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %16:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%c_6, %15) {api_version = 2 : i32, rng_algorithm = #stablehlo<rng_algorithm DEFAULT>} : (tensor<2xui64>, tensor<2xi32>) -> (tensor<2xui64>, tensor<?x4xui32>)
    return %6, %9#0, %9#1, %14#0, %16#1 : tensor<?x4xf32>, tensor<4x?xf32>, tensor<4x?xi32>, tensor<4x?xf32>, tensor<?x4xui32>
  }
}
