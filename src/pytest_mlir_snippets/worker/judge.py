"""The golden check of an execute, shared by every target that runs in the worker:
what a run produced against the function's own checks, the recorded outputs, or a
reference (an interpreter, a second compiler), and what the verdict compared (its
golden basis, ``protocol.Golden``: the response's ``info["golden"]``).

A function with nothing to compare (no results, no buffer it wrote, no checks) gets
golden ``none`` and no metrics: it ran without error, and that is all it says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden import compare as goldens
from pytest_mlir_snippets.golden.checks import judge as judge_checks
from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.protocol import GOLDEN, Diagnostic, Golden, Kind, Options
from pytest_mlir_snippets.worker.core import Compiled, Reference, SnippetFailure

NOTHING = "nothing to compare: no results, no buffer written, no checks"


def judge_outputs(compiled: Compiled, options: Options, golden: dict[str, Any] | None, inputs: list[np.ndarray],
                  actual: list[np.ndarray], reference: Callable[[], Reference]) -> tuple[dict[str, float],
                                                                                        dict[str, Any]]:
    """``actual`` (what a run on ``inputs`` produced) against the snippet's own checks, else
    the recorded outputs, else what ``reference()`` gives; metrics and info (with the
    golden basis), or a golden-mismatch."""
    args, results = compiled.signature
    info = {"inputs": compiled.info["inputs"], "outputs": compiled.info["outputs"]}
    if compiled.info.get("checks"):
        return _judge_checks(compiled, actual, info)
    if golden and golden.get("outputs") is not None:
        produced = results or [spec for spec in args if spec.kind == "memref"]  # written in place
        expected = recorded(golden["outputs"], produced, "output", options.lenient_shapes)
        basis = Reference(expected, golden.get("source", "recorded outputs"), Golden(golden.get("basis", "recorded")))
    elif not results and not _wrote(args, inputs, actual):
        return {}, dict(info, reference=NOTHING, **{GOLDEN: Golden.NONE.value})
    else:
        basis = reference()
    comparison, failures = goldens.compare_all(actual, basis.outputs, options.atol, options.rtol, options.pcc)
    info.update(reference=basis.name, **{GOLDEN: basis.golden.value})
    if not comparison.passed:
        raise SnippetFailure(Kind.GOLDEN_MISMATCH, f"results differ from the {basis.name}: " + "; ".join(failures),
                             metrics=comparison.metrics(), info=info)
    # empty results: their shapes were compared, no value was (no PCC over zero values)
    return (comparison.metrics() if any(np.asarray(a).size for a in actual) else {}), info


def _wrote(args: list[TypeSpec], inputs: list[np.ndarray], actual: list[np.ndarray]) -> bool:
    """Whether a function without results changed one of its memref arguments (``actual``
    holds them after the call, ``inputs`` before it)."""
    before = [v for v, spec in zip(inputs, args) if spec.kind == "memref"]
    return any(np.asarray(a).tobytes() != np.asarray(b).tobytes() for a, b in zip(actual, before))


def _judge_checks(compiled: Compiled, actual: list[np.ndarray],
                  info: dict[str, Any]) -> tuple[dict[str, float], dict[str, Any]]:
    """A snippet with check ops is its own golden: each check judged as the StableHLO
    interpreter (or IREE's check module) does (``golden.checks``), a failed one at its line."""
    checks = compiled.info["checks"]
    metrics, failed = judge_checks(checks, actual)
    names = ", ".join(sorted({c.name for c in checks}))
    info = dict(info, reference=f"the snippet's {len(checks)} check(s) ({names})", **{GOLDEN: Golden.CHECKS.value})
    if failed:
        lines = [f"check #{v.check.index} {v.check.name} failed: {v.message}" for v in failed]
        diagnostics = [Diagnostic("error", f"{v.check.name} failed: {v.message}", v.check.line, v.check.column)
                       for v in failed]
        raise SnippetFailure(Kind.GOLDEN_MISMATCH, f"{len(failed)} of {len(checks)} check(s) failed (at the "
                             "lines below): " + "; ".join(lines), diagnostics, metrics=metrics, info=info)
    return metrics, info


def recorded(values: list[np.ndarray], specs: list[TypeSpec], what: str, lenient: bool = False) -> list[np.ndarray]:
    """Recorded inputs or outputs, checked against the signature and viewed in its
    element types (bf16 and unsigned data are often stored as raw integers). Shapes
    must match exactly (``lenient``: up to unit dimensions, ``--mlir-lenient-shapes``);
    an output that does not is a golden-mismatch, an input an execute-error."""
    if len(values) != len(specs):
        kind = Kind.GOLDEN_MISMATCH if what == "output" else Kind.EXECUTE_ERROR
        raise SnippetFailure(kind, f"{len(values)} recorded {what}(s), the function has {len(specs)}")
    checked = []
    for i, (value, spec) in enumerate(zip(values, specs)):
        value = np.asarray(value)
        same_bits = value.dtype.itemsize == spec.dtype.itemsize and {value.dtype.kind, spec.dtype.kind} <= {
            "i", "u", "V"}  # signless vs unsigned, or raw bits (bf16)
        if value.dtype != spec.dtype and not same_bits:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"recorded {what} #{i} is {value.dtype}, "
                                 f"the function's is {spec}")
        shape_ok = len(spec.shape) == value.ndim and all(d in (None, n) for d, n in zip(spec.shape, value.shape))
        if not shape_ok and lenient and None not in spec.shape and _squeezed(spec.shape) == _squeezed(value.shape):
            value, shape_ok = value.reshape([d or 1 for d in spec.shape]), True
        if not shape_ok:
            kind = Kind.GOLDEN_MISMATCH if what == "output" else Kind.EXECUTE_ERROR
            hint = "" if lenient or _squeezed(spec.shape) != _squeezed(value.shape) else (
                " (they differ in unit dimensions only: --mlir-lenient-shapes accepts that)")
            raise SnippetFailure(kind, f"recorded {what} #{i} has shape {'x'.join(map(str, value.shape)) or '0-d'}, "
                                 f"the function's is {spec}{hint}")
        checked.append(np.array(value.view(spec.dtype), order="C"))
    return checked


def _squeezed(shape: tuple[int | None, ...]) -> tuple[int | None, ...]:
    return tuple(d for d in shape if d != 1)
