"""The record of a Python test that used ``mlir_device``: stage ``call``, the test's name as
its function, no golden of its own; the kinds and diagnostics of the compile and run
calls it made. It travels on the test report as snippet items' records do
(``report.mlir_record``), so every report lists Python tests beside snippet files.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import pytest

from pytest_mlir_snippets.api.device import DEVICE, MlirDevice
from pytest_mlir_snippets.items.base import relative
from pytest_mlir_snippets.items.failures import ItemFailure, Unsupported, failure_signature
from pytest_mlir_snippets.model.record import ItemRecord, junit_properties
from pytest_mlir_snippets.protocol import Kind, Outcome, Stage, Status, SubjectKind
from pytest_mlir_snippets.session import is_xdist_worker


def record_python_test(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """Put the record of ``item`` (a test that requested ``mlir_device``) on ``report``: the
    final one on the report that decides the outcome, a skeleton on a passed setup report
    under xdist (the controller's record of the test if its xdist worker dies)."""
    device = item.stash.get(DEVICE, None)
    if device is None:
        return
    final = report.when == "call" or (report.when == "setup" and not report.passed)
    if not final and not (report.when == "setup" and is_xdist_worker(item.config)):
        return
    line = item.location[1]
    record = ItemRecord(nodeid=item.nodeid, name=item.name, file=relative(item.config, item.path), function=item.name,
                        stage=Stage.CALL, target=device.target, line=line + 1 if line is not None else 0,
                        subject_kind=SubjectKind.PYTHON)
    if final:
        complete(record, device, call, report)
        item.user_properties.extend(junit_properties(record))
    report.mlir_record = record.to_json()  # type: ignore[attr-defined]


def complete(record: ItemRecord, device: MlirDevice, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """The outcome: the kind of the MLIR failure that ended the test, else pass, skip or
    error (a failure that is not MLIR's: an assert of the test's own)."""
    wasxfail = getattr(report, "wasxfail", None)
    record.outcome = Outcome("xfailed" if wasxfail is not None and report.skipped else
                             "xpassed" if wasxfail is not None else report.outcome)
    record.duration = round(report.duration, 6)
    error = call.excinfo.value if call.excinfo is not None else None
    record.kind = Kind.PASS
    if isinstance(error, ItemFailure):
        record.kind = error.response.kind
        record.message = error.response.message
        record.metrics = dict(error.response.metrics)
    elif isinstance(error, Unsupported):
        record.kind, record.message = Kind.UNSUPPORTED, str(error.msg)
    elif report.skipped and wasxfail is None:
        record.kind, record.message = Status.SKIP, str(getattr(error, "msg", "") or report.longreprtext)
    elif report.failed or wasxfail is not None:
        record.kind = Status.ERROR  # not an MLIR outcome: the test's own assert, a bug
        record.message = report.longreprtext.strip().splitlines()[-1] if report.longreprtext.strip() else ""
    if report.failed:
        record.details = report.longreprtext
    record.info.calls = [c.to_json() for c in device.calls]
    failed = [c for c in device.calls if c.kind != Kind.PASS.value]
    record.diagnostics = [line for c in failed for line in c.diagnostics]
    record.output = "".join(c.output for c in failed)
    record.failure_stage = failed[-1].call if failed and record.kind not in (Kind.PASS, Status.SKIP) else ""
    record.seconds = round(sum(c.seconds for c in device.calls), 6)
    if record.failed:
        record.signature = failure_signature([line for c in failed for line in c.signature_lines],
                                             record.message or record.details)
