module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xcomplex<f32>>, %arg1: tensor<6xcomplex<f32>>) -> (tensor<6xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<6xcomplex<f32>>
    %1 = stablehlo.add %0, %arg0 : tensor<6xcomplex<f32>>
    return %1 : tensor<6xcomplex<f32>>
  }
}
