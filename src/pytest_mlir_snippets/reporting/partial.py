"""What of its inputs a run did not run, so that its reports never pass an earlier
result off as this run's: items deselected (``-k``, ``-m``, a CI shard's pytest-split),
input files ``--lf`` did not collect (no failure in them last time), items collected
and never reached (``-x``, Ctrl-C), and any item of a snippet file's functions without
a record (``--lf`` keeps only the failed items of a file, silently).

xdist workers collect and deselect; each tells the controller through
``workeroutput`` (they all select the same). An xdist controller does not collect, so
items not reached under xdist are not listed (the run says it was interrupted).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

OUTPUT_KEY = "mlir_not_run"


class Selection:
    def __init__(self) -> None:
        self.deselected: set[str] = set()
        self.files: set[str] = set()  # input files collected without items (--lf left them out)
        self.collected: list[str] = []  # items this process was to run (not an xdist controller)

    def deselect(self, nodeids: Iterable[str]) -> None:
        self.deselected.update(nodeids)

    def collect_report(self, report: pytest.CollectReport) -> None:
        """An input file whose collection ``--lf`` skipped: a passed report with no items."""
        if report.passed and not report.result and report.nodeid.endswith(".mlir"):
            self.files.add(report.nodeid)

    def collection_finish(self, nodeids: list[str], config: pytest.Config) -> None:
        """``nodeids``: the items of ours collected and selected, to be run."""
        self.collected = nodeids
        if hasattr(config, "workerinput"):
            config.workeroutput[OUTPUT_KEY] = {  # type: ignore[attr-defined]
                "deselected": sorted(self.deselected), "files": sorted(self.files)}

    def worker_down(self, node: Any) -> None:
        data = getattr(node, "workeroutput", {}).get(OUTPUT_KEY) or {}
        self.deselected.update(data.get("deselected", []))
        self.files.update(data.get("files", []))

    def not_run(self, ran: Iterable[str], files: Iterable[str], expected: Iterable[str]) -> tuple[str, ...]:
        """Node ids of the items (and input files) not run: ``ran`` the items with a record,
        ``files`` the input files that have records, ``expected`` the items their
        functions make (``--lf`` drops the passed items of a file without deselecting them)."""
        done = set(ran)
        left = (self.deselected | set(self.collected) | set(expected)) - done
        return tuple(sorted(left)) + tuple(sorted(self.files - set(files)))
