"""Comparison of results with a reference: max abs error, max rel error, PCC.

The default tolerances are torch.testing.assert_close's per element type (the anchors):
an element passes when ``|actual - expected| <= atol + rtol * |expected|``, or when the
two are at most ``ulp`` units in the last place apart (an op's documented allowance, see
docs/goldens.md). ``atol`` exists for values near zero; it is scaled down with the
reference's own magnitude (``atol * min(1, max |expected|)``), so that an output whose
values are all small is held to its relative error too, and a 2x error at 1e-5 scale
fails. A golden with its own rule (IREE's ``--expected_f32_threshold``, a user's
comment line) keeps it: ``Tolerance.scaled`` is then off. PCC is an extra gate
(``--mlir-pcc``), never the only one.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

ANCHOR = "torch.testing.assert_close's defaults"

# (atol, rtol) per element type: torch.testing.assert_close's defaults
DEFAULT_TOLERANCE: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-5, 1.3e-6),
    "float16": (1e-5, 1e-3),
    "bfloat16": (1e-5, 1.6e-2),
    "complex128": (1e-7, 1e-7),
    "complex64": (1e-5, 1.3e-6),
}


# ops whose lowering calls an approximation (libm, a polynomial) the reference may not share:
# results that went through one may differ by this many units in the last place of their type
OP_ULP: dict[str, int] = {f"math.{name}": 4 for name in (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin",
    "acos", "atan", "atan2", "asinh", "acosh", "atanh", "erf", "erfc", "powf", "fpowi", "rsqrt", "cbrt")}


def op_allowance(ops: list[str]) -> int:
    """The ULP allowance of a function that uses ``ops`` (``OP_ULP``; 0 for none of them)."""
    return max((OP_ULP.get(op, 0) for op in ops), default=0)


@dataclass(frozen=True)
class Tolerance:
    """The rule a comparison uses; ``None``: the element type's default."""

    atol: float | None = None
    rtol: float | None = None
    ulp: int = 0  # elements this many units in the last place apart pass too
    source: str = ANCHOR
    scaled: bool = True  # the default atol shrinks with the reference's magnitude
    # (element type name, atol, rtol): a golden's own numbers per type, in place of the defaults
    types: tuple[tuple[str, float, float], ...] = ()

    def resolve(self, dtype: np.dtype, expected: np.ndarray) -> tuple[float, float]:
        """(atol, rtol) for one result of element type ``dtype`` whose reference is ``expected``."""
        own = next(((a, r) for name, a, r in self.types if name == np.dtype(dtype).name), None)
        default = own or _default(dtype)
        atol = default[0] if self.atol is None else self.atol
        rtol = default[1] if self.rtol is None else self.rtol
        if self.scaled and self.atol is None and own is None:
            finite = np.abs(expected[np.isfinite(expected)]) if expected.size else expected
            scale = float(finite.max()) if finite.size else 0.0
            if scale > 0.0:
                atol *= min(1.0, scale)
        return atol, rtol

    def described(self, atol: float, rtol: float) -> dict[str, Any]:
        """What ``info.tolerance`` records."""
        return {"atol": atol, "rtol": rtol, "ulp": self.ulp, "source": self.source}

    def with_user(self, atol: float | None, rtol: float | None, ulp: int | None, source: str) -> Tolerance:
        """This rule with what a user set (an option, a comment line) in place of its numbers."""
        if atol is None and rtol is None and ulp is None:
            return self
        return replace(self, atol=self.atol if atol is None else atol, rtol=self.rtol if rtol is None else rtol,
                       ulp=self.ulp if ulp is None else ulp, source=source, scaled=self.scaled and atol is None)


def _default(dtype: np.dtype) -> tuple[float, float]:
    name = np.dtype(dtype).name
    if name in DEFAULT_TOLERANCE:
        return DEFAULT_TOLERANCE[name]
    try:  # other floats (f8, f6, f4 through ml_dtypes): two units of the type's precision
        return 1e-5, 2 * float(np.finfo(dtype).eps)
    except (TypeError, ValueError):
        return DEFAULT_TOLERANCE["float32"]


@dataclass
class Comparison:
    max_abs_err: float
    max_rel_err: float
    pcc: float
    passed: bool
    reason: str = ""
    tolerance: dict[str, Any] | None = None  # the rule used (``Tolerance.described``), for floats

    def metrics(self) -> dict[str, float]:
        """The errors, and PCC where it is defined (not for constant arrays)."""
        found = {"max_abs_err": self.max_abs_err, "max_rel_err": self.max_rel_err}
        return found if np.isnan(self.pcc) else {**found, "pcc": self.pcc}


def pcc(actual: np.ndarray, expected: np.ndarray) -> float:
    """Pearson correlation; 1.0 for equal arrays, NaN (undefined) where either is constant
    and they differ: the element-wise comparison judges those alone."""
    a = actual.astype(np.float64).ravel()
    e = expected.astype(np.float64).ravel()
    finite = np.isfinite(a) & np.isfinite(e)
    a, e = a[finite], e[finite]
    if a.size == 0:
        return 1.0
    da, de = a - a.mean(), e - e.mean()
    denom = float(np.sqrt((da * da).sum() * (de * de).sum()))
    if denom == 0.0:
        return 1.0 if np.array_equal(a, e) else float("nan")
    return float((da * de).sum() / denom)


UNBOUNDED = np.iinfo(np.uint64).max


