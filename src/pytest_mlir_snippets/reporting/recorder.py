"""The controller's view of a run: a record per item, and every report built from them.

Registered on the controller and on xdist workers alike; only the controller (the
process that is no xdist worker) writes reports. Records arrive as data on test
reports (``report.mlir_record``, see ``items.base``), so ``-n 0`` and ``-n 2`` give
the same reports; an item lost with a crashed xdist worker gets its record from the
skeleton its setup report carried (``pytest_handlecrashitem``).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import json
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import pytest

from pytest_mlir_snippets.mlirtext.splitter import SnippetSource, SplitError
from pytest_mlir_snippets.model.record import ItemRecord, junit_properties
from pytest_mlir_snippets.protocol import Kind, Outcome
from pytest_mlir_snippets.reporting.partial import Selection
from pytest_mlir_snippets.reporting.shards import Plan, plan_entry
from pytest_mlir_snippets.session import RunState, is_xdist_worker

if TYPE_CHECKING:  # publishing (run reports, benchmark tables) is imported when a run ends
    from pytest_mlir_snippets.reporting.publish import Functions
    from pytest_mlir_snippets.reporting.runreport import RunInfo

FUNCTIONS_KEY = "mlir_functions"  # an xdist worker's output: the functions of the files it collected


def functions_of(path: Path) -> list[tuple[str, int]]:
    """The file's functions in order, as collection sees them (empty if unreadable, and
    for Python tests: their rows are the tests that used ``mlir_device``)."""
    if path.suffix == ".py":
        return []
    try:
        return [(fn.uid, fn.line) for fn in SnippetSource(path.read_text("utf-8")).functions]
    except (OSError, UnicodeDecodeError, SplitError):
        return []


def is_ours(item: pytest.Item) -> bool:
    """Whether ``item`` is one of the plugin's (``items.base.MlirItem``): one that has a
    record. Asked of the item, not of its class, so that reporting does not import items."""
    return callable(getattr(item, "skeleton", None))


class _Recorded(Protocol):
    def skeleton(self) -> ItemRecord: ...


def skeleton(item: pytest.Item) -> ItemRecord:
    """The record's fixed part of an item ``is_ours``."""
    return cast(_Recorded, item).skeleton()


