"""The cuda target on any machine: snippets to PTX, the chip and PTX version, and
execute items that skip without a device."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import has_cuda_driver

from pytest_mlir_snippets.backends.base import SnippetFailure
from pytest_mlir_snippets.backends.cuda import ptx_features

ROOT = Path(__file__).resolve().parent.parent


def test_ptx_version_follows_the_chip() -> None:
    assert [ptx_features(c) for c in ("sm_70", "sm_80", "sm_89", "sm_90a", "sm_100")] == [
        "+ptx60", "+ptx70", "+ptx78", "+ptx80", "+ptx86"]
    with pytest.raises(SnippetFailure, match="not a CUDA chip name"):
        ptx_features("ampere")


def test_snippets_compile_to_ptx_and_execute_needs_a_device(pytester: pytest.Pytester, run_items,
                                                            copy_into) -> None:
    for name in ("tosa.mlir", "tensor.mlir", "linalg.mlir", "failing.mlir"):
        copy_into(ROOT / "examples" / name)
    result, props = run_items("--mlir-target=cuda", "--mlir-cuda-chip=sm_90", "--mlir-save-artifacts", "-rs")
    compiles = {n: p for n, p in props.items() if n.endswith("[compile]")}
    assert compiles["tosa.mlir::matmul_0[compile]"]["outcome"] == "passed", result.stdout.str()[-3000:]
    assert compiles["tensor.mlir::concat_0[compile]"]["outcome"] == "passed"  # a copy becomes a kernel
    failed = {n for n, p in compiles.items() if p["outcome"] == "failure"}
    assert failed == {"failing.mlir::matmul_bad_shapes[compile]", "failing.mlir::sort_0[compile]"}
    result.stdout.fnmatch_lines(["*failing.mlir:12:8: error: failed to legalize operation 'stablehlo.sort'*"])
    ptx = (pytester.path / "ops_mlir_snippets" / "tosa.mlir" / "matmul_0" / "cuda" / "kernels.ptx").read_text()
    assert ".target sm_90" in ptx and ".version 8.0" in ptx and ".entry" in ptx
    if not has_cuda_driver():
        executes = [p for n, p in props.items() if n.endswith("[execute]")]
        assert executes and all(p["outcome"] == "skipped" for p in executes)
        result.stdout.fnmatch_lines(["*no CUDA device*"])
