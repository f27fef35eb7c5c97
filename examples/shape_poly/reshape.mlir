// f(x) = (x.reshape(-1) + arange(x.size))[: x.size // 2] for x of symbolic
// shape (2*k, 4), as jax.export writes it: @main derives k from the
// batch, asserting that the batch is even and k >= 1; the wrapped function
// flattens to (8*k,) with dynamic_reshape, builds the arange with
// dynamic_iota and takes the first half with real_dynamic_slice.
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x4xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}) -> (tensor<?xf32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>
    %c = stablehlo.constant dense<2> : tensor<i64>
    %2 = stablehlo.divide %1, %c : tensor<i64>
    %3 = stablehlo.remainder %1, %c : tensor<i64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %4 = stablehlo.compare  EQ, %3, %c_0,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%4, %3, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Division had remainder {0} when computing the value of 'k'. Using the following polymorphic shapes specifications: args[0].shape = (2*k, 4). Obtained dimension variables: 'k' = {1} from specification '2*k' for dimension args[0].shape[0] (= {1}), . Please see https://jax.readthedocs.io/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
    %c_1 = stablehlo.constant dense<1> : tensor<i64>
    %5 = stablehlo.compare  GE, %2, %c_1,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%5, %2) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'k'. Using the following polymorphic shapes specifications: args[0].shape = (2*k, 4). Obtained dimension variables: 'k' = {0} from specification '2*k' for dimension args[0].shape[0] (= {0}), . Please see https://jax.readthedocs.io/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> ()
    %6 = call @_wrapped_jax_export_main(%2, %arg0) : (tensor<i64>, tensor<?x4xf32>) -> tensor<?xf32>
    return %6 : tensor<?xf32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "k"}, %arg1: tensor<?x4xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}) -> (tensor<?xf32> {jax.result_info = ""}) {
    %c = stablehlo.constant dense<8> : tensor<i64>
    %0 = stablehlo.multiply %arg0, %c : tensor<i64>
    %1 = stablehlo.convert %0 : (tensor<i64>) -> tensor<i32>
    %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
    %3 = stablehlo.dynamic_reshape %arg1, %2 : (tensor<?x4xf32>, tensor<1xi32>) -> tensor<?xf32>
    %4 = stablehlo.dynamic_iota %2, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
    %5 = stablehlo.add %3, %4 : tensor<?xf32>
    %c_0 = stablehlo.constant dense<4> : tensor<i64>
    %6 = stablehlo.multiply %arg0, %c_0 : tensor<i64>
    %7 = stablehlo.reshape %6 : (tensor<i64>) -> tensor<1xi64>
    %c_1 = stablehlo.constant dense<0> : tensor<1xi64>
    %c_2 = stablehlo.constant dense<1> : tensor<1xi64>
    %8 = stablehlo.real_dynamic_slice %5, %c_1, %7, %c_2 : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
    return %8 : tensor<?xf32>
  }
}
