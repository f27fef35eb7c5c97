// A two-layer MLP under jax.jit with shardings, as JAX exports it with
// Shardy (jax.jit(mlp, in_shardings=..., out_shardings=..., donate_argnums=0)
// .lower(x, w1, w2).as_text()):
//   mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
//   def mlp(x, w1, w2):
//     h = jax.nn.relu(x @ w1)
//     h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("data", "model")))
//     return h @ w2
//   in_shardings = (P("data", None), P(None, "model"), P("model", None)), out: P("data", None)
// The module and argument attributes JAX adds (num_partitions, result_info,
// layout_mode, donation, locations) are read and either used or ignored.
#loc1 = loc("x")
#loc2 = loc("w1")
#loc3 = loc("w2")
module @jit_mlp attributes {jax.uses_shape_polymorphism = false, mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22data\22=4, \22model\22=2]>}"}, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<64x128xf32> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>, tf.aliasing_output = 0 : i32} loc("x"), %arg1: tensor<128x256xf32> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>} loc("w1"), %arg2: tensor<256x128xf32> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>} loc("w2")) -> (tensor<64x128xf32> {jax.result_info = "result", mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32> loc(#loc10)
    %1 = call @relu(%0) : (tensor<64x256xf32>) -> tensor<64x256xf32> loc(#loc11)
    %2 = sdy.sharding_constraint %1 <@mesh, [{"data"}, {"model"}]> : tensor<64x256xf32> loc(#loc12)
    %3 = stablehlo.dot_general %2, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32> loc(#loc13)
    return %3 : tensor<64x128xf32> loc(#loc)
  } loc(#loc)
  func.func private @relu(%arg0: tensor<64x256xf32> loc("jit(mlp)/jit(main)/jit(relu)"(#loc6))) -> tensor<64x256xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc14)
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x256xf32> loc(#loc14)
    %1 = stablehlo.maximum %arg0, %0 : tensor<64x256xf32> loc(#loc14)
    return %1 : tensor<64x256xf32> loc(#loc11)
  } loc(#loc11)
} loc(#loc)
#loc = loc(unknown)
#loc4 = loc("/home/user/mlp.py":9:6 to :11)
#loc5 = loc("/home/user/mlp.py":10:6 to :42)
#loc6 = loc("/home/user/mlp.py":8:6 to :30)
#loc7 = loc("mlp"(#loc4))
#loc8 = loc("mlp"(#loc5))
#loc9 = loc("mlp"(#loc6))
#loc10 = loc("jit(mlp)/jit(main)/dot_general"(#loc9))
#loc11 = loc("jit(mlp)/jit(main)/jit(relu)"(#loc9))
#loc12 = loc("jit(mlp)/jit(main)/sharding_constraint"(#loc7))
#loc13 = loc("jit(mlp)/jit(main)/dot_general"(#loc8))
#loc14 = loc(callsite(fused["jit(mlp)/jit(main)/jit(relu)/max", #loc6] at #loc11))
