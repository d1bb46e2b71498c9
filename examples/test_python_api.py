"""Tests written in Python: compile and run MLIR through the plugin's sandbox with the
``mlir_device`` fixture (docs/python-api.md). A crash or a hang fails its test with a
public exception kind; the next call gets a fresh worker and a reopened device."""

import numpy as np
import pytest

import pytest_mlir_snippets as mlir

SCALE = """func.func @scale(%x: tensor<{n}xf32>, %s: f32) -> tensor<{n}xf32> {{
  %e = tensor.empty() : tensor<{n}xf32>
  %0 = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}} ins(%x : tensor<{n}xf32>) outs(%e : tensor<{n}xf32>) {{
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %s : f32
    linalg.yield %m : f32
  }} -> tensor<{n}xf32>
  return %0 : tensor<{n}xf32>
}}
"""


@pytest.mark.parametrize("n", [1, 8, 1000])
def test_scale(mlir_device, n):
    compiled = mlir_device.compile(SCALE.format(n=n))
    assert compiled.signature == ([f"tensor<{n}xf32>", "f32"], [f"tensor<{n}xf32>"])
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    (out,) = mlir_device.run(compiled, x, 0.5)  # a Python number takes the argument's type
    mlir.assert_close(out, x * 0.5)


def test_module_built_with_the_bindings(mlir_device):
    ir = pytest.importorskip("mlir.ir")  # the test's own import: the plugin never loads MLIR in pytest
    from mlir.dialects import arith, func

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        matrix = ir.RankedTensorType.get([2, 3], ir.F32Type.get())
        with ir.InsertionPoint(module.body):

            @func.FuncOp.from_py_func(matrix, matrix)
            def fma(a, b):
                return arith.addf(arith.mulf(a, b), a)

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 2, np.float32)
    mlir.assert_close(mlir_device.run(mlir_device.compile(module), a, b), [a * b + a])


WILD_LOAD = """func.func @wild_load(%t: tensor<4xf32>) -> f32 {
  %far = arith.constant 1099511627776 : index
  %0 = tensor.extract %t[%far] : tensor<4xf32>
  return %0 : f32
}
"""


@pytest.mark.xfail(raises=mlir.Crash, strict=True, reason="loads 2^40 elements past its input")
def test_crash(mlir_device):
    mlir_device.run(mlir_device.compile(WILD_LOAD), np.zeros(4, np.float32))


SPIN = """func.func @spin(%n: i64) -> i64 {
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
"""


@pytest.mark.xfail(raises=mlir.Timeout, strict=True, reason="never returns")
def test_hang(mlir_device):
    mlir_device.run(mlir_device.compile(SPIN), 0, timeout=2)


@pytest.mark.xfail(raises=mlir.CompileError, strict=True, reason="linalg.matmul's shapes do not agree")
def test_expected_compile_error(mlir_device):
    mlir_device.compile("""func.func @mm(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %e = tensor.empty() : tensor<2x5xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<4x5xf32>) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
""")
