"""The controller's view of a run: a record per item, and every report built from them.

Registered on the controller and on xdist workers alike; only the controller
(the process without ``workerinput``) writes reports. Built from
``pytest_runtest_logreport``, so ``-n 0`` and ``-n 2`` give the same reports,
items lost with a crashed xdist worker included.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets.mlirtext.splitter import SnippetSource, SplitError
from pytest_mlir_snippets.reporting.record import ItemRecord, snippet_tally
from pytest_mlir_snippets.reporting.runreport import RunInfo, write_atomic, write_reports
from pytest_mlir_snippets.session import RunState

SNIPPET_SUFFIXES = ("[compile]", "[execute]", "::<file>")


_RUN_ITEM = re.compile(r"model_linalg\.mlir::(?:v\d+|pytorch|run)\[\w+\]$")


def is_snippet_node(nodeid: str) -> bool:
    """A snippet item's node id (an optimization run's items are not: runreport has them)."""
    return nodeid.endswith(SNIPPET_SUFFIXES) and ".mlir::" in nodeid and not _RUN_ITEM.search(nodeid)


def functions_of(path: Path) -> list[tuple[str, int]]:
    """The file's functions in order, as collection sees them (empty if unreadable)."""
    try:
        return [(fn.uid, fn.line) for fn in SnippetSource(path.read_text("utf-8")).functions]
    except (OSError, UnicodeDecodeError, SplitError):
        return []


class Recorder:
    def __init__(self, state: RunState, config: pytest.Config) -> None:
        self.state = state
        self.config = config
        self.records: dict[str, ItemRecord] = {}
        self.files: set[str] = set()  # node-id paths of the input files
        self.functions: dict[str, list[tuple[str, int]]] = {}  # of the files collected here
        self.is_worker = hasattr(config, "workerinput")
        self.problems: list[str] = []

    # ----------------------------------------------------------- gathering
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        parents = {id(item.parent): item for item in session.items}  # a file's items share their parent
        for item in parents.values():
            if is_snippet_node(item.nodeid):
                file = item.nodeid.split("::")[0]
                self.files.add(file)
                source = getattr(item, "source", None)
                if source is not None:
                    self.functions[file] = [(fn.uid, fn.line) for fn in source.functions]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.files.update(nodeid.split("::")[0] for nodeid in ids if is_snippet_node(nodeid))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        lost = self._record(report)  # before the other reporters: they see the properties added
        result = yield
        if lost:  # after them: the teardown must follow the report it closes
            self._close_lost_item(report)
        return result

    def _record(self, report: pytest.TestReport) -> bool:
        """Keep the record of a final report; True for an item lost with an xdist worker."""
        if not is_snippet_node(report.nodeid) or any(k == "mlir_run_stage" for k, _ in report.user_properties):
            return False
        when: str = report.when  # "???" for an item lost with a crashed xdist worker
        final = when == "call" or (when in ("setup", "???") and not report.passed)
        if not final or (report.nodeid in self.records and when != "call"):
            return False
        record = ItemRecord.from_report(report, self.state.settings.target)
        self.records[report.nodeid] = record
        self.files.add(record.file)
        if when != "???":
            return False
        report.user_properties += [("mlir_kind", record.kind), ("mlir_stage", record.stage),
                                   ("mlir_worker", record.worker)]
        report.when = "call"  # it died while running; pytest-html shows call reports only
        return True

    def _close_lost_item(self, report: pytest.TestReport) -> None:
        """A lost item has no teardown report, and pytest-html and junitxml only
        finish a row on teardown: send one, so the crash shows there too."""
        teardown = pytest.TestReport(report.nodeid, report.location, report.keywords, "passed", None, "teardown",
                                     user_properties=list(report.user_properties))
        for name in ("node", "worker_id", "item_index"):  # so reporters pair it with the lost report
            if hasattr(report, name):
                setattr(teardown, name, getattr(report, name))
        self.config.hook.pytest_runtest_logreport(report=teardown)

    # ------------------------------------------------------------- reports
    @property
    def run_info(self) -> RunInfo:
        settings = self.state.settings
        return RunInfo(settings.target, "compile only" if settings.skip_exec else "compile and execute")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.is_worker or not self.files or self.config.option.collectonly:
            return  # nothing ran: no report, and nothing written beside the inputs
        root = self.config.rootpath
        records = list(self.records.values())
        functions = {file: self.functions[file] if file in self.functions else functions_of(root / file)
                     for file in self.files}
        self.problems += write_reports(records, functions, root, self.run_info)
        if self.state.expectations is not None and self.state.settings.update_expectations:
            self.state.expectations.update(records, root)
        json_path = self.config.getoption("mlir_json")
        if json_path:
            try:
                write_atomic(Path(json_path), json.dumps(self.to_json(functions), indent=1) + "\n")
            except OSError as error:
                self.problems.append(f"could not write {json_path}: {error.strerror or error}")

    def to_json(self, functions: dict[str, list[tuple[str, int]]]) -> dict[str, Any]:
        return records_json(list(self.records.values()), functions, self.run_info, self.config.rootpath)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.records:
            return
        terminalreporter.section("MLIR snippets")
        for line, red in summary_lines(list(self.records.values())):
            terminalreporter.line(line, red=red, green=not red)
        for problem in self.problems:
            terminalreporter.line(problem, yellow=True)


def records_json(records: list[ItemRecord], functions: dict[str, list[tuple[str, int]]], run: RunInfo,
                 rootdir: Path) -> dict[str, Any]:
    """What ``--mlir-json`` writes and ``mlir-snippets report`` reads."""
    return {
        "version": 1, "target": run.target, "mode": run.mode, "rootdir": str(rootdir),
        "files": {file: [list(f) for f in fns] for file, fns in sorted(functions.items())},
        "items": [r.to_json() for r in sorted(records, key=lambda r: r.nodeid)],
    }


def summary_lines(records: list[ItemRecord]) -> list[tuple[str, bool]]:
    """The closing lines: counts per outcome kind, then the verdict (text, is it bad)."""
    counts = Counter(r.label for r in records)
    _, succeeded, failed, unsupported = snippet_tally(records)
    files = len({r.file for r in records})
    note = f" ({unsupported} unsupported on this target)" if unsupported else ""
    verdict = (f"{failed} snippet(s) failed across {files} file(s){note}" if failed else
               f"all {succeeded} snippet(s) succeeded across {files} file(s){note}")
    return [("items per outcome: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())), False),
            (verdict, bool(failed))]
