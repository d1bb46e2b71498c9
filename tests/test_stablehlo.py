"""StableHLO as JAX writes it, and the lowering corners it reaches: 0-d i1, memrefs
that manage their own buffers, the ``check`` convention as a golden."""

from __future__ import annotations

import pytest

ZERO_D_I1 = """func.func @compare_0d(%a: tensor<f32>, %b: tensor<f32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @select_on_0d(%p: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %a : tensor<4xf32>
  %1 = stablehlo.select %p, %a, %0 : tensor<i1>, tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
ZERO_D_I1_UPSTREAM = """func.func @extract_0d(%p: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  %n = arith.negf %a : tensor<4xf32>
  %r = arith.select %c, %a, %n : tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @compare_0d_linalg(%a: tensor<f32>, %b: tensor<f32>) -> tensor<i1> {
  %e = tensor.empty() : tensor<i1>
  %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>],
                       iterator_types = []} ins(%a, %b : tensor<f32>, tensor<f32>) outs(%e : tensor<i1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %c = arith.cmpf ogt, %x, %y : f32
    linalg.yield %c : i1
  } -> tensor<i1>
  return %r : tensor<i1>
}
func.func @not_0d_memref(%m: memref<i1>) {
  %v = memref.load %m[] : memref<i1>
  %t = arith.constant true
  %n = arith.xori %v, %t : i1
  memref.store %n, %m[] : memref<i1>
  return
}
"""


def kinds(props: dict[str, dict[str, str]]) -> dict[str, str]:
    return {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items()}


def test_zero_d_i1_compiles_and_matches(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", shlo=ZERO_D_I1, upstream=ZERO_D_I1_UPSTREAM)
    _, props = run_items()
    assert set(kinds(props).values()) == {"pass"}, kinds(props)
    assert len(props) == 10
    assert props["shlo.mlir::compare_0d[execute]"]["mlir_reference"] == "StableHLO reference interpreter"
    assert props["upstream.mlir::not_0d_memref[execute]"]["mlir_reference"] == "plain lowering (cpu)"


def test_zero_d_i1_memref_is_read_and_written() -> None:
    """The rewrite itself, checked against numbers (the plain lowering shares it)."""
    import numpy as np

    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    backend = CpuBackend()
    compiled = backend.compile(ZERO_D_I1_UPSTREAM, "not_0d_memref", Options())
    for value in (True, False):
        (out,) = backend._run(compiled, [np.array(value)])
        assert out.shape == () and bool(out) is (not value)
    compiled = backend.compile(ZERO_D_I1_UPSTREAM, "compare_0d_linalg", Options())
    (out,) = backend._run(compiled, [np.array(2.0, np.float32), np.array(1.0, np.float32)])
    assert out.dtype == np.bool_ and bool(out)


OWN_BUFFERS = """func.func @own_buffers(%a: memref<4xf32>, %out: memref<4xf32>) {
  %tmp = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %tmp[%i] : memref<4xf32>
  }
  %big = memref.realloc %tmp : memref<4xf32> to memref<8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %y = memref.load %big[%i] : memref<8xf32>
    %z = arith.addf %y, %y : f32
    memref.store %z, %out[%i] : memref<4xf32>
  }
  memref.dealloc %big : memref<8xf32>
  return
}
func.func @with_tensors(%a: tensor<4xf32>) -> tensor<4xf32> {
  %tmp = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %x = tensor.extract %a[%c0] : tensor<4xf32>
  memref.store %x, %tmp[%c0] : memref<4xf32>
  %y = memref.load %tmp[%c0] : memref<4xf32>
  memref.dealloc %tmp : memref<4xf32>
  %s = tensor.splat %y : tensor<4xf32>
  %0 = arith.addf %a, %s : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_snippet_that_frees_its_own_buffers(pytester: pytest.Pytester, run_items) -> None:
    import numpy as np

    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    pytester.makefile(".mlir", own=OWN_BUFFERS)
    _, props = run_items()
    assert set(kinds(props).values()) == {"pass"} and len(props) == 4, kinds(props)
    backend = CpuBackend()
    a = np.array([1, -2, 3, 0.5], np.float32)
    _, out = backend._run(backend.compile(OWN_BUFFERS, "own_buffers", Options()), [a, np.zeros(4, np.float32)])
    assert np.array_equal(out, 2 * a * a)
    (out,) = backend._run(backend.compile(OWN_BUFFERS, "with_tensors", Options()), [a])
    assert np.array_equal(out, a + a[0])
