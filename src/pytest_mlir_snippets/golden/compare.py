"""Comparison of results with a reference: max abs error, max rel error, PCC.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Comparison:
    max_abs_err: float
    max_rel_err: float
    pcc: float
    passed: bool
    reason: str = ""

    def metrics(self) -> dict[str, float]:
        return {"max_abs_err": self.max_abs_err, "max_rel_err": self.max_rel_err, "pcc": self.pcc}


# (atol, rtol) per element type when the user sets none: a few units in the last place
# of the type, since the reference rounds at other points than the compiled code.
DEFAULT_TOLERANCE: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-6),
    "float32": (1e-4, 1e-3),
    "float16": (1e-2, 1e-2),
    "bfloat16": (3e-2, 3e-2),
    "complex128": (1e-7, 1e-6),
    "complex64": (1e-4, 1e-3),
}


def tolerance(dtype: np.dtype, atol: float | None, rtol: float | None) -> tuple[float, float]:
    """The thresholds for one result: the user's, else the element type's default."""
    default = DEFAULT_TOLERANCE.get(np.dtype(dtype).name, DEFAULT_TOLERANCE["float32"])
    return (default[0] if atol is None else atol, default[1] if rtol is None else rtol)


def pcc(actual: np.ndarray, expected: np.ndarray) -> float:
    """Pearson correlation; 1.0 for equal constant arrays, 0.0 for unequal ones."""
    a = actual.astype(np.float64).ravel()
    e = expected.astype(np.float64).ravel()
    finite = np.isfinite(a) & np.isfinite(e)
    a, e = a[finite], e[finite]
    if a.size == 0:
        return 1.0
    da, de = a - a.mean(), e - e.mean()
    denom = float(np.sqrt((da * da).sum() * (de * de).sum()))
    if denom == 0.0:
        return 1.0 if np.array_equal(a, e) else 0.0
    return float((da * de).sum() / denom)


def compare(actual: np.ndarray, expected: np.ndarray, atol: float | None, rtol: float | None,
            min_pcc: float) -> Comparison:
    """Floats: allclose(atol, rtol) and PCC >= min_pcc; integers and i1: exact.

    ``None`` tolerances take the default of the less precise of the two types.
    """
    coarse = actual.dtype if actual.dtype.itemsize < expected.dtype.itemsize else expected.dtype
    atol, rtol = tolerance(coarse, atol, rtol)
    if actual.shape != expected.shape:
        return Comparison(float("inf"), float("inf"), 0.0, False,
                          f"shape {actual.shape} differs from the reference's {expected.shape}")
    if {actual.dtype.kind, expected.dtype.kind} == {"i", "u"} and actual.dtype.itemsize == expected.dtype.itemsize:
        actual = actual.view(expected.dtype)  # MLIR's signless integers: the bits, read as the reference reads them
    if "c" in (actual.dtype.kind, expected.dtype.kind):  # complex: real and imaginary parts side by side
        actual, expected = _parts(actual), _parts(expected)
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    same_nan = np.array_equal(np.isnan(a), np.isnan(e))
    # an infinity is matched by the same infinity only, as numpy's assert_allclose and
    # openxla's checks want (|inf - x| <= inf would accept any value)
    same_inf = np.array_equal(np.isposinf(a), np.isposinf(e)) and np.array_equal(np.isneginf(a), np.isneginf(e))
    valid = ~(np.isnan(a) | np.isnan(e))
    av, ev = a[valid], e[valid]
    with np.errstate(invalid="ignore", divide="ignore"):  # inf - inf where both are the same infinity
        diff = np.where(av == ev, 0.0, np.abs(av - ev))
        scale = np.abs(ev)
        rel = np.where(diff == 0, 0.0, np.divide(diff, scale, out=np.full_like(diff, np.inf), where=scale > 0))
        rel = np.where(np.isinf(diff), np.inf, rel)
    max_abs = float(diff.max()) if diff.size else 0.0
    max_rel = float(rel.max()) if rel.size else 0.0
    corr = pcc(a, e)
    exact = expected.dtype.kind in "biu"
    if exact:
        ok = same_nan and max_abs == 0.0
    else:
        close = bool(np.all(diff <= atol + rtol * scale))
        ok = same_nan and same_inf and close and (corr >= min_pcc or a.size <= 1)
    reason = ""
    if not ok:
        if not same_nan:
            reason = "NaN positions differ" + _first(a, e, np.isnan(a) != np.isnan(e))
        elif not same_inf:
            reason = "±inf positions differ" + _first(a, e, (np.isposinf(a) != np.isposinf(e))
                                                      | (np.isneginf(a) != np.isneginf(e)))
        elif exact:
            reason = f"{int(np.count_nonzero(diff))} element(s) differ (exact match required)" + _first(a, e, a != e)
        else:
            with np.errstate(invalid="ignore"):
                outside = ~(np.abs(a - e) <= atol + rtol * np.abs(e)) & ~np.isnan(a) & ~(a == e)
            reason = f"max abs error {max_abs:.3g}, max rel error {max_rel:.3g}, PCC {corr:.6f}" + _first(a, e, outside)
    return Comparison(max_abs, max_rel, corr, ok, reason)


def _first(actual: np.ndarray, expected: np.ndarray, differs: np.ndarray) -> str:
    """Where the first differing element is, and both values."""
    if not differs.any():
        return ""
    index = tuple(int(i) for i in np.argwhere(differs)[0])
    return f" (first at index {list(index)}: actual {actual[index].item()!r}, expected {expected[index].item()!r})"


def _parts(value: np.ndarray) -> np.ndarray:
    return np.stack([np.real(value), np.imag(value)], axis=-1)


def compare_all(actual: list[np.ndarray], expected: list[np.ndarray], atol: float | None, rtol: float | None,
                min_pcc: float) -> tuple[Comparison, list[str]]:
    """Compare every result; the worst metrics and the failures, one line each."""
    if len(actual) != len(expected):
        return Comparison(float("inf"), float("inf"), 0.0, False), [
            f"{len(actual)} result(s), the reference has {len(expected)}"]
    worst = Comparison(0.0, 0.0, 1.0, True)
    failures = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        c = compare(np.asarray(a), np.asarray(e), atol, rtol, min_pcc)
        worst = Comparison(max(worst.max_abs_err, c.max_abs_err), max(worst.max_rel_err, c.max_rel_err),
                           min(worst.pcc, c.pcc), worst.passed and c.passed)
        if not c.passed:
            failures.append(f"result #{i}: {c.reason}")
    return worst, failures