def ulp_difference(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per element ULP difference of two float arrays of the same type, as uint64: how many
    values of the type lie between them (0 when bitwise equal and for two NaNs, unbounded
    when one is not finite)."""
    bits = actual.dtype.itemsize * 8
    unsigned = np.dtype(f"uint{bits}")
    a = actual.view(unsigned).astype(np.uint64)
    e = expected.view(unsigned).astype(np.uint64)
    sign = np.uint64(1 << (bits - 1))
    mag_a, mag_e = a & ~sign, e & ~sign
    distance = np.where((a & sign) != (e & sign), mag_a + mag_e, np.maximum(mag_a, mag_e) - np.minimum(mag_a, mag_e))
    wide_a, wide_e = actual.astype(np.float64), expected.astype(np.float64)
    finite = np.isfinite(wide_a) & np.isfinite(wide_e)
    both_nan = np.isnan(wide_a) & np.isnan(wide_e)
    distance = np.where(finite, distance, np.where(both_nan, np.uint64(0), np.uint64(UNBOUNDED)))
    return np.where(a == e, np.uint64(0), distance)


def compare(actual: np.ndarray, expected: np.ndarray, atol: float | None = None, rtol: float | None = None,
            min_pcc: float = 0.99, rule: Tolerance | None = None) -> Comparison:
    """Floats: every element within the rule (``rule``, else the element type's default with
    ``atol``/``rtol`` in its place) and PCC >= min_pcc; integers and i1: exact.

    The rule is taken for the less precise of the two types.
    """
    rule = (rule or Tolerance()).with_user(atol, rtol, None, "the caller's atol/rtol")
    coarse = actual.dtype if actual.dtype.itemsize < expected.dtype.itemsize else expected.dtype
    if actual.shape != expected.shape:
        return Comparison(float("inf"), float("inf"), 0.0, False,
                          f"shape {actual.shape} differs from the reference's {expected.shape}")
    if {actual.dtype.kind, expected.dtype.kind} == {"i", "u"} and actual.dtype.itemsize == expected.dtype.itemsize:
        actual = actual.view(expected.dtype)  # MLIR's signless integers: the bits, read as the reference reads them
    if "c" in (actual.dtype.kind, expected.dtype.kind):  # complex: real and imaginary parts side by side
        actual, expected = _parts(actual), _parts(expected)
        coarse = np.dtype(f"float{coarse.itemsize * 4}")
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    atol, rtol = rule.resolve(coarse, e)
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
    outside = np.zeros(a.shape, bool)
    if exact:
        ok = same_nan and max_abs == 0.0
    else:
        with np.errstate(invalid="ignore"):
            outside = ~(np.abs(a - e) <= atol + rtol * np.abs(e)) & ~np.isnan(a) & ~(a == e)
        if rule.ulp and outside.any() and coarse.kind == "f":
            near = ulp_difference(np.asarray(actual, coarse), np.asarray(expected, coarse)) <= rule.ulp
            outside &= ~near
        ok = same_nan and same_inf and not outside.any() and (corr >= min_pcc or a.size <= 1 or np.isnan(corr))
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
            count = int(np.count_nonzero(outside))
            within = f"; {count} element(s) outside atol {atol:.3g} + rtol {rtol:.3g} x |expected|" + (
                f" (or {rule.ulp} ULP)" if rule.ulp else "") if count else f"; PCC below {min_pcc}"
            shown = "n/a (a constant array)" if np.isnan(corr) else f"{corr:.6f}"
            reason = f"max abs error {max_abs:.3g}, max rel error {max_rel:.3g}, PCC {shown}{within}" + _first(
                a, e, outside)
    described = None if exact else rule.described(atol, rtol)
    return Comparison(max_abs, max_rel, corr, ok, reason, described)


def _first(actual: np.ndarray, expected: np.ndarray, differs: np.ndarray) -> str:
    """Where the first differing element is, and both values."""
    if not differs.any():
        return ""
    index = tuple(int(i) for i in np.argwhere(differs)[0])
    return f" (first at index {list(index)}: actual {actual[index].item()!r}, expected {expected[index].item()!r})"


def _parts(value: np.ndarray) -> np.ndarray:
    return np.stack([np.real(value), np.imag(value)], axis=-1)


def compare_all(actual: list[np.ndarray], expected: list[np.ndarray], atol: float | None = None,
                rtol: float | None = None, min_pcc: float = 0.99,
                rule: Tolerance | None = None) -> tuple[Comparison, list[str]]:
    """Compare every result; the worst metrics, the failures (one line each), and the rule
    of the first float result (``Comparison.tolerance``)."""
    if len(actual) != len(expected):
        return Comparison(float("inf"), float("inf"), 0.0, False), [
            f"{len(actual)} result(s), the reference has {len(expected)}"]
    worst = Comparison(0.0, 0.0, float("nan"), True)  # PCC: the lowest defined one
    failures = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        c = compare(np.asarray(a), np.asarray(e), atol, rtol, min_pcc, rule)
        worst = Comparison(max(worst.max_abs_err, c.max_abs_err), max(worst.max_rel_err, c.max_rel_err),
                           float(np.fmin(worst.pcc, c.pcc)), worst.passed and c.passed,
                           tolerance=worst.tolerance or c.tolerance)
        if not c.passed:
            failures.append(f"result #{i}: {c.reason}")
    return worst, failures