class Recorder:
    def __init__(self, state: RunState, config: pytest.Config) -> None:
        self.state = state
        self.config = config
        self.records: dict[str, ItemRecord] = {}
        # node id -> the data the item put on its report, for a record taken as the item made it
        # (no xdist; nothing changes it after): written as it is, not serialised again
        self.published: dict[str, dict[str, Any]] = {}
        self.started: dict[str, dict[str, Any]] = {}  # skeletons of items running on xdist workers
        self.functions: Functions = {}  # input files (node ids) -> their functions ([] for runs)
        self.collected: Functions = {}  # an xdist controller's: the functions its workers collected
        self.is_worker = is_xdist_worker(config)
        self.problems: list[str] = []
        self.interrupted = ""
        self.start_time = time.strftime("%Y-%m-%d %H:%M:%S")  # a partial run's updates are marked with it
        splits, group = getattr(config.option, "splits", None), getattr(config.option, "group", None)
        self.shard = {"group": int(group), "splits": int(splits)} if splits and group else None  # pytest-split
        self.plan: Plan = []  # every item of every shard (see shards.py)
        self.selection = Selection()  # what of the inputs this run leaves out (see partial.py)

    # ----------------------------------------------------------- gathering
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The input files, and the functions of each, as collection saw them (without
        xdist: the controller of an xdist run does not collect, and learns the files
        from the records)."""
        ours = [item for item in session.items if is_ours(item)]
        self.selection.collection_finish([item.nodeid for item in ours], self.config)
        parents = {id(item.parent): item for item in ours}
        for item in parents.values():
            assert item.parent is not None
            source = getattr(item, "source", None)
            self.functions[item.parent.nodeid] = [(fn.uid, fn.line) for fn in source.functions] if source else []
        if self.is_worker:  # for the controller, which does not collect (JSON: one text to carry)
            self.config.workeroutput[FUNCTIONS_KEY] = json.dumps(self.functions)  # type: ignore[attr-defined]

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """In a CI shard: the items of all shards, as -k and -m left them. pytest-split
        picks this shard's items in a trylast hook registered after this one (in its
        pytest_configure, which comes after ours), so this one runs before it."""
        if self.shard is not None:
            self.plan = [plan_entry(skeleton(item)) for item in items if is_ours(item)]
            if self.is_worker:
                self.config.workeroutput["mlir_plan"] = self.plan  # type: ignore[attr-defined]

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.selection.deselect(item.nodeid for item in items if is_ours(item))

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[
            None, pytest.CollectReport, pytest.CollectReport]:
        """An input file's items as it made them: innermost, inside ``--lf``'s wrapper, which
        drops the items that passed last time (or answers with no items for a whole file)."""
        report: pytest.CollectReport = yield
        if isinstance(collector, pytest.File) and collector.path.suffix == ".mlir" and report.passed:
            items = [x.nodeid for x in report.result if isinstance(x, pytest.Item) and is_ours(x)]
            if items or not report.result:
                self.selection.file_collected(collector.nodeid, items)
        return report

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker's plan of the shards, the functions of the files it collected (the
        workers all collect the same), and what it left out."""
        output = getattr(node, "workeroutput", {})
        self.plan = self.plan or list(output.get("mlir_plan", []))
        self.selection.worker_down(node)
        if not self.collected and isinstance(output.get(FUNCTIONS_KEY), str):
            self.collected = {file: [(uid, line) for uid, line in functions]
                              for file, functions in json.loads(output[FUNCTIONS_KEY]).items()}

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """An xdist worker died running ``crashitem``: a crash record, from its skeleton."""
        skeleton = self.started.pop(crashitem, None)
        if skeleton is None:
            return  # not one of ours
        gateway = getattr(getattr(report, "node", None), "gateway", None)
        worker = str(getattr(gateway, "id", "?"))
        record = ItemRecord.from_json(skeleton)
        record.kind, record.outcome, record.worker = Kind.CRASH, Outcome.FAILED, worker
        record.message = f"worker '{worker}' crashed while running this item (the xdist worker process died)"
        record.signature = "the xdist worker process died while running the item"
        report.mlir_record = record.to_json()  # type: ignore[attr-defined]
        report.user_properties = junit_properties(record)  # xdist's report of a lost item has none

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        lost = self._record(report)
        result = yield
        if lost:  # after the other reporters: the teardown must follow the report it closes
            self._close_lost_item(report)
        return result

    def _record(self, report: pytest.TestReport) -> bool:
        """Keep the record a report carries; True for an item lost with an xdist worker."""
        data: dict[str, Any] | None = getattr(report, "mlir_record", None)
        if data is None:
            return False
        when: str = report.when  # "???" for an item lost with a crashed xdist worker
        if when == "setup" and report.passed:
            self.started[report.nodeid] = data
            return False
        handed = self.state.handed.pop(report.nodeid, None)
        record = handed or ItemRecord.from_json(data)
        self.records[record.nodeid] = record
        if handed is not None:
            self.published[record.nodeid] = data
        else:
            self.published.pop(record.nodeid, None)
        self.started.pop(record.nodeid, None)
        self.functions.setdefault(record.file, [])
        if when != "???":
            return False
        report.when = "call"  # it died while running; pytest-html shows call reports only
        return True

    def _close_lost_item(self, report: pytest.TestReport) -> None:
        """A lost item has no teardown report, and pytest-html and junitxml only
        finish a row on teardown: send one, so the crash shows there too. No public hook
        or object does this (xdist sends nothing for an item its dead worker lost), so the
        report is built here as a ``pytest.TestReport`` and sent through the public hook."""
        record = ItemRecord.from_json(report.mlir_record)
        teardown = pytest.TestReport(report.nodeid, report.location, report.keywords, "passed", None, "teardown",
                                     user_properties=junit_properties(record))  # junitxml writes them on teardown
        for name in ("node", "worker_id", "item_index"):  # so reporters pair it with the lost report
            if hasattr(report, name):
                setattr(teardown, name, getattr(report, name))
        self.config.hook.pytest_runtest_logreport(report=teardown)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        self.interrupted = str(excinfo.value) or "Ctrl-C" if excinfo.type is KeyboardInterrupt else excinfo.typename

    # ------------------------------------------------------------- reports
    @property
    def run_info(self) -> RunInfo:
        from pytest_mlir_snippets.reporting.runreport import RunInfo

        settings = self.state.settings
        not_run, file_of = self.selection.not_run(self.records, {r.file for r in self.records.values()})
        return RunInfo(settings.target, "compile only" if settings.skip_exec else "compile and execute",
                       not_run=not_run, interrupted=self.interrupted, file_of=file_of)

    @property
    def ran_nothing(self) -> bool:
        """Items ran, and none to an outcome: every one was skipped (unsupported, no device, ...)."""
        return bool(self.records) and all(r.outcome == Outcome.SKIPPED for r in self.records.values())

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.is_worker and self.ran_nothing and self.state.settings.strict and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED  # --mlir-strict: a green run ran something
        if not self.is_worker:
            self._failed_for_lf()
        if self.is_worker or not self.functions or self.config.option.collectonly:
            return  # nothing ran: no report, and nothing written beside the inputs
        from pytest_mlir_snippets.reporting.publish import publish

        root = self.config.rootpath
        records = list(self.records.values())
        for file, functions in self.functions.items():
            if not functions and not any(r.file == file and r.run for r in records):
                # [] from a worker (a lit test file): parsed here as before
                self.functions[file] = self.collected.get(file) or functions_of(root / file)
        json_path = self.config.getoption("mlir_json")
        shard: dict[str, Any] = {"shard": self.shard, "planned": self.plan} if self.shard is not None else {}
        from pytest_mlir_snippets.reporting.baseline import merged

        run = self.run_info
        shown, run.updated_from = merged(getattr(self.config, "cache", None), records, self.functions, run,
                                         self.start_time, self.published)
        self.problems += publish(records, self.functions, self._report_root(), run,
                                 Path(json_path) if json_path else None, root, shown, **shard)
        expectations = self.state.expectations
        if expectations is not None and self.state.settings.update_expectations:
            expectations.update(records, root)

    def _report_root(self) -> Path:
        """Where the reports go: ``--mlir-report-dir`` (the inputs' folders made there), else the rootdir."""
        folder = self.state.settings.report_dir
        if folder is None:
            return self.config.rootpath
        for file in self.functions:
            (folder / file).parent.mkdir(parents=True, exist_ok=True)
        return folder

    def _failed_for_lf(self) -> None:
        """An item skipped because its compile failed counts as failed for pytest's
        ``--lf`` (its cache's ``cache/lastfailed``, written just before: this hook is
        trylast), so that after a fix ``--lf`` reruns the execute with the compile."""
        cache: pytest.Cache | None = getattr(self.config, "cache", None)
        skipped = [r.nodeid for r in self.records.values() if r.outcome == Outcome.SKIPPED and r.failed]
        if cache is None or not skipped:
            return
        lastfailed = cache.get("cache/lastfailed", {})
        if not all(nodeid in lastfailed for nodeid in skipped):
            cache.set("cache/lastfailed", {**lastfailed, **dict.fromkeys(skipped, True)})

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.records:
            return
        from pytest_mlir_snippets.reporting.publish import summary_lines

        terminalreporter.section("MLIR snippets")
        for line, red in summary_lines(list(self.records.values()), len(self.functions), self.interrupted):
            terminalreporter.line(line, red=red, green=not red)
        if self.ran_nothing and self.state.settings.strict:  # the verdict above said that nothing ran
            terminalreporter.line("--mlir-strict: a run where nothing ran to an outcome fails (exit 5)", red=True)
        for problem in self.problems:
            terminalreporter.line(problem, yellow=True)
