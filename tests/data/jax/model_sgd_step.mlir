module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x2xf32>, %arg1: tensor<6x4xf32>) -> (tensor<4x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x4xf32>, tensor<4x2xf32>) -> tensor<6x2xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<6x2xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x2xf32>
    %3 = stablehlo.multiply %2, %0 : tensor<6x2xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<6x2xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<1.200000e+01> : tensor<f32>
    %5 = stablehlo.divide %4, %cst_1 : tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_3 = stablehlo.constant dense<1.200000e+01> : tensor<f32>
    %6 = stablehlo.divide %cst_2, %cst_3 : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<6x2xf32>
    %8 = stablehlo.multiply %7, %3 : tensor<6x2xf32>
    %9 = stablehlo.dot_general %8, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x2xf32>, tensor<6x4xf32>) -> tensor<2x4xf32>
    %10 = stablehlo.transpose %9, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
    %cst_4 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %12 = stablehlo.multiply %11, %10 : tensor<4x2xf32>
    %13 = stablehlo.subtract %arg0, %12 : tensor<4x2xf32>
    return %13 : tensor<4x2xf32>
  }
}
