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
