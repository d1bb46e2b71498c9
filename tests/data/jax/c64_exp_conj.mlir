module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.exponential %arg0 : tensor<4xcomplex<f32>>
    %1 = stablehlo.real %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %2 = stablehlo.imag %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %3 = stablehlo.negate %2 : tensor<4xf32>
    %4 = stablehlo.complex %1, %3 : tensor<4xcomplex<f32>>
    %5 = stablehlo.multiply %0, %4 : tensor<4xcomplex<f32>>
    return %5 : tensor<4xcomplex<f32>>
  }
}
