"""The interestingness test of ``mlir-snippets reduce``: whether a candidate snippet still
fails as the item did, judged by the plugin's own sandbox worker (compile, then execute).

"As the item did": the same outcome kind and the same first diagnostic (its message,
without its location and with its SSA value names blanked, both of which move as the
snippet shrinks: ``failed to legalize operation 'torch.aten.erfinv': %7 = ...(%6)`` is
``%8 = ...(%7)`` in the snippet it came from); for a crash or a timeout, the same kind;
for a golden-mismatch against a reference, the same kind (the reference follows the
candidate: a smaller snippet still mismatches, its numbers differ). A golden-mismatch
against recorded outputs is judged against those outputs, which do not follow the
candidate: it keeps the function's interface (its type) and the same failing output
positions (per result, the elements outside the item's tolerance) on the recorded inputs,
so that ``return %arg0`` does not pass for a smaller ``softplus``.

A candidate of an item that failed to compile is not run: one that compiles is not interesting.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pytest_mlir_snippets.client import Client, Sandbox
from pytest_mlir_snippets.protocol import AppliedTolerance, Kind, Options, Recorded
from pytest_mlir_snippets.triage.opdeletion import function_type

Positions = tuple[tuple[int, ...], ...]  # per result, the flat indices of its elements outside the tolerance

KIND_ONLY = (Kind.GOLDEN_MISMATCH, Kind.CRASH, Kind.TIMEOUT)
_VALUE = re.compile(r"%[\w$.-]+(?:#\d+)?")  # an SSA value's name in a printed op: %7, %arg0, %0#1


@dataclass
class Spec:
    """What a candidate is run as: the item's function, target and pipeline, its recorded
    golden data (the file it is read beside), and the failure to keep (``kind``, ``first``)."""

    function: str
    file: str
    functions_in_file: int
    target: str = "cpu"
    pipeline: str | None = None
    timeout: float = 60.0
    kind: str = ""
    first: str = ""
    compiles: bool = True  # whether the item's compile passed (else its candidates are only compiled)
    interface: str | None = None  # a mismatch against recorded outputs: the function's type, kept
    positions: Positions | None = None  # ... and its failing output positions, kept
    tolerance: AppliedTolerance | None = None  # the tolerance the item's execute judged by

    def options(self) -> Options:
        return Options(target=self.target, pipeline=self.pipeline)

    def golden(self) -> Recorded | None:
        from pytest_mlir_snippets.golden.recorded import load_recorded

        return load_recorded(Path(self.file), self.function, self.functions_in_file)


def failure_of(client: Client, text: str, spec: Spec, golden: Recorded | None) -> tuple[str, str, bool]:
    """(outcome kind, what must stay the same of it, whether it compiled) of ``text`` run as
    the item runs: its compile, then, when that passes, its execute."""
    options = spec.options()
    response = client.compile(text, spec.function, options, Recorded(golden.inputs) if golden else None, spec.timeout)
    compiled = response.ok
    if compiled and spec.compiles:
        response = client.execute(text, spec.function, options, golden, spec.timeout)
    if response.kind is Kind.GOLDEN_MISMATCH and response.verdict is not None:
        spec.tolerance = spec.tolerance or response.verdict.tolerance
    if response.kind in KIND_ONLY or response.ok:
        return response.kind.value, "", compiled
    errors = [d.message for d in response.diagnostics if d.severity == "error"]
    first = errors[0] if errors else response.message.splitlines()[0] if response.message else ""
    return response.kind.value, _VALUE.sub("%", first), compiled


def interesting(client: Client, text: str, spec: Spec, golden: Recorded | None) -> bool:
    if spec.positions is not None and golden is not None:
        return function_type(text, spec.function) == spec.interface and \
            failing_positions(client, text, spec, golden) == spec.positions
    return failure_of(client, text, spec, golden)[:2] == (spec.kind, spec.first)


def against_recorded(spec: Spec, golden: Recorded | None) -> bool:
    """Whether the item's failure is a mismatch with recorded outputs (judged by position)."""
    return spec.kind == Kind.GOLDEN_MISMATCH.value and golden is not None and golden.outputs is not None


def failing_positions(client: Client, text: str, spec: Spec, golden: Recorded) -> Positions | None:
    """Per result of ``text`` run on the recorded inputs, the flat indices of the elements
    outside the item's tolerance of the recorded outputs (a result of another shape: all of
    its own); None when it does not run or gives another number of results."""
    import numpy as np

    from pytest_mlir_snippets.golden.compare import Tolerance, compare

    response = client.run(text, spec.function, spec.options(), golden.inputs, timeout=spec.timeout)
    if not response.ok or response.values is None or golden.outputs is None \
            or len(response.values) != len(golden.outputs):
        return None
    used = spec.tolerance
    rule = Tolerance() if used is None else Tolerance(used.atol, used.rtol, used.ulp, scaled=False)
    found = []
    for actual, expected in zip(response.values, golden.outputs):
        a, e = np.asarray(actual).reshape(-1), np.asarray(expected).reshape(-1)
        if np.asarray(actual).shape != np.asarray(expected).shape:
            found.append(tuple(range(-1, -a.size - 2, -1)))  # negative: apart from any element's index
            continue
        found.append(tuple(i for i in range(a.size) if not compare(a[i:i + 1], e[i:i + 1], rule=rule).passed))
    return tuple(found)


def opened(spec: Spec) -> Sandbox:
    """A sandbox worker for ``spec``'s target; it opens the device with ``spec``'s options
    before the first execute, and again after a candidate replaced the worker."""
    return Sandbox(spec.target, device=spec.options())
