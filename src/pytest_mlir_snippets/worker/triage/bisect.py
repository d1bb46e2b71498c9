"""Which step of a pipeline made an execute's results wrong (``--mlir-bisect``).

A golden-mismatch is compiled again with its pipeline cut after step k (steps 0..k as the
item ran them, then the target's plain lowering takes the rest: the *plain tail*), run on
the same inputs and judged against the same golden. The steps are the pipeline's passes,
each as written (``failingpass.steps``), and the plugin's own Python steps between them
(``plugin:<step>``), the vocabulary of ``failing_pass``.

The search is a binary search between a cut that matches and one that does not: the cut
right after import (no step: the plain tail alone) and the whole pipeline. It ends on a
step after which the results stop matching while they matched before it: ``diverged_after``.
When several steps flip the verdict back and forth (not monotone), it names one of them,
not necessarily the first. A cut the plain tail cannot lower or run has no verdict and is
passed over. Special answers: ``front-end`` (even the cut right after import mismatches:
the snippet, or its golden, is wrong before any step) and ``translation`` (every cut
matches, the whole pipeline included: the translation to LLVM IR and code generation).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_mlir_snippets.protocol import Kind, Options, Recorded, Triage
from pytest_mlir_snippets.worker import native_io
from pytest_mlir_snippets.worker.core import Compiled, Reference, SnippetFailure
from pytest_mlir_snippets.worker.judging.judge import judge_outputs, run_inputs
from pytest_mlir_snippets.worker.triage.failingpass import steps as passes_of

FRONT_END = "front-end"
TRANSLATION = "translation"
VERDICTS = {True: "matches", False: "differs", None: "no verdict (did not lower or run)"}

# a step: its name (a pass as written, or plugin:<step>) and what runs it (a pipeline that
# runs that pass alone at its place, or a Python function of the module)
Step = tuple[str, "str | Callable[[Any], None]"]
# runs a cut on inputs: its outputs
Run = Callable[[Compiled, list[np.ndarray]], list[np.ndarray]]


def pipeline_steps(parts: list[str], between: Step, before: Step | None = None) -> list[Step]:
    """The steps of a pipeline given in parts (``between`` runs between them, ``before``
    ahead of the first), one pass each."""
    found: list[Step] = [before] if before else []
    for i, part in enumerate(parts):
        if i:
            found.append(between)
        found += passes_of(part)
    return found


def schedule(steps: list[Step]) -> tuple[list[str], Callable[[Any, Any], None], Callable[[Any], None]]:
    """``steps`` as ``passes.lowered`` runs a pipeline: its parts (one pass each), what runs
    ahead of the first (``before``) and what runs before each later one (``between``)."""
    parts: list[str] = []
    gaps: list[list[Callable[[Any], None]]] = [[]]
    for _, run in steps:
        if isinstance(run, str):
            parts.append(run)
            gaps.append([])
        else:
            gaps[-1].append(run)
    assert not gaps[-1], "a cut ends with the plain tail's passes"
    later = iter(gaps[1:])

    def before(module: Any, diagnostics: Any) -> None:
        for run in gaps[0]:
            run(module)

    def between(module: Any) -> None:
        for run in next(later):
            run(module)

    return parts, before, between


def cut_verdicts(options: Options, golden: Recorded | None,
                 reference: Callable[[Compiled, list[np.ndarray]], Reference],
                 inputs: list[np.ndarray] | None = None) -> Callable[[Compiled | None, Run], bool | None]:
    """A target's ``verdict`` for ``search``: a cut (None: it did not lower) run on ``inputs``
    (None: the cut's own ``run_inputs``) and judged against the item's golden: True when it
    matches, False on a golden-mismatch, None when it fails otherwise. The golden a reference
    gives is computed once, on the first cut that asks: every cut has the same source and inputs."""
    known: list[Reference] = []

    def verdict(cut: Compiled | None, run: Run) -> bool | None:
        if cut is None:
            return None
        try:
            given = inputs if inputs is not None else run_inputs(cut, options, golden)

            def golden_of() -> Reference:
                if not known:
                    known.append(reference(cut, given))
                return known[0]

            with native_io.quiet_stdout():
                outputs = run(cut, given)
            judge_outputs(cut, options, golden, given, outputs, golden_of)
            return True
        except SnippetFailure as failure:
            return False if failure.kind is Kind.GOLDEN_MISMATCH else None

    return verdict


def search(names: list[str], verdict: Callable[[int], bool | None], deadline: float | None) -> Triage:
    """Bisect ``names`` (the steps): ``verdict(k)`` says whether the cut after step k
    (-1: right after import) matches the golden (None: no verdict, it did not lower or
    run). The answer: ``diverged_after`` and ``bisect_cuts``, one line per cut tried."""
    tried: dict[int, bool | None] = {}
    spent = 0.0

    def judge(k: int) -> bool | None:
        nonlocal spent
        start = time.monotonic()
        tried[k] = verdict(k)
        spent = max(spent, time.monotonic() - start)
        return tried[k]

    def answer(name: str, note: str = "") -> Triage:
        lines = [f"cut after {names[k] if k >= 0 else 'import'}: {VERDICTS[v]}" for k, v in sorted(tried.items())]
        return Triage(diverged_after=name, bisect_cuts=lines + ([note] if note else []))

    first = judge(-1)
    if first is False:
        return answer(FRONT_END)
    if first is None:
        return answer("", "the plain lowering of the snippet as imported does not run: nothing to bisect against")
    if not names:
        return answer("", "the pipeline has no steps")
    last = len(names) - 1
    if judge(last):
        return answer(TRANSLATION)
    low, high = -1, last
    pending = list(range(low + 1, high))
    while pending:
        if deadline is not None and time.monotonic() + 2 * spent > deadline:
            return answer(names[high], f"stopped at --mlir-bisect-timeout: the divergence is after "
                          f"{names[low] if low >= 0 else 'import'}, at or before {names[high]}")
        k = pending[len(pending) // 2]
        found = judge(k)
        if found is None:
            pending.remove(k)
        elif found:
            low, pending = k, [j for j in pending if j > k]
        else:
            high, pending = k, [j for j in pending if j < k]
    unsure = "" if high == low + 1 else (f"the cuts between {names[low] if low >= 0 else 'import'} and "
                                         f"{names[high]} have no verdict: the divergence is at or before {names[high]}")
    return answer(names[high], unsure)
