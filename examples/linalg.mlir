// linalg on tensors: named ops, a generic, and a dynamic dimension.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @matmul_0(%a: tensor<16x32xf32>, %b: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x8xf32>) -> tensor<16x8xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x8xf32>)
                     outs(%init : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// Bias add and ReLU in one linalg.generic; the first dimension is dynamic.
func.func @bias_relu_dynamic(%x: tensor<?x64xf32>, %bias: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<?x64xf32>, tensor<64xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

func.func @reduce_sum_0(%x: tensor<8x128xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8xf32>) -> tensor<8xf32>
  %0 = linalg.reduce ins(%x : tensor<8x128xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<8xf32>
}

func.func @transpose_i32(%x: tensor<4x6xi32>) -> tensor<6x4xi32> {
  %empty = tensor.empty() : tensor<6x4xi32>
  %0 = linalg.transpose ins(%x : tensor<4x6xi32>) outs(%empty : tensor<6x4xi32>) permutation = [1, 0]
  return %0 : tensor<6x4xi32>
}
