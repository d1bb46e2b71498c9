"""``mlir-snippets export-lit FILE::FUNC [--out PATH]``: one function of a snippet file as
an upstream-style integration test (``// RUN:`` and ``// CHECK:`` lines over the driver
module of ``worker/triage/cpu_driver.py``), on the cpu target with the plugin's defaults:
the recorded inputs and outputs beside the file, else seeded inputs and the golden the
item would use; a ``// mlir-snippets:`` line's tolerance above the function.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from pytest_mlir_snippets.client import Sandbox
from pytest_mlir_snippets.golden.recorded import RecordedDataError, load_recorded
from pytest_mlir_snippets.mlirtext.directives import DirectiveError, directive
from pytest_mlir_snippets.protocol import Options
from pytest_mlir_snippets.settings import DEFAULT_TIMEOUT
from pytest_mlir_snippets.triage.litexport import lit_test
from pytest_mlir_snippets.triage.subject import SubjectError, find


class ExportError(Exception):
    """Why a function cannot be exported, in one line."""


def export_lit(spec: str, timeout: float = DEFAULT_TIMEOUT) -> str:
    """The integration test for ``spec`` (``FILE::FUNC``, FUNC as in the node id, a
    ``[stage]`` after it ignored); ``timeout``: seconds for the worker's
    compile and run of it, as an item's ``--mlir-timeout``."""
    try:
        path, source, function = find(spec)
    except SubjectError as error:
        raise ExportError(str(error)) from None
    file, name, functions = str(path), function.uid, source.functions
    try:
        golden = load_recorded(path, function.name, len(functions))
        found = directive(function.comments)
    except (RecordedDataError, DirectiveError) as error:
        raise ExportError(f"{file}::{name}: {error}") from None
    options = Options(target="cpu", atol=found.atol, rtol=found.rtol, ulp=found.ulp,
                      tolerance_source=found.text if not found.empty else "", input_range=found.inputs)
    sandbox = Sandbox("cpu")
    try:
        answer = sandbox.driver(source.split(function).text, function.name, options, golden, timeout=timeout)
    finally:
        sandbox.close()
    if not answer.ok:
        first = answer.message.splitlines()[0] if answer.message else answer.kind.value
        raise ExportError(f"{file}::{name}: {answer.kind.value}: {first}")
    if answer.driver is None:
        raise ExportError(f"{file}::{name}: the worker sent no driver")
    return lit_test(answer.driver, function.name, f"{file}::{name}, exported by mlir-snippets export-lit")
