"""``assert_close``: the plugin's golden comparison (``golden.compare``) for Python tests.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.items.failures import GoldenMismatch
from pytest_mlir_snippets.protocol import Kind, Response


def assert_close(actual: Any, expected: Any, *, atol: float | None = None, rtol: float | None = None,
                 pcc: float = 0.99) -> dict[str, float]:
    """Compare ``actual`` with ``expected`` (an array, or lists of arrays) as execute items
    do: floats within ``atol``/``rtol`` (default by element type) and a PCC of at least
    ``pcc`` (where defined: not for constant arrays); integers and booleans exactly; NaN
    and infinity positions alike. Returns the metrics (max_abs_err, max_rel_err, pcc);
    raises ``GoldenMismatch`` (an ``AssertionError``) naming the results that differ and
    the tolerance used, with the metrics."""
    __tracebackhide__ = True
    import numpy as np

    from pytest_mlir_snippets.golden.compare import compare_all

    def results(value: Any) -> list[Any]:
        """A list of arrays (what ``mlir_device.run`` returns) as it is; anything else one array."""
        several = isinstance(value, list | tuple) and any(isinstance(v, np.ndarray) for v in value)
        return [np.asarray(v) for v in value] if several else [np.asarray(value)]

    comparison, failures = compare_all(results(actual), results(expected), atol, rtol, pcc)
    metrics = comparison.metrics()
    if not comparison.passed:
        rule = comparison.tolerance
        used = f" (tolerance: atol {rule['atol']:.3g}, rtol {rule['rtol']:.3g}, {rule['source']})" if rule else ""
        message = "results differ" + used + ": " + "; ".join(failures)
        text = message + "\nmetrics: " + ", ".join(f"{k}={v:.6g}" for k, v in metrics.items())
        raise GoldenMismatch(Response(Kind.GOLDEN_MISMATCH, message, metrics=metrics), text)
    return metrics
