module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = call @_where(%1, %arg0, %c) : (tensor<12xi1>, tensor<12xf32>, tensor<i32>) -> tensor<12xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<12xf32>, tensor<f32>) -> tensor<f32>
    return %3 : tensor<f32>
  }
  func.func private @_where(%arg0: tensor<12xi1>, %arg1: tensor<12xf32>, %arg2: tensor<i32>) -> tensor<12xf32> {
    %0 = stablehlo.convert %arg2 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<12xi1>, tensor<12xf32>
    return %2 : tensor<12xf32>
  }
}
