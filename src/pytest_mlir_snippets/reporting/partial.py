"""What of its inputs a run did not run, so that its reports never pass an earlier
result off as this run's: items deselected (``-k``, ``-m``, a CI shard's pytest-split),
input files ``--lf`` did not collect (no failure in them last time), items collected
and never reached (``-x``, Ctrl-C), and the items of a file that ``--lf`` dropped
(it keeps only the failed items of a file, silently). Each is known by its node id as
pytest gave it, and by the node id of its input file.

xdist workers collect and deselect; each tells the controller through
``workeroutput`` (they all select the same). An xdist controller does not collect, so
items not reached under xdist are not listed (the run says it was interrupted).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from pytest_mlir_snippets.session import is_xdist_worker

OUTPUT_KEY = "mlir_not_run"


class Selection:
    def __init__(self) -> None:
        self.file_of: dict[str, str] = {}  # items of ours (node ids) -> their input file's node id
        self.made: set[str] = set()  # the items the input files made, before --lf kept the failed ones
        self.deselected: set[str] = set()
        self.files: set[str] = set()  # input files collected without items (--lf left them out)
        self.collected: list[str] = []  # items this process was to run (not an xdist controller)

    def file_collected(self, file: str, items: list[str]) -> None:
        """An input file (its node id) and the node ids of the items it made, as it made them
        (``recorder``'s innermost wrapper of ``pytest_make_collect_report``: before ``--lf``
        drops the items that passed last time); none: ``--lf`` skipped the whole file."""
        if not items:
            self.files.add(file)
        self.made.update(items)
        self.file_of.update(dict.fromkeys(items, file))

    def deselect(self, nodeids: Iterable[str]) -> None:
        self.deselected.update(nodeids)

    def collection_finish(self, nodeids: list[str], config: pytest.Config) -> None:
        """``nodeids``: the items of ours collected and selected, to be run; the items their
        files made that are neither were dropped by ``--lf``: deselected, silently."""
        self.collected = nodeids
        self.deselected |= self.made - set(nodeids) - self.deselected
        if is_xdist_worker(config):
            config.workeroutput[OUTPUT_KEY] = {  # type: ignore[attr-defined]
                "deselected": {n: self.file_of.get(n, "") for n in sorted(self.deselected)},
                "files": sorted(self.files)}

    def worker_down(self, node: Any) -> None:
        data = getattr(node, "workeroutput", {}).get(OUTPUT_KEY) or {}
        deselected = data.get("deselected", {})
        self.deselected.update(deselected)
        self.file_of.update({n: file for n, file in deselected.items() if file})
        self.files.update(data.get("files", []))

    def not_run(self, ran: Iterable[str], files: Iterable[str]) -> tuple[tuple[str, ...], dict[str, str]]:
        """Node ids of the items (and input files) not run, ``ran`` being the items with a
        record and ``files`` the input files that have records; and the input file of each
        such item."""
        left = (self.deselected | set(self.collected)) - set(ran)
        return (tuple(sorted(left)) + tuple(sorted(self.files - set(files))),
                {n: self.file_of[n] for n in sorted(left) if n in self.file_of})
