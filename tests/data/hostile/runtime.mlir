// Run-time faults between healthy snippets: each fault fails its own item only.
func.func @healthy_0(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = arith.addf %a, %b : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Loads 2^40 elements past the end of its input: a segfault.
func.func @wild_load(%t: tensor<4xf32>) -> f32 {
  %far = arith.constant 1099511627776 : index
  %0 = tensor.extract %t[%far] : tensor<4xf32>
  return %0 : f32
}

func.func @healthy_1(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %0 = linalg.transpose ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  return %0 : tensor<4x4xf32>
}

// Never terminates: native code where no Python signal handler runs.
func.func @spin_forever(%n: i64) -> i64 {
  %r = scf.while (%i = %n) : (i64) -> i64 {
    %true = arith.constant true
    scf.condition(%true) %i : i64
  } do {
  ^bb0(%i: i64):
    %one = arith.constant 1 : i64
    %next = arith.addi %i, %one : i64
    scf.yield %next : i64
  }
  return %r : i64
}

func.func @healthy_2(%a: tensor<16xi32>) -> tensor<16xi32> {
  %0 = arith.muli %a, %a : tensor<16xi32>
  return %0 : tensor<16xi32>
}

// Unbounded recursion (not a tail call: the subtraction follows the call): stack overflow.
func.func @unbounded_recursion(%n: i64) -> i64 {
  %one = arith.constant 1 : i64
  %m = arith.addi %n, %one : i64
  %r = func.call @unbounded_recursion(%m) : (i64) -> i64
  %s = arith.subi %m, %r : i64
  return %s : i64
}

func.func @healthy_3(%a: tensor<f64>) -> tensor<f64> {
  %0 = math.sqrt %a : tensor<f64>
  %1 = math.absf %0 : tensor<f64>
  return %1 : tensor<f64>
}

// Fills 128 GiB: beyond the worker's memory limit, malloc fails and the fill faults.
func.func @huge_allocation(%a: tensor<4xf32>) -> tensor<4xf32> {
  %n = arith.constant 34359738368 : index
  %m = memref.alloc(%n) : memref<?xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%m : memref<?xf32>)
  %i = arith.constant 17179869184 : index
  %v = memref.load %m[%i] : memref<?xf32>
  %s = tensor.splat %v : tensor<4xf32>
  %0 = arith.addf %s, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @healthy_4(%a: tensor<3x5xf16>) -> tensor<3x5xf16> {
  %0 = arith.mulf %a, %a : tensor<3x5xf16>
  return %0 : tensor<3x5xf16>
}
