"""The golden check of an execute, shared by every target that runs in the worker:
what a run produced against the function's own checks, the recorded outputs, or a
reference (an interpreter, a second compiler), and what the verdict compared (its
golden basis, ``protocol.Golden``: the response's ``verdict.golden``).

A function with nothing to compare (no results, no buffer it wrote, no checks) gets
golden ``none`` and no metrics: it ran without error, and that is all it says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from pytest_mlir_snippets.golden import compare as goldens
from pytest_mlir_snippets.golden.checks import judge as judge_checks
from pytest_mlir_snippets.golden.inputs import DTYPES, TypeSpec, make_inputs
from pytest_mlir_snippets.protocol import (
    NO_INDEPENDENT,
    AppliedTolerance,
    CheckComputed,
    Computed,
    Diagnostic,
    Golden,
    Kind,
    Options,
    Recorded,
    Verdict,
)
from pytest_mlir_snippets.worker.core import Compiled, Executed, Reference, SnippetFailure
from pytest_mlir_snippets.worker.lowering import checkcalls

NOTHING = "nothing to compare: no results, no buffer written, no checks"


def judge_outputs(compiled: Compiled, options: Options, golden: Recorded | None, inputs: list[np.ndarray],
                  actual: list[np.ndarray], reference: Callable[[], Reference]) -> Executed:
    """``actual`` (what a run on ``inputs`` produced) against the snippet's own checks, else
    the recorded outputs, else what ``reference()`` gives; metrics and the verdict (the
    golden basis, the tolerance used and whether the results were computed at run time),
    or a golden-mismatch. A reference that cannot be computed leaves golden ``none`` with
    the reason: no independent golden, not an error of the item."""
    args, results = compiled.signature
    verdict = Verdict(input_specs=[(s.dims, s.element) for s in args])
    if compiled.kept.checks:
        _checks_computed(compiled, actual, verdict)
        return _judge_checks(compiled, actual, verdict)
    wrote = not results and _wrote(args, inputs, actual)
    if not results and options.outputs is not None:  # a // mlir-snippets: outputs= line: those compared
        keep = written(args, options.outputs)
        actual, reference = [actual[k] for k in keep], _kept(reference, keep)
    verdict.computed = computed(compiled, range(len(results)), actual)
    if golden and golden.outputs is not None:
        produced = results or [args[i] for i in _memrefs(args, options.outputs)]  # written in place
        basis = Reference([], golden.source, golden.basis)
        verdict.reference, verdict.golden = basis.name, basis.golden
        try:
            basis.outputs = recorded(golden.outputs, produced, "output", options.lenient_shapes)
        except SnippetFailure as failure:
            failure.verdict = verdict
            raise
    elif not results and not wrote:
        verdict.reference, verdict.golden = NOTHING, Golden.NONE
        return Executed({}, verdict)
    else:
        try:
            basis = reference()
        except SnippetFailure as failure:  # the golden could not be computed: not the item's failure
            why = failure.message.splitlines()[0] if failure.message else failure.kind.value
            verdict.reference, verdict.golden = f"{NO_INDEPENDENT}: {why}", Golden.NONE
            return Executed({}, verdict)
    rule = tolerance_rule(compiled, options, golden)
    comparison, failures = goldens.compare_all(actual, basis.outputs, min_pcc=options.pcc, rule=rule)
    verdict.reference, verdict.golden = basis.name, basis.golden
    verdict.compared = sum(int(np.asarray(a).size) for a in actual)
    if comparison.tolerance is not None:
        verdict.tolerance = AppliedTolerance(**comparison.tolerance)
    if not comparison.passed:
        raise SnippetFailure(Kind.GOLDEN_MISMATCH, f"results differ from the {basis.name}: " + "; ".join(failures),
                             metrics=comparison.metrics(), verdict=verdict)
    # empty results: their shapes were compared, no value was (no PCC over zero values)
    return Executed(comparison.metrics() if any(np.asarray(a).size for a in actual) else {}, verdict)


def run_inputs(compiled: Compiled, options: Options, golden: Recorded | None) -> list[np.ndarray]:
    """What a run of ``compiled`` is given: the recorded inputs, else seeded ones (``golden.inputs``)
    followed by the values of the snippet's own constants fed at run time (``kept.fed``);
    unsupported where the compile found a type no run can feed or read."""
    if compiled.kept.unfeedable:
        raise SnippetFailure(Kind.UNSUPPORTED, compiled.kept.unfeedable)
    args = compiled.signature[0]
    if golden:
        return recorded(golden.inputs, args, "input", options.lenient_shapes)
    fed = compiled.kept.fed
    if fed:  # the snippet's own constants, fed at run time (worker/lowering/ireeops.py)
        own = make_inputs(args[:len(args) - len(fed)], options.seed, options.dynamic_dim, options.input_range)
        return [*own, *(np.array(v, copy=True) for v in fed)]
    return make_inputs(args, options.seed, options.dynamic_dim, options.input_range)


def expected_outputs(compiled: Compiled, options: Options, golden: Recorded | None, inputs: list[np.ndarray],
                     reference: Callable[[Compiled, Options, list[np.ndarray]], Reference]) -> tuple[
                         list[np.ndarray], str]:
    """What a run's results are compared with, and its name: the recorded outputs, else
    ``reference``'s (in the results' element types, where they are the plugin's), for a
    reproducer that compares them itself."""
    args, results = compiled.signature
    produced = results or [spec for spec in args if spec.kind == "memref"]
    if golden and golden.outputs is not None:
        return recorded(golden.outputs, produced, "output", options.lenient_shapes), golden.source
    found = reference(compiled, options, inputs)
    outputs = [np.asarray(v) for v in found.outputs]
    if len(outputs) == len(produced):  # else the reproducer says how many it has of each
        outputs = [v.astype(s.dtype, copy=False) if s.element in DTYPES else v for v, s in zip(outputs, produced)]
    return outputs, found.name


def tolerance_rule(compiled: Compiled, options: Options, golden: Recorded | None) -> goldens.Tolerance:
    """The rule a comparison of ``compiled``'s results uses: the recorded data's own (IREE's
    thresholds), else the anchors with the ULP allowance of the ops it uses; numbers the
    user set (``--mlir-atol``, a ``// mlir-snippets:`` line) in their place."""
    own = golden.tolerance if golden else None
    if own is not None:
        rule = goldens.Tolerance(atol=None, rtol=None, source=own.source, scaled=False, types=own.types)
    else:
        ops = compiled.kept.ulp_ops
        ulp = goldens.op_allowance(ops)
        rule = goldens.Tolerance(ulp=ulp, source=goldens.ANCHOR + (f", {ulp} ULP for {', '.join(ops)}" if ulp else ""))
    return rule.with_user(options.atol, options.rtol, options.ulp,
                          options.tolerance_source or "--mlir-atol/--mlir-rtol")


def computed(compiled: Compiled, actual_side: Iterable[int], actual: list[np.ndarray]) -> Computed | None:
    """``computed``: ``runtime`` when a result of the compiled code depends on a value given
    at run time (of a function with checks, a check's operand: which side is the actual one
    differs between conventions, and the expected side is a constant), ``compile-time``
    when none does. None when the target does not say (``Kept``: ``runtime_results`` per
    result, or ``runtime`` for the whole function, both from ``judging.dataflow``) or when
    those results have no element (nothing to compute)."""
    indices = [i for i in actual_side if i < len(actual) and np.asarray(actual[i]).size]
    if not indices:  # no result, or none with an element: nothing was to be computed
        return None
    if compiled.kept.runtime is not None:  # decided for the whole function (the IREE targets)
        return Computed.RUNTIME if compiled.kept.runtime else Computed.COMPILE_TIME
    depends = compiled.kept.runtime_results
    if depends is None:
        return None
    runtime = any(depends[i] for i in indices if i < len(depends))
    return Computed.RUNTIME if runtime else Computed.COMPILE_TIME


def _memrefs(args: list[TypeSpec], outputs: tuple[int, ...] | None) -> list[int]:
    """The argument numbers of the memref arguments a function without results writes: those
    ``outputs`` names (a ``// mlir-snippets: outputs=`` line), else every one."""
    memrefs = [i for i, spec in enumerate(args) if spec.kind == "memref"]
    if outputs is None:
        return memrefs
    wrong = [i for i in outputs if i not in memrefs]
    if wrong:
        raise SnippetFailure(Kind.EXECUTE_ERROR, f"outputs={','.join(map(str, outputs))}: argument(s) "
                             f"{', '.join(f'#{i}' for i in wrong)} of {len(args)} not a memref the function can "
                             f"write (its memref arguments: {', '.join(f'#{i}' for i in memrefs) or 'none'})")
    return [i for i in memrefs if i in outputs]


def written(args: list[TypeSpec], outputs: tuple[int, ...]) -> list[int]:
    """Of a run's values of a function without results (its memref arguments after the call,
    in order), the indices of those ``outputs`` names."""
    memrefs = [i for i, spec in enumerate(args) if spec.kind == "memref"]
    return [memrefs.index(i) for i in _memrefs(args, outputs)]


def _kept(reference: Callable[[], Reference], keep: list[int]) -> Callable[[], Reference]:
    """``reference`` giving only the values at ``keep`` (a reference gives every memref argument)."""
    def kept() -> Reference:
        found = reference()
        if len(found.outputs) > max(keep, default=-1):
            found.outputs = [found.outputs[k] for k in keep]
        return found
    return kept


def _checks_computed(compiled: Compiled, actual: list[np.ndarray], verdict: Verdict) -> None:
    """Each check's ``computed`` and the function's: a vacuous check (both its values reach
    it as given: ``worker/lowering/checks.py``) is ``nothing`` and does not count; a function
    whose every check is vacuous computed nothing."""
    checks = compiled.kept.checks
    verdict.checks = [CheckComputed(c.name, c.line, Computed.NOTHING if c.vacuous else computed(
        compiled, [] if c.callee else [c.first, c.first + 1], actual)) for c in checks]
    counted = [c for c in checks if not c.vacuous]
    verdict.computed = computed(compiled, [i for c in counted if not c.callee for i in (c.first, c.first + 1)],
                                actual) if counted else Computed.NOTHING


def _wrote(args: list[TypeSpec], inputs: list[np.ndarray], actual: list[np.ndarray]) -> bool:
    """Whether a function without results changed one of its memref arguments (``actual``
    holds them after the call, ``inputs`` before it)."""
    before = [v for v, spec in zip(inputs, args) if spec.kind == "memref"]
    return any(np.asarray(a).tobytes() != np.asarray(b).tobytes() for a, b in zip(actual, before))


def _judge_checks(compiled: Compiled, actual: list[np.ndarray], verdict: Verdict) -> Executed:
    """A snippet with check ops is its own golden: each check judged as the StableHLO
    interpreter (or IREE's check module) does (``golden.checks``), a failed one at its line."""
    checks = compiled.kept.checks
    executions = checkcalls.executions(compiled.kept)
    metrics, failed = judge_checks(checks, actual, executions)
    verdict.compared = sum(int(np.asarray(actual[c.first]).size) for c in checks
                           if not c.callee and c.first < len(actual)) + sum(int(np.asarray(a).size)
                                                                            for _, a, _ in executions)
    names = ", ".join(sorted({c.name for c in checks}))
    verdict.reference, verdict.golden = f"the snippet's {len(checks)} check(s) ({names})", Golden.CHECKS
    if failed:
        lines = [f"check #{v.check.index} {v.check.name} failed: {v.message}" for v in failed]
        diagnostics = [Diagnostic("error", f"{v.check.name} failed: {v.message}", v.check.line, v.check.column)
                       for v in failed]
        raise SnippetFailure(Kind.GOLDEN_MISMATCH, f"{len(failed)} of {len(checks)} check(s) failed (at the "
                             "lines below): " + "; ".join(lines), diagnostics, metrics=metrics, verdict=verdict)
    return Executed(metrics, verdict)


def recorded(values: list[np.ndarray], specs: list[TypeSpec], what: str, lenient: bool = False) -> list[np.ndarray]:
    """Recorded inputs or outputs, checked against the signature and viewed in its
    element types (bf16 and unsigned data are often stored as raw integers). Shapes
    must match exactly (``lenient``: up to unit dimensions, ``--mlir-lenient-shapes``);
    an output that does not is a golden-mismatch, an input an execute-error."""
    if len(values) != len(specs):
        found = ", ".join(f"{what}_{i}" for i in range(len(values))) or "none"
        expected = ", ".join(f"{what}_{i}" for i in range(len(specs))) or "none"
        raise SnippetFailure(Kind.EXECUTE_ERROR, f"{len(values)} recorded {what}(s), the function has {len(specs)}: "
                             f"found {found}, expected {expected}")
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
