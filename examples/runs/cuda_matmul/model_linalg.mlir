// C += A x B (the accumulator is an input: no fill kernel)
func.func @forward(%a: tensor<256x512xf32>, %b: tensor<512x256xf32>, %c: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}
