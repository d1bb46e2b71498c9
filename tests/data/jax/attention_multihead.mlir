module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x8xf32>, %arg1: tensor<3x2x8x4xf32>) -> (tensor<2x6x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg1 [0:1, 0:2, 0:8, 0:4] : (tensor<3x2x8x4xf32>) -> tensor<1x2x8x4xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x2x8x4xf32>) -> tensor<2x8x4xf32>
    %2 = stablehlo.dot_general %1, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x8x4xf32>, tensor<6x8xf32>) -> tensor<2x4x6xf32>
    %3 = stablehlo.transpose %2, dims = [0, 2, 1] : (tensor<2x4x6xf32>) -> tensor<2x6x4xf32>
    %4 = stablehlo.slice %arg1 [1:2, 0:2, 0:8, 0:4] : (tensor<3x2x8x4xf32>) -> tensor<1x2x8x4xf32>
    %5 = stablehlo.reshape %4 : (tensor<1x2x8x4xf32>) -> tensor<2x8x4xf32>
    %6 = stablehlo.dot_general %5, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x8x4xf32>, tensor<6x8xf32>) -> tensor<2x4x6xf32>
    %7 = stablehlo.transpose %6, dims = [0, 2, 1] : (tensor<2x4x6xf32>) -> tensor<2x6x4xf32>
    %8 = stablehlo.slice %arg1 [2:3, 0:2, 0:8, 0:4] : (tensor<3x2x8x4xf32>) -> tensor<1x2x8x4xf32>
    %9 = stablehlo.reshape %8 : (tensor<1x2x8x4xf32>) -> tensor<2x8x4xf32>
    %10 = stablehlo.dot_general %9, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x8x4xf32>, tensor<6x8xf32>) -> tensor<2x4x6xf32>
    %11 = stablehlo.transpose %10, dims = [0, 2, 1] : (tensor<2x4x6xf32>) -> tensor<2x6x4xf32>
    %12 = stablehlo.transpose %7, dims = [0, 2, 1] : (tensor<2x6x4xf32>) -> tensor<2x4x6xf32>
    %13 = stablehlo.dot_general %3, %12, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x6x4xf32>, tensor<2x4x6xf32>) -> tensor<2x6x6xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %14 = stablehlo.sqrt %cst : tensor<f32>
    %15 = stablehlo.convert %14 : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<f32>) -> tensor<2x6x6xf32>
    %17 = stablehlo.divide %13, %16 : tensor<2x6x6xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %18 = stablehlo.reduce(%17 init: %cst_0) applies stablehlo.maximum across dimensions = [2] : (tensor<2x6x6xf32>, tensor<f32>) -> tensor<2x6xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x6xf32>
    %20 = stablehlo.maximum %19, %18 : tensor<2x6xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0, 1] : (tensor<2x6xf32>) -> tensor<2x6x1xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1, 2] : (tensor<2x6x1xf32>) -> tensor<2x6x6xf32>
    %23 = stablehlo.subtract %17, %22 : tensor<2x6x6xf32>
    %24 = stablehlo.exponential %23 : tensor<2x6x6xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %25 = stablehlo.reduce(%24 init: %cst_2) applies stablehlo.add across dimensions = [2] : (tensor<2x6x6xf32>, tensor<f32>) -> tensor<2x6xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0, 1] : (tensor<2x6xf32>) -> tensor<2x6x1xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0, 1, 2] : (tensor<2x6x1xf32>) -> tensor<2x6x6xf32>
    %28 = stablehlo.divide %24, %27 : tensor<2x6x6xf32>
    %29 = stablehlo.dot_general %28, %11, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x6x6xf32>, tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
    return %29 : tensor<2x6x4xf32>
  }
}
