// Snippets that legitimately fail, so the main job shows those outcomes too.

// The operand shapes disagree: the linalg verifier rejects it (compile-error).
func.func @matmul_bad_shapes(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %empty = tensor.empty() : tensor<4x5xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<4x5xf32>) outs(%empty : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// stablehlo.sort has no lowering to linalg upstream (compile-error naming the op).
func.func @sort_0(%arg0: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// A Tenstorrent TTIR op: no such dialect on the cpu target (unsupported: a skip).
func.func @ttir_add(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %0 = "ttir.add"(%a, %b) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %0 : tensor<32x32xf32>
}
