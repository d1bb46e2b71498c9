"""``stablehlo.triangular_solve``, which the StableHLO interpreter does not evaluate (it
is given the same expansion, worker/lowering/shlo/), checked against numpy over every
form, several shapes and element types."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

TRIANGULAR_SOLVE = """func.func @{name}(%a: tensor<{a}>, %b: tensor<{b}>) -> tensor<{b}> {{
  %0 = "stablehlo.triangular_solve"(%a, %b) <{{left_side = {left}, lower = {lower},
      transpose_a = #stablehlo<transpose {transpose}>, unit_diagonal = {unit}}}> : (tensor<{a}>, tensor<{b}>)
      -> tensor<{b}>
  return %0 : tensor<{b}>
}}
"""
# (a, b, element): a batch of two, one matrix; bf16 solved in f32. Every form on the first, a
# third of them (a different third) on each other
SHAPES = [("2x4x4", "2x4x3", "f32"), ("5x5", "5x2", "f64"), ("3x3", "3x3", "complex<f32>"),
          ("4x4", "4x1", "bf16")]
FORMS = [(left, lower, transpose, unit) for left in ("true", "false") for lower in ("true", "false")
         for transpose in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT") for unit in ("false", "true")]
DTYPE = {"f32": np.float32, "f64": np.float64, "complex<f32>": np.complex64, "bf16": ml_dtypes.bfloat16}


def compiled_function(text: str, name: str) -> tuple[Any, Any]:
    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    backend = CpuBackend()
    return backend, backend.compile(text, name, Options())


def solve_in_numpy(a: np.ndarray, b: np.ndarray, left: bool, lower: bool, transpose: str,
                   unit: bool) -> np.ndarray:
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = t - np.diag(np.diagonal(t)) + np.eye(len(t))
    op = {"NO_TRANSPOSE": t, "TRANSPOSE": t.T, "ADJOINT": t.conj().T}[transpose]
    return np.linalg.solve(op, b) if left else np.linalg.solve(op.T, b.T).T


@pytest.mark.parametrize(("a_shape", "b_shape", "element"), SHAPES)
def test_triangular_solve_matches_numpy(a_shape: str, b_shape: str, element: str) -> None:
    index = SHAPES.index((a_shape, b_shape, element))
    rng = np.random.default_rng(index)
    for left, lower, transpose, unit in FORMS if index == 0 else FORMS[index - 1::3]:
        a_dims = [int(d) for d in a_shape.split("x")]
        b_dims = [int(d) for d in b_shape.split("x")]
        if left == "false":  # x a = b: b's columns are a's rows
            b_dims[-2:] = b_dims[-1:] + b_dims[-2:-1]
        b_type = "x".join(map(str, b_dims)) + "x" + element
        text = TRIANGULAR_SOLVE.format(name="solve", a=f"{a_shape}x{element}", b=b_type, left=left, lower=lower,
                                       transpose=transpose, unit=unit)
        backend, compiled = compiled_function(text, "solve")
        m = a_dims[-1]
        a = rng.standard_normal(a_dims) + 4 * np.eye(m)  # well conditioned, whatever the triangle
        b = rng.standard_normal(b_dims)
        if element.startswith("complex"):
            a = a + 1j * rng.standard_normal(a_dims)
            b = b + 1j * rng.standard_normal(b_dims)
        a, b = a.astype(DTYPE[element]), b.astype(DTYPE[element])
        (x,) = backend._run(compiled, [a, b])
        wide = np.complex128 if element.startswith("complex") else np.float64
        batch = [()] if len(a_dims) == 2 else [(i,) for i in range(a_dims[0])]
        want = np.stack([solve_in_numpy(a[i].astype(wide), b[i].astype(wide), left == "true", lower == "true",
                                        transpose, unit == "true") for i in batch]).reshape(b.shape)
        tolerance = {"f32": 1e-5, "f64": 1e-12, "complex<f32>": 1e-5, "bf16": 3e-2}[element]
        assert np.allclose(x.astype(wide), want, rtol=tolerance, atol=tolerance), (left, lower, transpose, unit)


def test_triangular_solve_runs_against_the_interpreter(pytester: pytest.Pytester, run_items) -> None:
    """Without checks, such snippets get the interpreter as their golden (it runs the
    expansions; it aborted the worker on the ops themselves)."""
    forms = "".join(TRIANGULAR_SOLVE.format(name=f"solve_{i}", a="2x3x3xf32", b="2x3x2xf32", left="true",
                                            lower=lower, transpose=transpose, unit="false")
                    for i, (lower, transpose) in enumerate([("true", "NO_TRANSPOSE"), ("false", "ADJOINT")]))
    pytester.makefile(".mlir", solve=forms)
    _, props = run_items()
    assert {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items()} == dict.fromkeys(props, "pass")
    assert len(props) == 4
    assert {p["mlir_reference"] for node, p in props.items() if node.endswith("[execute]")} == {
        "StableHLO reference interpreter"}
