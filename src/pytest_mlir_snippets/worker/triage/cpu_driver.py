"""A failed execute's driver module on the cpu target (``Op.DRIVER``): the function as the
plugin compiled it, up to its last Python step (``plugin:prepare_for_llvm``, between the
default pipeline's two parts), with a ``@main`` (``worker/triage/driver.py``) that calls it on
the item's inputs and compares its results with the item's golden, at its tolerance.

The answer's ``info``: ``module`` (the driver's text), ``pipeline`` (the rest of the
lowering, for ``mlir-opt``), ``step`` (the Python step the IR was saved after), ``entry``
(``@main``'s name, for ``mlir-runner -e``), ``libraries`` (upstream's runtime libraries it
needs, as lit names them: ``mlir_c_runner_utils``), ``golden`` (what it compares with).
"""

from __future__ import annotations

import numpy as np

from pytest_mlir_snippets.golden.checks import Check
from pytest_mlir_snippets.golden.recorded import specializable
from pytest_mlir_snippets.protocol import Driver, DriverFacts, Kind, Response
from pytest_mlir_snippets.worker.core import Compiled, SnippetFailure
from pytest_mlir_snippets.worker.judging.judge import expected_outputs, run_inputs, tolerance_rule
from pytest_mlir_snippets.worker.lowering import decompose, mlirtools
from pytest_mlir_snippets.worker.lowering import passes as lowering
from pytest_mlir_snippets.worker.targets.cpu import SMALL, CpuBackend, default_pipeline, frees_own_buffers
from pytest_mlir_snippets.worker.triage.driver import DriverUnsupported, Pair, main_text, slot_of
from pytest_mlir_snippets.worker.triage.drivercompare import Bound

STEP = "plugin:prepare_for_llvm"
# the libraries every driver needs: vector.print's (printF64, printString...), printMemref*
LIBRARIES = ["mlir_c_runner_utils", "mlir_runner_utils"]


def driver(backend: CpuBackend, compiled: Compiled, request: Driver) -> Response:
    """The driver of ``request``'s function; without ``compare`` (the
    item crashed: its golden was never computed), one that says ``PASS`` once the call
    returns."""
    if request.options.pipeline:
        raise SnippetFailure(Kind.UNSUPPORTED, "no driver for a --mlir-pipeline lowering: it has no "
                             "Python step to start after")
    checks = compiled.kept.checks
    options, golden = request.options, request.recorded
    inputs = run_inputs(compiled, options, golden)
    expected, basis = None, "none (the call must return)"
    if checks:  # its own golden: each check's operands, compared as the check compares them
        basis = f"the snippet's {len(checks)} check(s) ({', '.join(sorted({c.name for c in checks}))})"
    elif request.compare:
        expected, basis = expected_outputs(compiled, options, golden, inputs, backend.reference)
    rule = tolerance_rule(compiled, options, golden)
    parts = [np.stack([v.real, v.imag], -1) if v.dtype.kind == "c" else v for v in map(np.asarray, expected or [])]
    tolerances: list[Bound | None] = [  # complex values part by part, as golden/compare.py compares them
        (*rule.resolve(value.dtype, np.asarray(value, np.float64)), rule.ulp) if value.dtype.kind == "f" else None
        for value in parts]
    module, function = request.module, request.function
    small = SMALL.search(module) is not None
    first, rest = default_pipeline(own_deallocation=frees_own_buffers(module), small_floats=small)
    constants = specializable(golden.inputs) if golden else {}
    with lowering.lowered(module, function, [first, "builtin.module()"], backend.name, constants,
                          before=decompose.lower if decompose.needed(module) else None) as low:
        func = mlirtools.find_function(low.module, function)
        try:
            args = [slot_of(str(t)) for t in func.type.inputs]
            results = [slot_of(str(t)) for t in func.type.results]
            entry = "main" if function != "main" and "@main(" not in str(low.module) else "driver_main"
            text = main_text(function, args, results, inputs, expected, tolerances, entry,
                             check_pairs(checks) if checks else None)
        except DriverUnsupported as why:
            raise SnippetFailure(Kind.UNSUPPORTED, f"no driver for @{function}: {why}") from None
        saved = str(low.module)
    merged = _merged(saved, text)
    libraries = [*LIBRARIES, *(["mlir_float16_utils"] if "bf16" in merged or "f16" in merged else []),
                 *(["mlir_apfloat_wrappers"] if small else [])]
    return Response(Kind.PASS, driver=DriverFacts(basis, merged, rest, STEP, entry, libraries))


def check_pairs(checks: list[Check]) -> list[Pair]:
    """Each check as the driver compares it: (its number, its actual and expected results, the
    bound of a float comparison: none for an exact one, atol and rtol for ``almost_eq``, the
    ULP allowance for ``close``)."""
    pairs: list[Pair] = []
    for check in checks:
        rule = "almost_eq" if check.rule == "eq_or_almost_eq" else check.rule
        if check.callee:
            raise DriverUnsupported(f"check #{check.index} ({check.name}) runs in a region or a callee")
        if rule in ("eq", "bits"):
            bound: Bound | None = (0.0, 0.0, 0)
        elif rule == "almost_eq":
            bound = (check.tolerance, check.rtol, 0)
        elif rule == "close" and check.min_ulp == 0:
            bound = (0.0, 0.0, check.max_ulp)
        else:
            raise DriverUnsupported(f"check #{check.index} ({check.name}) is not a comparison the driver makes")
        pairs.append((check.index, check.first, check.first + 1, bound))
    return pairs


def _merged(module: str, driver: str) -> str:
    """``driver`` (globals and ``@main``) inside ``module``, checked by MLIR and made ready
    for the rest of the lowering as the function was (``prepare_for_llvm``)."""
    from mlir import ir

    end = module.rstrip().rfind("}")
    text = module[:end] + driver + "\n}\n"
    with mlirtools.context_for(ir, text), ir.Location.unknown():
        try:
            parsed = ir.Module.parse(text)
        except Exception as error:  # a bug of the driver's, said in one line
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the driver module does not verify: {error}") from None
        lowering.prepare_for_llvm(parsed)
        return str(parsed)
