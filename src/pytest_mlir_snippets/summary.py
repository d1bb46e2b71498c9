"""Outcome kinds gathered from test reports on the controller, and the terminal summary.

Built from ``pytest_runtest_logreport`` so that it is the same with and without
pytest-xdist: the user properties set on the workers travel with each report.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from .protocol import Kind
from .state import RunState

SNIPPET_STAGES = ("[compile]", "[execute]")
_LOST = re.compile(r"worker '([^']+)' crashed while running")


def snippet_of(nodeid: str) -> str:
    return nodeid.rsplit("[", 1)[0] if nodeid.endswith(SNIPPET_STAGES) else nodeid


class Summary:
    def __init__(self, state: RunState) -> None:
        self.state = state
        self.failed_snippets: set[str] = set()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        node = report.nodeid
        if "mlir_kind" in props:
            if report.when == "call":
                kind = str(props["mlir_kind"])
                self.state.kinds[node] = kind
                if kind not in (Kind.PASS.value, Kind.UNSUPPORTED.value, "skip") or "mlir_compile_kind" in props:
                    self.failed_snippets.add(snippet_of(node))
            elif report.failed:  # an error in teardown
                self.failed_snippets.add(snippet_of(node))
        elif report.failed and node.endswith(SNIPPET_STAGES):
            # an item lost with a crashed xdist worker, or an error in setup
            lost = _LOST.search(str(report.longrepr))
            kind = Kind.CRASH.value if lost else "error"
            self.state.kinds.setdefault(node, kind)
            self.failed_snippets.add(snippet_of(node))
            if lost:  # later reporters (junit, html) see the kind and the worker too
                report.user_properties += [("mlir_kind", kind), ("mlir_stage", node.rsplit("[", 1)[1][:-1]),
                                           ("mlir_worker", lost.group(1))]

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        kinds = self.state.kinds
        if not kinds:
            return
        snippets = {snippet_of(node) for node in kinds}
        unsupported = {snippet_of(n) for n, k in kinds.items() if k == Kind.UNSUPPORTED.value}
        unsupported -= self.failed_snippets
        files = {s.split("::", 1)[0] for s in snippets}
        terminalreporter.section("MLIR snippets")
        counts = Counter(kinds.values())
        terminalreporter.line("items per outcome: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
        note = f" ({len(unsupported)} unsupported on this target)" if unsupported else ""
        failed = len(self.failed_snippets & snippets)
        if failed:
            terminalreporter.line(f"{failed} snippet(s) failed across {len(files)} file(s){note}", red=True)
        else:
            passed = len(snippets) - len(unsupported)
            terminalreporter.line(f"all {passed} snippet(s) succeeded across {len(files)} file(s){note}",
                                  green=True)
