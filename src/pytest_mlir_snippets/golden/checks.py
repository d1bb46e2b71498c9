"""StableHLO's ``check`` ops judged after the run, as StableHLO's interpreter does.

The rules (``stablehlo/tests/CheckOps.cpp`` and ``stablehlo-translate --interpret``):

- ``eq``: every element equal; floats by IEEE equality (a NaN never equals, -0 == +0),
  complex numbers part by part.
- ``almost_eq``: equal, or both NaN, or both finite and ``|actual - expected| <=
  tolerance`` (in double precision); complex numbers part by part.
- ``close``: the ULP difference (how many floats of the element type lie between the
  two, 0 for bitwise equal values and for two NaNs, unbounded when one is not finite)
  within ``[min_ulp, max_ulp]``; for complex numbers the larger of its parts'.
- ``eq_or_almost_eq`` (``@check.eq``): ``eq`` for integers and booleans,
  ``almost_eq`` otherwise.
- IREE's check dialect (``tests/e2e``): ``almost_eq`` with an ``rtol`` too, as IREE's
  check module compares (``|actual - expected| <= atol + rtol * |expected|``, numpy's
  ``isclose``; atol 1e-4, rtol 0 by default); ``nonzero`` (``expect_true``,
  ``expect_all_true``) and ``zero`` (``expect_false``) on the actual value alone;
  ``bits`` (IREE's ``expect_eq``, a comparison of bytes): equal bit patterns.

numpy only; the worker rewrites the checks into results (``worker/lowering/checks.py``), or,
in a region or a callee, into calls that record each execution.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pytest_mlir_snippets.golden.compare import UNBOUNDED, pcc
from pytest_mlir_snippets.golden.compare import ulp_difference as _ulp
from pytest_mlir_snippets.golden.inputs import TypeSpec


@dataclass(frozen=True)
class Check:
    """One check of a function: results ``first`` (actual) and ``first + 1`` (expected)."""

    index: int
    name: str  # as written: check.expect_eq, check.expect_close, ...
    rule: str  # eq, almost_eq, close, eq_or_almost_eq
    element: str  # the checked values' element type, as written
    line: int | None = None  # in the module that was compiled
    column: int | None = None
    tolerance: float = 0.0
    min_ulp: int = 0
    max_ulp: int = 0
    first: int = 0
    rtol: float = 0.0  # almost_eq: the tolerance grows by rtol * |expected| (IREE's checks)
    # a check in a region or a callee: the function it calls instead, each time it runs
    # (``worker/lowering/checkcalls.py``), with the type of the values it passes; ``first`` unused
    callee: str = ""
    spec: TypeSpec | None = None
    # both values reach the check as given (constants, arguments, no op between): it checks
    # no computation and does not count (``worker/lowering/checks.py``)
    vacuous: bool = False


@dataclass
class Verdict:
    check: Check
    passed: bool
    metrics: dict[str, float] = field(default_factory=dict)
    message: str = ""


def _original(value: np.ndarray, element: str) -> np.ndarray:
    """A value read in a wider type (f8 as f32) back in its own, for ULP counts."""
    import ml_dtypes  # not at import: ~0.4 s of CPU (see golden/inputs.py)

    name = element.lower().replace("f8", "float8_").replace("f6", "float6_").replace("f4", "float4_")
    dtype = getattr(ml_dtypes, name, None) if element.startswith(("f8", "f6", "f4")) else None
    return value.astype(dtype) if dtype is not None else value


def _parts(value: np.ndarray) -> list[np.ndarray]:
    return [value.real, value.imag] if value.dtype.kind == "c" else [value]


def _almost_equal(actual: np.ndarray, expected: np.ndarray, tolerance: float, rtol: float = 0.0) -> np.ndarray:
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.isfinite(a) & np.isfinite(e) & (np.abs(a - e) <= tolerance + rtol * np.abs(e))
    same: np.ndarray = (a == e) | (np.isnan(a) & np.isnan(e))
    return same | near


def _floats(value: np.ndarray) -> np.ndarray:
    return np.stack([p.astype(np.float64) for p in _parts(value)], axis=-1)


def _bits(value: np.ndarray) -> np.ndarray:
    """Floats (complex parts too) as unsigned integers of their width; other types as they are."""
    if value.dtype.kind == "c":
        value = np.stack([value.real, value.imag], axis=-1)
    if value.dtype.kind == "f" or value.dtype.name in ("bfloat16",) or value.dtype.name.startswith("float8"):
        return value.view(np.dtype(f"uint{value.dtype.itemsize * 8}"))
    return value


def _errors(actual: np.ndarray, expected: np.ndarray) -> tuple[float, float]:
    """Max abs and max rel error over the pairs where neither is NaN."""
    a, e = _floats(actual), _floats(expected)
    valid = ~(np.isnan(a) | np.isnan(e))
    a, e = a[valid], e[valid]
    if not a.size:
        return 0.0, 0.0
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.where(a == e, 0.0, np.abs(a - e))
        rel = np.where(diff == 0, 0.0, diff / np.where(e == 0, np.nan, np.abs(e)))
    return float(diff.max()), float(np.nan_to_num(rel, nan=np.inf).max())


def evaluate(check: Check, actual: np.ndarray, expected: np.ndarray) -> Verdict:
    """Whether ``actual`` passes ``check`` against ``expected``; its metrics
    (``check_<i>_max_abs_err``, ``check_<i>_max_ulp`` for ``close``, ``check_<i>_mismatches``)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    prefix = f"check_{check.index}_"
    if actual.shape != expected.shape:
        return Verdict(check, False, {prefix + "mismatches": float(max(actual.size, expected.size))},
                       f"shape {actual.shape} (actual) vs {expected.shape} (expected)")
    rule = check.rule
    exact_type = expected.dtype.kind in "biu"
    if rule == "eq_or_almost_eq":
        rule = "eq" if exact_type else "almost_eq"
    if exact_type and rule in ("almost_eq", "close"):
        rule = "eq"  # the interpreter has no tolerance for integers
    metrics: dict[str, float] = {}
    if rule == "bits":  # IREE's expect_eq compares bytes: NaN equals a NaN of the same bits, -0 differs from +0
        ok = _bits(actual) == _bits(expected)
        how = "not bitwise equal"
    elif rule == "eq":
        ok = actual == expected
        how = "not equal"
    elif rule == "almost_eq":
        ok = np.logical_and.reduce([_almost_equal(a, e, check.tolerance, check.rtol)
                                    for a, e in zip(_parts(actual), _parts(expected))])
        how = f"not within tolerance {check.tolerance:g}" + (f" + {check.rtol:g} * |expected|" if check.rtol else "")
    elif rule in ("nonzero", "zero"):
        ok = (actual != 0) if rule == "nonzero" else (actual == 0)
        how = "zero (false)" if rule == "nonzero" else "non-zero (true)"
        expected = np.full_like(actual, rule == "nonzero")
    else:
        ulps = np.maximum.reduce([_ulp(_original(a, check.element), _original(e, check.element))
                                  for a, e in zip(_parts(actual), _parts(expected))])
        ok = (ulps >= check.min_ulp) & (ulps <= check.max_ulp)
        metrics[prefix + "max_ulp"] = float(ulps.max()) if ulps.size else 0.0
        how = f"ULP difference outside [{check.min_ulp}, {check.max_ulp}]"
    max_abs, _ = _errors(actual, expected)
    bad = np.argwhere(~np.asarray(ok))
    metrics[prefix + "max_abs_err"] = max_abs
    metrics[prefix + "mismatches"] = float(len(bad))
    if not len(bad):
        return Verdict(check, True, metrics)
    where = tuple(int(i) for i in bad[0])
    message = (f"{len(bad)} of {actual.size} element(s) {how}; first at index {list(where)}: "
               f"{actual[where].item()!r} (actual) vs {expected[where].item()!r} (expected)")
    if rule == "close":
        message += f", ULP difference {int(ulps[where]) if ulps[where] != UNBOUNDED else 'unbounded'}"
    return Verdict(check, False, metrics, message)


