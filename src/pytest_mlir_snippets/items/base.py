"""What every item of the plugin shares: its record, its expectation, its timeout.

Snippet stages, the ``<file>`` item of a file that cannot be split, iteration stages
and ``pytorch[benchmark]`` all end with one ``ItemRecord``, put on their test report
as data (``report.mlir_record``) in ``pytest_runtest_makereport``.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import pytest

from pytest_mlir_snippets.items.facts import judged_by, not_independent
from pytest_mlir_snippets.items.failures import (
    FAILURES,
    ItemFailure,
    MlirFailureRepr,
    Unsupported,
    failure_of,
    first_error,
    item_signature,
    shown_stderr,
)
from pytest_mlir_snippets.model.record import ZERO_COMPARED_WHY, ItemRecord, junit_properties
from pytest_mlir_snippets.protocol import (
    FunctionRequest,
    Kind,
    Outcome,
    Response,
    Stage,
    Status,
    SubjectKind,
)
from pytest_mlir_snippets.session import Subject, is_xdist_worker, run_state

CRASH_NOT_RUN = "expected to crash: not run (--mlir-run-crashers)"


def item_kwargs(parent: pytest.Collector, name: str, stage: str) -> dict[str, Any]:
    """``from_parent`` arguments for an item ``name[stage]``: pytest 9 keeps node ids
    structured (path, names, params), and the stage is the params part, as for a
    parametrized test, so that ``--lf`` and pasted node ids match."""
    parent_id: Any = getattr(parent, "id", None)
    extra = {}
    if parent_id is not None and hasattr(parent_id, "with_params"):
        extra["nodeid"] = parent_id.child(name).with_params(stage)
    return {"name": f"{name}[{stage}]", **extra}


class MlirItem(pytest.Item):
    """An item whose work runs in a sandbox worker and whose outcome is a record."""

    # set as the item runs (class defaults: 10,000s of items are made at collection)
    stage: str = ""
    subject: str = ""  # the function's unique id, or the iteration's name
    subject_kind = SubjectKind.SNIPPET
    kind: Kind | None = None  # the outcome kind (None: not decided, e.g. skipped for another's failure)
    response: Response | None = None
    expected: str | None = None
    xfail_if_fails = False  # lit XFAIL on a stage before the last: a failure is expected, a pass is fine
    skip_reason = ""
    compile_failed = False  # skipped because the compile it builds on failed
    output_in_signature = True  # its worker's output is among the lines its failure signature is chosen from
    unsupported_with_compile = True  # an unsupported compile makes it unsupported, not skipped for a failure
    timeout_budget: float | None = None  # pytest-timeout's for this item (pytest_timeout_set_timer)
    deadline: float | None = None

    # -------------------------------------------------------------- expectations
    def expect(self, status: str | None, any_failure: bool = False, last_stage: bool = True,
               reason: str = "expected to fail") -> None:
        """Hold the item to ``status`` (from an expectations file) or, with ``any_failure``
        (a lit XFAIL line), to failing somewhere: pytest's strict xfail on the last stage.
        ``"fail"`` (an IREE config's expected compile or run failure) expects any failure
        of this item, whatever its kind; ``reason`` says where that comes from."""
        settings = run_state(self.config).settings
        if status == "fail":
            self.expected = status
            self.add_marker(pytest.mark.xfail(strict=True, raises=ItemFailure, reason=reason))
            return
        if status in (None, "pass", "skip") and not any_failure:
            if status == "skip":
                self.expected = status  # skipped for its compile's expected failure: no failure of its own
            return
        if status is None:
            self.expected = "any failure"
            if last_stage:
                self.add_marker(pytest.mark.xfail(strict=True, raises=ItemFailure, reason="expected any failure"))
            else:
                self.xfail_if_fails = True
            return
        self.expected = status
        if status == Kind.CRASH.value and not settings.run_crashers:
            self.add_marker(pytest.mark.xfail(run=False, reason=CRASH_NOT_RUN))
        else:
            raises = FAILURES.get(status, ItemFailure)
            self.add_marker(pytest.mark.xfail(strict=True, raises=raises, reason=f"expected {status}"))

    # --------------------------------------------------------------- timeouts
    def timeout(self) -> float:
        """Seconds left for this item's next sandbox call: ``--mlir-timeout`` per call,
        within pytest-timeout's time for the whole item when it has one."""
        limit = self.call_limit()
        if self.deadline is None:
            return limit
        return round(max(0.1, min(limit, self.deadline - time.monotonic())), 2)

    def call_limit(self) -> float:
        """Seconds one sandbox call of this item may take: ``--mlir-timeout``."""
        return run_state(self.config).settings.timeout

    def start_clock(self) -> None:
        self.deadline = None if not self.timeout_budget else time.monotonic() + self.timeout_budget

    def runtest(self) -> None:
        self.start_clock()
        try:
            self.run_stage()
        except ItemFailure as failure:
            if self.xfail_if_fails:
                pytest.xfail(f"XFAIL ({failure.response.kind.value}): {failure.response.message.splitlines()[0]}"
                             if failure.response.message else f"XFAIL ({failure.response.kind.value})")
            raise

    def run_stage(self) -> None:
        raise NotImplementedError

    def source_text(self) -> tuple[str, str]:
        """(what the item runs, its name) for the HTML report's extras."""
        return "", ""

    def show_output(self, response: Response) -> None:
        """What the worker printed for a passing item (a snippet's ``printMemrefF32``, as
        MLIR's integration tests print) as pytest's "Captured stdout call" section: ``-rP``
        shows it, junit writes it with ``junit_logging=system-out``, pytest-html too. A
        failure's report shows it already (``failures.format_failure``)."""
        if response.ok and response.stderr.strip():
            self.add_report_section("call", "stdout", response.stderr)

    @property
    def runs_on(self) -> str:  # the target of this item's requests
        return run_state(self.config).settings.target

    @property
    def compiled_subject(self) -> Subject:  # what this item's compile is of (RunState.compile's key)
        return Subject(self.subject_kind, str(self.path), self.subject, self.runs_on)

    def compile_first(self, request: Callable[[], FunctionRequest], group: str | None = None,
                      cache: bool = True) -> Response:
        """The compile this item builds on (``RunState.compiled_first``), so that a compile failure
        is the compile's whatever the order of items: this item then skips ("compile failed"),
        or ends as unsupported with it (``unsupported_with_compile``)."""
        state = run_state(self.config)
        prior = state.compiled_first(self.compiled_subject, request, self.timeout(), group=group, cache=cache)
        if not prior.ok:
            self.response = prior
            if prior.kind is Kind.UNSUPPORTED and self.unsupported_with_compile:
                self.fail(prior)
            self.compile_failed = True
            self.skip(f"compile failed ({prior.kind.value}): {self.compile_failure(prior)}")
        return prior

    def compile_failure(self, prior: Response) -> str:  # a failed compile in the words of a skip
        return first_error(prior)

    def hold_to_golden(self, response: Response) -> None:
        """A passing verdict must have compared something independent with results computed
        at run time: one that compared nothing (golden ``none``, or a reference that could not
        be computed), one that agrees with the plugin's own lowering only (``self``), and one
        whose results were folded or whose every check is vacuous (``computed``) are skips;
        ``--mlir-require-golden`` fails them as ``no-golden``."""
        if not response.ok:
            return
        why = not_independent(response)
        if not why:
            if response.verdict is not None and response.verdict.golden is not None:
                self.add_report_section("call", "golden", judged_by(response.verdict))
            if response.verdict and response.verdict.compared == 0:  # a pass that says so
                self.response = replace(response, message=response.message or ZERO_COMPARED_WHY)
            return
        if run_state(self.config).settings.require_golden:
            self.response = replace(response, kind=Kind.NO_GOLDEN, message=f"--mlir-require-golden: {why}")
            self.fail(self.response)
        self.kind = None
        self.skip(why)

    def skip(self, reason: str, skipped: Callable[..., BaseException] = pytest.skip.Exception) -> NoReturn:
        """Skip; the report puts it at the item's file line, not here (``record_report``)."""
        self.skip_reason = reason
        raise skipped(reason)

    def fail(self, response: Response) -> NoReturn:
        """End with ``response``'s outcome: a skip for ``unsupported`` (of kind ``skip`` when the
        machine lacks the device: ``Response.skip``), else a failure of its kind; with
        ``--mlir-strict`` an ``unsupported`` fails too (a missing device still skips)."""
        self.kind = None if response.skip else response.kind
        strict = run_state(self.config).settings.strict
        if response.kind is Kind.UNSUPPORTED and (response.skip or not strict):
            self.skip(response.message, pytest.skip.Exception if response.skip else Unsupported)
        raise failure_of(response)

    # ----------------------------------------------------------------- records
    def skeleton(self) -> ItemRecord:
        """The record's fixed part: what the item is."""
        assert self.parent is not None
        return ItemRecord(nodeid=self.nodeid, name=self.name, file=self.parent.nodeid, function=self.subject,
                          stage=Stage(self.stage), target=run_state(self.config).settings.target,
                          expected=self.expected or "", subject_kind=self.subject_kind)

    def describe(self, record: ItemRecord, response: Response) -> None:
        """Fill in what the response says (diagnostics at file locations, metrics, ...)."""
        record.message = response.message
        record.metrics = dict(response.metrics)
        if response.verdict is not None:
            record.golden, record.computed = response.verdict.golden, response.verdict.computed
        record.output = shown_stderr(response.stderr)
        record.seconds = response.seconds

    def record_report(self, report: pytest.TestReport) -> None:
        """Put this item's record on ``report`` when the report decides the outcome (and a
        skeleton on a passed setup report under xdist: the controller needs it if the
        worker dies while the item runs)."""
        if report.skipped and self.skip_reason and not hasattr(report, "wasxfail"):
            # a skip's longrepr is (path, line, message): the item's line in the user's file,
            # which ``-rs`` shows, rather than the line of this module that raised it
            path, line = self.reportinfo()[:2]
            report.longrepr = (os.fspath(path), (line or 0) + 1, f"Skipped: {self.skip_reason}")
        shown = isinstance(report.longrepr, MlirFailureRepr)  # the failure as MLIR's words, not a traceback
        if shown:
            report.longrepr = str(report.longrepr)  # plain text: xdist's serializer takes no str subclass
        final = report.when == "call" or (report.when == "setup" and not report.passed)
        if not final and not (report.when == "setup" and is_xdist_worker(self.config)):
            return
        record = self.skeleton()
        if final:
            self._complete(record, report, shown)
            if getattr(self.config.option, "xmlpath", None):  # the junit report's properties
                self.user_properties.extend(junit_properties(record))
            if not is_xdist_worker(self.config):
                run_state(self.config).handed[self.nodeid] = record
        report.mlir_record = record.to_json()  # type: ignore[attr-defined]

    def _complete(self, record: ItemRecord, report: pytest.TestReport, shown: bool) -> None:
        if self.response is not None:
            self.describe(record, self.response)
        if self.compile_failed:
            record.compile_failed, record.failure_stage = True, Stage.COMPILE
        wasxfail = getattr(report, "wasxfail", None)
        record.outcome = Outcome("xfailed" if wasxfail is not None and report.skipped else
                                 "xpassed" if wasxfail is not None else report.outcome)
        record.duration = round(report.duration, 6)
        if self.kind is not None:
            record.kind = self.kind
        elif wasxfail is not None and report.when == "setup":
            record.kind = Status.NOT_RUN  # expected to crash: not run unless asked
        elif report.skipped:
            record.kind = Status.SKIP
        elif report.failed:
            record.kind = Status.ERROR  # not an MLIR outcome: a bug, or a hook that raised
        if report.skipped and wasxfail is not None:
            record.message = record.message or str(wasxfail)  # MLIR's words for the expected failure
        elif report.skipped:
            record.message = self.skip_reason or _skip_message(report) or record.message
        if report.failed and not shown:
            record.details = report.longreprtext
            record.message = record.message or report.longreprtext.strip().splitlines()[-1]
        if record.failed and not record.signature:
            record.signature = item_signature(self.response, self.path, getattr(self, "original_line", None),
                                              self.output_in_signature, record.message or record.details)


def _skip_message(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]).removeprefix("Skipped: ") if isinstance(longrepr, tuple) else ""


def relative(config: pytest.Config, path: Path) -> str:
    """``path`` relative to the rootdir, as node ids write it."""
    try:
        return path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return path.as_posix()
