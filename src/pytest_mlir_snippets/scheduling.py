"""The xdist scheduler (``pytest_xdist_make_scheduler``, with ``-n`` and the default
``--dist load``): xdist's ``LoadScheduling``, except that the items of one optimization
run go to one worker together, so that the run is compiled once and its [benchmark]
runs the compile its [compile] made, on the worker that made it. Node ids stay as they
are (``--dist loadgroup`` would rename them).

The controller knows the items by their node ids only: an optimization run's items are
those of its ``model_linalg.mlir`` (``items/iteration.py``).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScheduling

from pytest_mlir_snippets.model.layout import MODEL

_RUN_FILE = f"{MODEL}::"


def run_of(nodeid: str) -> str | None:
    """The run (its model file, as the node id names it) an item belongs to, or None."""
    at = nodeid.find(_RUN_FILE)
    if at < 0 or (at and nodeid[at - 1] != "/"):
        return None
    return nodeid[:at + len(MODEL)]


class RunScheduling(LoadScheduling):  # type: ignore[misc]  # xdist has no type information
    """Sends what ``LoadScheduling`` would, and with an optimization run's item the run's
    other pending items (they are pending together: xdist puts a crashed worker's back)."""

    _runs: dict[int, str] | None = None  # collection index -> its run, for items of runs

    def _send_tests(self, node: Any, num: int) -> None:
        if self._runs is None:
            self._runs = {i: run for i, nodeid in enumerate(self.collection or ())
                          if (run := run_of(nodeid)) is not None}
        runs = self._runs
        chosen: list[int] = self.pending[:num]
        wanted = {runs[i] for i in chosen if i in runs}
        if not wanted:
            super()._send_tests(node, num)
            return
        chosen += [i for i in self.pending[num:] if runs.get(i) in wanted]
        taken = set(chosen)
        self.pending[:] = [i for i in self.pending if i not in taken]
        self.node2pending[node].extend(chosen)
        node.send_runtest_some(chosen)
