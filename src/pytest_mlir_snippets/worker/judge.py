"""The golden check of an execute, shared by every target that runs in the worker:
what a run produced against the function's own checks, the recorded outputs, or a
reference (an interpreter, a second compiler), and what the verdict compared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden import compare as goldens
from pytest_mlir_snippets.golden.checks import judge as judge_checks
from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.protocol import Diagnostic, Kind, Options
from pytest_mlir_snippets.worker.targets.base import Compiled, SnippetFailure


def judge_outputs(compiled: Compiled, options: Options, golden: dict[str, Any] | None, actual: list[np.ndarray],
                  reference: Callable[[], tuple[list[np.ndarray], str]]) -> tuple[dict[str, float], dict[str, Any]]:
    """``actual`` against the snippet's own checks, else the recorded outputs, else what
    ``reference()`` gives (outputs, and the name of the reference); metrics or a golden-mismatch."""
    args, results = compiled.signature
    if compiled.info.get("checks"):
        return _judge_checks(compiled, actual)
    if golden and golden.get("outputs") is not None:
        produced = results or [spec for spec in args if spec.kind == "memref"]  # written in place
        expected = recorded(golden["outputs"], produced, "output")
        name = golden.get("source", "recorded outputs")
    else:
        expected, name = reference()
    comparison, failures = goldens.compare_all(actual, expected, options.atol, options.rtol, options.pcc)
    info = {"reference": name, "inputs": compiled.info["inputs"], "outputs": compiled.info["outputs"]}
    if not comparison.passed:
        raise SnippetFailure(Kind.GOLDEN_MISMATCH, f"results differ from the {name}: " + "; ".join(failures),
                             metrics=comparison.metrics(), info=info)
    return comparison.metrics(), info


def _judge_checks(compiled: Compiled, actual: list[np.ndarray]) -> tuple[dict[str, float], dict[str, Any]]:
    """A snippet with StableHLO's checks is its own golden: each check judged as the
    StableHLO interpreter does (``golden.checks``), a failed one at its line."""
    checks = compiled.info["checks"]
    metrics, failed = judge_checks(checks, actual)
    names = ", ".join(sorted({c.name for c in checks}))
    info = {"reference": f"the snippet's {len(checks)} check(s) ({names})", "inputs": compiled.info["inputs"],
            "outputs": compiled.info["outputs"]}
    if failed:
        lines = [f"check #{v.check.index} {v.check.name} failed: {v.message}" for v in failed]
        diagnostics = [Diagnostic("error", f"{v.check.name} failed: {v.message}", v.check.line, v.check.column)
                       for v in failed]
        raise SnippetFailure(Kind.GOLDEN_MISMATCH, f"{len(failed)} of {len(checks)} check(s) failed (at the "
                             "lines below): " + "; ".join(lines), diagnostics, metrics=metrics, info=info)
    return metrics, info


def recorded(values: list[np.ndarray], specs: list[TypeSpec], what: str) -> list[np.ndarray]:
    """Recorded inputs or outputs, checked against the signature and viewed in its
    element types (bf16 and unsigned data are often stored as raw integers)."""
    if len(values) != len(specs):
        raise SnippetFailure(Kind.EXECUTE_ERROR, f"{len(values)} recorded {what}(s), the function has {len(specs)}")
    checked = []
    for i, (value, spec) in enumerate(zip(values, specs)):
        value = np.asarray(value)
        same_bits = value.dtype.itemsize == spec.dtype.itemsize and {value.dtype.kind, spec.dtype.kind} <= {
            "i", "u", "V"}  # signless vs unsigned, or raw bits (bf16)
        if value.dtype != spec.dtype and not same_bits:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"recorded {what} #{i} is {value.dtype}, "
                                 f"the function's is {spec}")
        shape_ok = len(spec.shape) == value.ndim and all(d in (None, n) for d, n in zip(spec.shape, value.shape))
        if not shape_ok and None not in spec.shape and _squeezed(spec.shape) == _squeezed(value.shape):
            # 1x2 recorded for tensor<2>: they differ in unit dims only
            value, shape_ok = value.reshape([d or 1 for d in spec.shape]), True
        if not shape_ok:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"recorded {what} #{i} has shape {value.shape}, "
                                 f"the function's is {spec}")
        checked.append(np.array(value.view(spec.dtype), order="C"))
    return checked


def _squeezed(shape: tuple[int | None, ...]) -> tuple[int | None, ...]:
    return tuple(d for d in shape if d != 1)
