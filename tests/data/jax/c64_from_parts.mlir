module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xf32>, %arg1: tensor<5xf32>) -> (tensor<5xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.complex %arg0, %arg1 : tensor<5xcomplex<f32>>
    %1 = stablehlo.multiply %0, %0 : tensor<5xcomplex<f32>>
    return %1 : tensor<5xcomplex<f32>>
  }
}
