module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<9xf32>) -> (tensor<9xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [0] : (tensor<9xf32>, tensor<f32>) -> tensor<f32>
    %1 = stablehlo.reshape %0 : (tensor<f32>) -> tensor<1xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<1xf32>) -> tensor<9xf32>
    %3 = stablehlo.compare EQ, %arg0, %2, FLOAT : (tensor<9xf32>, tensor<9xf32>) -> tensor<9xi1>
    %4 = stablehlo.convert %3 : (tensor<9xi1>) -> tensor<9xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<9xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %6 = stablehlo.maximum %cst_1, %0 : tensor<f32>
    %7 = stablehlo.compare EQ, %0, %6, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %8 = stablehlo.select %7, %cst_3, %cst_2 : tensor<i1>, tensor<f32>
    %cst_4 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %9 = stablehlo.compare EQ, %cst_4, %6, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_6 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %10 = stablehlo.select %9, %cst_6, %cst_5 : tensor<i1>, tensor<f32>
    %11 = stablehlo.divide %8, %10 : tensor<f32>
    %12 = stablehlo.is_finite %6 : (tensor<f32>) -> tensor<i1>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = stablehlo.select %12, %6, %cst_7 : tensor<i1>, tensor<f32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [0] : (tensor<1xf32>) -> tensor<9xf32>
    %16 = stablehlo.subtract %arg0, %15 : tensor<9xf32>
    %17 = stablehlo.exponential %16 : tensor<9xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.reduce(%17 init: %cst_8) applies stablehlo.add across dimensions = [0] : (tensor<9xf32>, tensor<f32>) -> tensor<f32>
    %19 = stablehlo.sign %18 : tensor<f32>
    %20 = stablehlo.abs %18 : tensor<f32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %21 = stablehlo.compare GE, %18, %cst_9, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %22 = stablehlo.log %20 : tensor<f32>
    %23 = stablehlo.add %22, %13 : tensor<f32>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %24 = stablehlo.divide %cst_10, %20 : tensor<f32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %25 = stablehlo.select %21, %cst_11, %24 : tensor<i1>, tensor<f32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.select %21, %24, %cst_12 : tensor<i1>, tensor<f32>
    %27 = stablehlo.negate %25 : tensor<f32>
    %28 = stablehlo.add %26, %27 : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [] : (tensor<f32>) -> tensor<9xf32>
    %30 = stablehlo.multiply %29, %17 : tensor<9xf32>
    return %30 : tensor<9xf32>
  }
}
