// A train step for `tpusim run --steps`: one step of gradient descent on a
// linear model's squared error, 0.5 * sum((x @ w + b - y)^2), at learning
// rate 2^-9 (0.001953125). Its state is its leading parameters (w, b and a
// step counter t), which it returns updated; the data x, y are constant
// inputs.
//   w <- w - 2^-9 * x^T (x @ w + b - y)
//   b <- b - 2^-9 * sum(x @ w + b - y)
//   t <- t + 1
module @train_step {
  func.func public @main(%w: tensor<32xf32>, %b: tensor<f32>, %t: tensor<i32>,
                         %x: tensor<256x32xf32>, %y: tensor<256xf32>)
      -> (tensor<32xf32>, tensor<f32>, tensor<i32>) {
    %xw = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<256x32xf32>, tensor<32xf32>) -> tensor<256xf32>
    %bb = stablehlo.broadcast_in_dim %b, dims = [] : (tensor<f32>) -> tensor<256xf32>
    %pred = stablehlo.add %xw, %bb : tensor<256xf32>
    %err = stablehlo.subtract %pred, %y : tensor<256xf32>
    %gw = stablehlo.dot_general %err, %x, contracting_dims = [0] x [0], precision = [HIGHEST, HIGHEST] : (tensor<256xf32>, tensor<256x32xf32>) -> tensor<32xf32>
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %gb = stablehlo.reduce(%err init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<256xf32>, tensor<f32>) -> tensor<f32>
    %lr = stablehlo.constant dense<1.953125e-03> : tensor<f32>
    %lrw = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %dw = stablehlo.multiply %lrw, %gw : tensor<32xf32>
    %w1 = stablehlo.subtract %w, %dw : tensor<32xf32>
    %db = stablehlo.multiply %lr, %gb : tensor<f32>
    %b1 = stablehlo.subtract %b, %db : tensor<f32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %t1 = stablehlo.add %t, %one : tensor<i32>
    return %w1, %b1, %t1 : tensor<32xf32>, tensor<f32>, tensor<i32>
  }
}
