module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xcomplex<f32>>) -> (tensor<5xf32> {jax.result_info = "result[0]"}, tensor<5xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.abs %arg0 : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
    %1 = call @angle(%arg0) : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
    return %0, %1 : tensor<5xf32>, tensor<5xf32>
  }
  func.func private @angle(%arg0: tensor<5xcomplex<f32>>) -> tensor<5xf32> {
    %0 = stablehlo.real %arg0 : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
    %1 = stablehlo.imag %arg0 : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
    %2 = stablehlo.atan2 %1, %0 : tensor<5xf32>
    return %2 : tensor<5xf32>
  }
}
