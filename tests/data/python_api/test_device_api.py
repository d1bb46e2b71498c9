"""What issue 30 asks of a Python test file (copied into a pytester folder by
tests/test_mlir_device.py): compile and run with numpy inputs, parametrized; a wild load
is Crash and the next call works; a spin with timeout=1 is Timeout and the next call
works; bad IR is CompileError naming line 2; xfail(raises=Crash, strict=True)."""

import numpy as np
import pytest

import pytest_mlir_snippets as mlir

ADD = """func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
WILD_LOAD = """func.func @wild_load(%t: tensor<4xf32>) -> f32 {
  %far = arith.constant 1099511627776 : index
  %0 = tensor.extract %t[%far] : tensor<4xf32>
  return %0 : f32
}
"""
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
BAD = """func.func @bad(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xi32>
  return %0 : tensor<4xf32>
}
"""


def test_target(mlir_target):
    assert mlir_target == "cpu"


@pytest.mark.parametrize("scale", [1.0, -2.5])
def test_add(mlir_device, scale):
    compiled = mlir_device.compile(ADD)
    assert compiled.signature == (["tensor<4xf32>", "tensor<4xf32>"], ["tensor<4xf32>"])
    a = np.arange(4, dtype=np.float32) * np.float32(scale)
    (out,) = mlir_device.run(compiled, a, np.ones(4, np.float32))
    assert out.dtype == np.float32
    mlir.assert_close(out, a + 1)


def test_wild_load_is_a_crash_and_the_next_call_works(mlir_device):
    add = mlir_device.compile(ADD)
    with pytest.raises(mlir.Crash, match="SIGSEGV"):
        mlir_device.run(mlir_device.compile(WILD_LOAD), np.zeros(4, np.float32))
    ones = np.ones(4, np.float32)
    # compiled before the crash: the fresh worker compiles it again
    mlir.assert_close(mlir_device.run(add, ones, ones), [2 * ones])


def test_spin_is_a_timeout_and_the_next_call_works(mlir_device):
    spin = mlir_device.compile(SPIN)
    with pytest.raises(mlir.Timeout, match="no answer within 1 s"):
        mlir_device.run(spin, np.int64(0), timeout=1)  # a hang: the wait is all it costs
    ones = np.ones(4, np.float32)
    mlir.assert_close(mlir_device.run(mlir_device.compile(ADD), ones, ones), [2 * ones])


def test_bad_ir_is_a_compile_error_at_line_2(mlir_device):
    with pytest.raises(mlir.CompileError, match=r"<mlir>:2:\d+: error: use of value '%a'") as failure:
        mlir_device.compile(BAD)
    assert failure.value.response.kind == "compile-error"


@pytest.mark.xfail(raises=mlir.Crash, strict=True)
def test_expected_crash(mlir_device):
    mlir_device.run(mlir_device.compile(WILD_LOAD), np.zeros(4, np.float32))
