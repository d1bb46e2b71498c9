"""Lowerings of the StableHLO ops ``stablehlo-legalize-to-linalg`` leaves alone, and
fixes where its lowering departs from the specification, all written with torch-mlir's
bindings and run before that pass: one module per op family."""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.shlo import (
    batch_norm,
    control,
    fft,
    fixes,
    halfprecision,
    jaxops,
    lapack,
    rng,
    scatter,
    select_and_scatter,
    sort,
    triangular_solve,
)


def rewrite(module: Any, tir: Any) -> None:
    """Every rewrite, in order."""
    fixes.apply(module, tir)
    jaxops.barriers_as_operands(module, tir)
    jaxops.reduces_over_nothing(module, tir)
    jaxops.shape_assertions(module, tir)
    halfprecision.in_f32(module, tir)
    scatter.lower_all(module, tir)
    sort.lower_all(module, tir)
    batch_norm.lower_all(module, tir)
    triangular_solve.lower_all(module, tir)
    lapack.lower_all(module, tir)
    fft.lower_all(module, tir)
    rng.lower_all(module, tir)
    select_and_scatter.lower_all(module, tir)
    control.lower_all(module, tir)