def judge(checks: list[Check], results: list[np.ndarray],
          executions: Sequence[tuple[int, np.ndarray, np.ndarray]] = ()) -> tuple[dict[str, float], list[Verdict]]:
    """Every check on the run's results; the metrics of all (worst max abs and rel error
    and lowest PCC over the checks, then each check's own) and the failed verdicts.
    ``executions``: (check index, actual, expected) each time a check with a ``callee`` ran;
    each is judged, the first failing one reported; one that never ran compares nothing."""
    metrics = {"max_abs_err": 0.0, "max_rel_err": 0.0, "pcc": 1.0}
    failed: list[Verdict] = []
    for check in checks:
        pairs = ([(a, e) for i, a, e in executions if i == check.index] if check.callee
                 else [(results[check.first], results[check.first + 1])])
        for n, (actual, expected) in enumerate(pairs):
            verdict = evaluate(check, actual, expected)
            if np.shape(actual) == np.shape(expected):
                abs_err, rel_err = _errors(np.asarray(actual), np.asarray(expected))
                metrics.update(max_abs_err=max(metrics["max_abs_err"], abs_err),
                               max_rel_err=max(metrics["max_rel_err"], rel_err),
                               pcc=min(metrics["pcc"], pcc(_floats(np.asarray(actual)), _floats(np.asarray(expected)))))
            metrics.update(verdict.metrics)
            if not verdict.passed:
                if check.callee:
                    verdict.message = f"execution {n + 1} of {len(pairs)}: {verdict.message}"
                failed.append(verdict)
                break
    return metrics, failed
