// One SGD step of a two-layer MLP (8 -> 32 -> 4, ReLU, mean squared error),
// written the way JAX prints jax.jit(train_step).lower(params, x, y).as_text().
module @jit_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x32xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32x4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<16x8xf32>, %arg5: tensor<16x4xf32>) -> (tensor<8x32xf32> {jax.result_info = "[0][0]"}, tensor<32xf32> {jax.result_info = "[0][1]"}, tensor<32x4xf32> {jax.result_info = "[0][2]"}, tensor<4xf32> {jax.result_info = "[0][3]"}, tensor<f32> {jax.result_info = "[1]"}) {
    %0 = stablehlo.dot_general %arg4, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<32xf32>) -> tensor<16x32xf32>
    %2 = stablehlo.add %0, %1 : tensor<16x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %4 = stablehlo.maximum %2, %3 : tensor<16x32xf32>
    %5 = stablehlo.dot_general %4, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x4xf32>) -> tensor<16x4xf32>
    %6 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<4xf32>) -> tensor<16x4xf32>
    %7 = stablehlo.add %5, %6 : tensor<16x4xf32>
    %8 = stablehlo.subtract %7, %arg5 : tensor<16x4xf32>
    %9 = stablehlo.multiply %8, %8 : tensor<16x4xf32>
    %10 = stablehlo.reduce(%9 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %11 = stablehlo.divide %10, %cst_0 : tensor<f32>
    %cst_1 = stablehlo.constant dense<3.125000e-02> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<16x4xf32>
    %13 = stablehlo.multiply %12, %8 : tensor<16x4xf32>
    %14 = stablehlo.reduce(%13 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<16x4xf32>, tensor<f32>) -> tensor<4xf32>
    %15 = stablehlo.dot_general %4, %13, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<16x4xf32>) -> tensor<32x4xf32>
    %16 = stablehlo.dot_general %13, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x4xf32>, tensor<32x4xf32>) -> tensor<16x32xf32>
    %17 = stablehlo.compare  GT, %2, %3,  FLOAT : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xi1>
    %18 = stablehlo.select %17, %16, %3 : tensor<16x32xi1>, tensor<16x32xf32>
    %19 = stablehlo.reduce(%18 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %20 = stablehlo.dot_general %arg4, %18, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %cst_2 = stablehlo.constant dense<1.000000e-02> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %22 = stablehlo.multiply %21, %20 : tensor<8x32xf32>
    %23 = stablehlo.subtract %arg0, %22 : tensor<8x32xf32>
    %24 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %25 = stablehlo.multiply %24, %19 : tensor<32xf32>
    %26 = stablehlo.subtract %arg1, %25 : tensor<32xf32>
    %27 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<32x4xf32>
    %28 = stablehlo.multiply %27, %15 : tensor<32x4xf32>
    %29 = stablehlo.subtract %arg2, %28 : tensor<32x4xf32>
    %30 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %31 = stablehlo.multiply %30, %14 : tensor<4xf32>
    %32 = stablehlo.subtract %arg3, %31 : tensor<4xf32>
    return %23, %26, %29, %32, %11 : tensor<8x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<f32>
  }
}
