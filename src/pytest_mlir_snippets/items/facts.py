"""What an item's answer says about it, on its record: for a snippet, the arguments and
results, the golden in words, a failure's pass; for an optimization run's stage, the
compile it read; and the facts ``info`` keeps. A pass's golden and tolerance in words.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict

from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.model.recordinfo import RecordInfo
from pytest_mlir_snippets.protocol import (
    NO_INDEPENDENT,
    CompileFacts,
    Computed,
    Golden,
    IterationFacts,
    PytorchFacts,
    Response,
    Triage,
    Verdict,
)

NOTHING = "nothing to compare"
FOLDED = "computed at compile time: the constant folder was checked, not code generation"
VACUOUS = "nothing computed: every check compares values as given (constants or arguments, no op between)"
UNCOMPUTED = {Computed.COMPILE_TIME: FOLDED, Computed.NOTHING: VACUOUS}


def snippet_facts(record: ItemRecord, response: Response, file_line: Callable[[int], int | None]) -> None:
    """``file_line``: a line of the module sent as a line of the user's file (a check's)."""
    facts, triage, verdict = response.facts or CompileFacts(), response.triage or Triage(), response.verdict
    record.inputs, record.outputs = list(facts.inputs), list(facts.outputs)
    specs = response.input_specs  # (shape, element type) of each input
    record.input_shapes, record.input_dtypes = [s for s, _ in specs], [e for _, e in specs]
    record.reference = response.reference
    record.failing_pass = triage.failing_pass
    record.diverged_after = triage.diverged_after
    record.baked = facts.baked
    if verdict is not None and verdict.golden_report is not None:  # tt-mlir's, kept whole
        record.golden_report = json.dumps(verdict.golden_report, sort_keys=True)
    # a compile cache hit; the IREE input route taken; a file the installed IREE cannot parse;
    # the snippet's constants fed at run time, or kept constant and why; the comparison's
    # tolerance; arguments and results fed and read in a wide type (f8 as f32); the elements compared
    record.info = RecordInfo(
        cache=response.cache or None, iree_route=facts.iree_route or None,
        iree_cannot_parse=triage.iree_cannot_parse or None, fed_inputs=facts.fed_inputs or None,
        kept_constants=facts.kept_constants or None, widened=facts.widened or None,
        tolerance=asdict(verdict.tolerance) if verdict and verdict.tolerance else None,
        compared=verdict.compared if verdict else None,
        checks=[{"check": c.check, "line": c.line and file_line(c.line), "computed": c.computed and c.computed.value}
                for c in verdict.checks] if verdict and verdict.checks else None)


def iteration_facts(record: ItemRecord, response: Response) -> None:
    """An optimization run's stage: the compile it read, what the PTX holds, when a benchmark
    was measured and against what, the PyTorch reference's compile, a failed compile's pass."""
    record.reference = response.reference
    record.failing_pass = (response.triage or Triage()).failing_pass
    found, pytorch = response.iteration or IterationFacts(), response.pytorch or PytorchFacts()
    record.compiled_digest = found.compiled_digest
    record.info = RecordInfo(
        mma=found.mma or None, digest=found.digest or None, reference_ms=found.reference_ms,
        measured=found.measured or None, compile_error=pytorch.compile_error or None,
        host_ops=None if found.host_ops is None else [asdict(op) for op in found.host_ops],
        kernels=None if found.kernels is None else [asdict(k) for k in found.kernels],
        torch_compile=pytorch.torch_compile or None, compiles=found.compiles or None)


def judged_by(verdict: Verdict) -> str:
    """A pass's golden and tolerance, as ``-rA`` (``-rP``) shows it under the passed item."""
    rule = verdict.tolerance
    tolerance = "exact (no float result)" if rule is None else f"atol {rule.atol:.3g}, rtol {rule.rtol:.3g}" + (
        f", {rule.ulp} ULP" if rule.ulp else "") + (f" ({rule.source})" if rule.source else "")
    golden = verdict.golden.value if verdict.golden is not None else "?"
    return f"golden: {golden}: {verdict.reference or golden}\ntolerance: {tolerance}"


def not_independent(response: Response) -> str:
    """Why a passing answer is no pass ("": it is one): it compared nothing (golden ``none``,
    or a reference that could not be computed), it agrees with the plugin's own lowering only
    (``self``), or its results were folded or its every check is vacuous (``computed``)."""
    basis = response.verdict.golden if response.verdict else None
    computed = response.verdict.computed if response.verdict else None
    reference = response.reference
    if basis == Golden.NONE:
        return reference if reference.startswith(NO_INDEPENDENT) else f"ran without error; {NOTHING}"
    if basis == Golden.SELF:
        return f"{NO_INDEPENDENT}: agrees with the plain lowering ({reference})"
    return UNCOMPUTED.get(computed, "") if computed is not None else ""
