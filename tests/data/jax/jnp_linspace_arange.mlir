module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %0 = call @_linspace(%c, %c_0) : (tensor<i32>, tensor<i32>) -> tensor<5xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<5xf32>
    %2 = stablehlo.iota dim = 0 : tensor<5xi32>
    %3 = stablehlo.convert %2 : (tensor<5xi32>) -> tensor<5xf32>
    %4 = stablehlo.add %1, %3 : tensor<5xf32>
    return %4 : tensor<5xf32>
  }
  func.func private @_linspace(%arg0: tensor<i32>, %arg1: tensor<i32>) -> tensor<5xf32> {
    %0 = stablehlo.convert %arg0 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %2 = stablehlo.subtract %1, %0 : tensor<f32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %3 = stablehlo.divide %2, %cst : tensor<f32>
    %4 = stablehlo.iota dim = 0 : tensor<4xf32>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %6 = stablehlo.divide %4, %5 : tensor<4xf32>
    %7 = stablehlo.reshape %0 : (tensor<f32>) -> tensor<1xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %9 = stablehlo.subtract %8, %6 : tensor<4xf32>
    %10 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<1xf32>) -> tensor<4xf32>
    %11 = stablehlo.multiply %10, %9 : tensor<4xf32>
    %12 = stablehlo.reshape %1 : (tensor<f32>) -> tensor<1xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<1xf32>) -> tensor<4xf32>
    %14 = stablehlo.multiply %13, %6 : tensor<4xf32>
    %15 = stablehlo.add %11, %14 : tensor<4xf32>
    %16 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %17 = stablehlo.concatenate %15, %16, dim = 0 : (tensor<4xf32>, tensor<1xf32>) -> tensor<5xf32>
    return %17 : tensor<5xf32>
  }
}
