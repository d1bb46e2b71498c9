"""The interestingness test of ``mlir-snippets reduce``: whether a candidate snippet still
fails as the item did, judged by the plugin's own sandbox worker (compile, then execute).

"As the item did": the same outcome kind and the same first diagnostic (its message,
without its location and with its SSA value names blanked, both of which move as the
snippet shrinks: ``failed to legalize operation 'torch.aten.erfinv': %7 = ...(%6)`` is
``%8 = ...(%7)`` in the snippet it came from); for a golden-mismatch, a crash
or a timeout, the same kind (a smaller snippet still mismatches: its numbers differ).

A candidate of an item that failed to compile is not run: one that compiles is not interesting.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pytest_mlir_snippets.client import Client, Sandbox
from pytest_mlir_snippets.protocol import Kind, Options, Recorded

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
    if response.kind in KIND_ONLY or response.ok:
        return response.kind.value, "", compiled
    errors = [d.message for d in response.diagnostics if d.severity == "error"]
    first = errors[0] if errors else response.message.splitlines()[0] if response.message else ""
    return response.kind.value, _VALUE.sub("%", first), compiled


def interesting(client: Client, text: str, spec: Spec, golden: Recorded | None) -> bool:
    return failure_of(client, text, spec, golden)[:2] == (spec.kind, spec.first)


def opened(spec: Spec) -> Sandbox:
    """A sandbox worker for ``spec``'s target; it opens the device with ``spec``'s options
    before the first execute, and again after a candidate replaced the worker."""
    return Sandbox(spec.target, device=spec.options())
