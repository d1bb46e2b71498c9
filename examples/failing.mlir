// Snippets that legitimately fail, so the main job shows those outcomes too.

// The operand shapes disagree: the linalg verifier rejects it (compile-error).
func.func @matmul_bad_shapes(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %empty = tensor.empty() : tensor<4x5xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<4x5xf32>) outs(%empty : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// stablehlo.cholesky has no lowering to linalg (compile-error naming the op).
func.func @cholesky_0(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.cholesky"(%arg0) {lower = true} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// A Tenstorrent TTIR op: no such dialect on the cpu target (unsupported: a skip).
func.func @ttir_add(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %0 = "ttir.add"(%a, %b) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %0 : tensor<32x32xf32>
}
