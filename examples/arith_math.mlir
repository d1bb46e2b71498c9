// Elementwise arith and math on tensors and scalars, with several element types.
func.func @exp_tanh_f32(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = math.exp %x : tensor<64xf32>
  %1 = math.tanh %0 : tensor<64xf32>
  return %1 : tensor<64xf32>
}

func.func @fma_f16(%a: tensor<8x8xf16>, %b: tensor<8x8xf16>, %c: tensor<8x8xf16>) -> tensor<8x8xf16> {
  %0 = math.fma %a, %b, %c : tensor<8x8xf16>
  return %0 : tensor<8x8xf16>
}

// bf16 in and out: the golden check runs at bf16 precision.
func.func @mul_add_bf16(%a: tensor<16xbf16>, %b: tensor<16xbf16>) -> tensor<16xbf16> {
  %0 = arith.mulf %a, %b : tensor<16xbf16>
  %1 = arith.addf %0, %a : tensor<16xbf16>
  return %1 : tensor<16xbf16>
}

func.func @int_ops_i16(%a: tensor<32xi16>, %b: tensor<32xi16>) -> tensor<32xi16> {
  %0 = arith.muli %a, %b : tensor<32xi16>
  %1 = arith.maxsi %0, %a : tensor<32xi16>
  return %1 : tensor<32xi16>
}

func.func @select_i1(%p: tensor<10xi1>, %a: tensor<10xi8>, %b: tensor<10xi8>) -> tensor<10xi8> {
  %0 = arith.select %p, %a, %b : tensor<10xi1>, tensor<10xi8>
  return %0 : tensor<10xi8>
}

// Scalars in, two results out.
func.func @scalar_divmod(%a: i64, %b: index) -> (i64, index) {
  %c7 = arith.constant 7 : i64
  %0 = arith.remsi %a, %c7 : i64
  %c3 = arith.constant 3 : index
  %1 = arith.addi %b, %c3 : index
  return %0, %1 : i64, index
}

// Calls a private helper: the helper is carried into the snippet, not made an item.
func.func private @gelu_tanh(%x: f32) -> f32 {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %k = arith.constant 0.7978845608 : f32
  %c = arith.constant 0.044715 : f32
  %x3 = arith.mulf %x, %x : f32
  %x3b = arith.mulf %x3, %x : f32
  %inner = math.fma %c, %x3b, %x : f32
  %t = arith.mulf %k, %inner : f32
  %th = math.tanh %t : f32
  %s = arith.addf %one, %th : f32
  %hx = arith.mulf %half, %x : f32
  %r = arith.mulf %hx, %s : f32
  return %r : f32
}

func.func @gelu_0(%x: tensor<128xf32>) -> tensor<128xf32> {
  %empty = tensor.empty() : tensor<128xf32>
  %0 = linalg.map ins(%x : tensor<128xf32>) outs(%empty : tensor<128xf32>)
    (%in: f32, %out: f32) {
      %g = func.call @gelu_tanh(%in) : (f32) -> f32
      linalg.yield %g : f32
    }
  return %0 : tensor<128xf32>
}
