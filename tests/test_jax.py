"""StableHLO as JAX writes it, on real exports from the corpus (tests/data/jax, written by
scripts/jax_corpus.py): LAPACK custom calls computed at run time, checkpoints, clz, typed
PRNG keys (Shardy), symbolic shapes, 16-bit floats; each passes on JAX's own outputs and
fails (golden-mismatch) when one recorded value is changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

CORPUS = Path(__file__).resolve().parent / "data" / "jax"

# one function per fix, from the corpus
FIXED = {
    "linalg_cholesky": "lapack potrf",
    "linalg_qr": "lapack geqrf, orgqr",
    "linalg_svd_reconstruct": "lapack gesdd",
    "linalg_eigh_reconstruct": "lapack syevd",
    "linalg_solve": "lapack getrf, trsm",
    "linalg_cholesky_batched": "lapack potrf, batched",
    "lax_grad_checkpoint": "optimization_barrier",
    "poly_cumsum": "dynamic_reduce_window, symbolic shapes",
    "lax_clz": "math.ctlz",
    "random_typed_key_arg": "sdy.mesh, sdy.sharding_constraint",
    "poly_mlp": "shape_assertion, symbolic shapes",
    "bf16_add_mul": "bf16 rounds after each op",
    "bf16_matmul": "bf16 dot accumulates in f32",
    "f16_conv": "f16 convolution accumulates in f32",
    "sort_unique_size": "reduce over no dimension",
}


def copy(names: list[str], folder: Path, sabotage: bool = False) -> None:
    """The corpus files ``names`` (snippet and sidecar) into ``folder``; ``sabotage``: the
    first element of each recorded output_0 changed."""
    for name in names:
        shutil.copy(CORPUS / f"{name}.mlir", folder)
        sidecar = folder / f"{name}.main.npz"
        with np.load(CORPUS / f"{name}.main.npz") as data:
            arrays = {k: np.array(data[k]) for k in data.files}
        if sabotage:
            out = arrays["output_0"].reshape(-1)
            out[0] = out[0] + (64 if out.dtype.kind == "f" else 1) if out.dtype != np.uint16 else out[0] ^ 0x4000
        np.savez(sidecar, **arrays)


def verdicts(props: dict[str, dict[str, str]]) -> dict[str, str]:
    """Each function's verdict: its execute item's kind (or the compile's when it failed)."""
    found: dict[str, str] = {}
    for node, p in props.items():
        name = node.split(".mlir::")[0].rsplit("/", 1)[-1]
        kind = p.get("mlir_kind", p["outcome"])
        if kind not in ("pass", "skipped") or name not in found:
            found[name] = kind
    return found


def test_each_fix_passes_on_jax_outputs_and_fails_when_sabotaged(pytester: pytest.Pytester, run_items) -> None:
    copy(list(FIXED), pytester.path)
    _, props = run_items("-p", "no:randomly")
    assert verdicts(props) == dict.fromkeys(FIXED, "pass"), verdicts(props)
    assert {p["mlir_golden"] for node, p in props.items() if node.endswith("::main[execute]")} == {"recorded"}
    copy(list(FIXED), pytester.path, sabotage=True)
    _, props = run_items("-p", "no:randomly")
    assert verdicts(props) == dict.fromkeys(FIXED, "golden-mismatch"), verdicts(props)


def test_a_failed_shape_assertion_is_an_execute_error_with_jax_message(pytester: pytest.Pytester, run_items) -> None:
    """``2*b`` rows: with 3 rows JAX's export asserts that the division has no remainder."""
    shutil.copy(CORPUS / "poly_batch_even.mlir", pytester.path)
    result, props = run_items("-p", "no:randomly", "--mlir-dynamic-dim=3")
    assert props["poly_batch_even.mlir::main[compile]"]["mlir_kind"] == "execute-error"
    result.stdout.fnmatch_lines(["*JAX's shape assertion failed: *Division had remainder 1 when computing the value "
                                 "of 'b'*"])


UNKNOWN_CALL = """func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.custom_call @lapack_sfoo_ffi(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
"""


def test_an_unsupported_custom_call_names_its_target(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", unknown=UNKNOWN_CALL)
    result, props = run_items("-p", "no:randomly")
    assert props["unknown.mlir::main[compile]"]["mlir_kind"] == "compile-error"
    result.stdout.fnmatch_lines(["*unknown.mlir:2:*failed to legalize operation 'stablehlo.custom_call' "
                                 "@lapack_sfoo_ffi*"])


def test_the_helper_writes_a_snippet_and_its_golden(tmp_path: Path) -> None:
    jnp = pytest.importorskip("jax.numpy")
    import ml_dtypes

    from pytest_mlir_snippets.jaxsnippet import write_jax_snippet

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones(3, dtype=ml_dtypes.bfloat16)
    path, sidecar = write_jax_snippet(lambda a, b, unused: (jnp.sum(a), b * 2), x, y, np.int32(1),
                                      path=tmp_path / "f.mlir")
    assert sidecar.name == "f.main.npz" and "func.func public @main(" in path.read_text()
    assert path.read_text().count("%arg") >= 3  # keep_unused: every argument stays one
    with np.load(sidecar) as data:
        assert sorted(data.files) == ["input_0", "input_1", "input_2", "output_0", "output_1"]
        assert data["output_0"].shape == () and float(data["output_0"]) == 15.0
        assert data["input_1"].dtype == np.uint16 and data["output_1"].view(ml_dtypes.bfloat16)[0] == 2
    first = sidecar.read_bytes()
    write_jax_snippet(lambda a, b, unused: (jnp.sum(a), b * 2), x, y, np.int32(1), path=tmp_path / "f.mlir")
    assert sidecar.read_bytes() == first  # the same bytes for the same function and inputs
