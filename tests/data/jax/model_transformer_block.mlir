module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<8xf32>) -> (tensor<5x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x8xf32>, tensor<8x8xf32>) -> tensor<5x8xf32>
    %1 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<5x8xf32>) -> tensor<8x5xf32>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x8xf32>, tensor<8x5xf32>) -> tensor<5x5xf32>
    %cst = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %3 = stablehlo.sqrt %cst : tensor<f32>
    %4 = stablehlo.convert %3 : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<5x5xf32>
    %6 = stablehlo.divide %2, %5 : tensor<5x5xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<5x5xf32>, tensor<f32>) -> tensor<5xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %9 = stablehlo.maximum %8, %7 : tensor<5xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<5xf32>) -> tensor<5x1xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<5x1xf32>) -> tensor<5x5xf32>
    %12 = stablehlo.subtract %6, %11 : tensor<5x5xf32>
    %13 = stablehlo.exponential %12 : tensor<5x5xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.reduce(%13 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<5x5xf32>, tensor<f32>) -> tensor<5xf32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [0] : (tensor<5xf32>) -> tensor<5x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<5x1xf32>) -> tensor<5x5xf32>
    %17 = stablehlo.divide %13, %16 : tensor<5x5xf32>
    %18 = stablehlo.dot_general %17, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x5xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
    %19 = stablehlo.add %arg0, %18 : tensor<5x8xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.reduce(%19 init: %cst_3) applies stablehlo.add across dimensions = [1] : (tensor<5x8xf32>, tensor<f32>) -> tensor<5xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0] : (tensor<5xf32>) -> tensor<5x1xf32>
    %cst_4 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<5x1xf32>
    %23 = stablehlo.divide %21, %22 : tensor<5x1xf32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0, 1] : (tensor<5x1xf32>) -> tensor<5x8xf32>
    %25 = stablehlo.subtract %19, %24 : tensor<5x8xf32>
    %26 = stablehlo.multiply %25, %25 : tensor<5x8xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %27 = stablehlo.reduce(%26 init: %cst_5) applies stablehlo.add across dimensions = [1] : (tensor<5x8xf32>, tensor<f32>) -> tensor<5xf32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [0] : (tensor<5xf32>) -> tensor<5x1xf32>
    %cst_6 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<5x1xf32>
    %30 = stablehlo.divide %28, %29 : tensor<5x1xf32>
    %31 = stablehlo.broadcast_in_dim %23, dims = [0, 1] : (tensor<5x1xf32>) -> tensor<5x8xf32>
    %32 = stablehlo.subtract %19, %31 : tensor<5x8xf32>
    %cst_7 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<5x1xf32>
    %34 = stablehlo.add %30, %33 : tensor<5x1xf32>
    %35 = stablehlo.rsqrt %34 : tensor<5x1xf32>
    %36 = stablehlo.broadcast_in_dim %35, dims = [0, 1] : (tensor<5x1xf32>) -> tensor<5x8xf32>
    %37 = stablehlo.multiply %32, %36 : tensor<5x8xf32>
    %38 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
    %39 = stablehlo.broadcast_in_dim %38, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<5x8xf32>
    %40 = stablehlo.multiply %37, %39 : tensor<5x8xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<5x8xf32>
    %42 = stablehlo.add %40, %41 : tensor<5x8xf32>
    return %42 : tensor<5x8xf32>
  }
}
