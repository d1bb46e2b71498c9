"""``--mlir-bisect`` on the cpu target: a golden-mismatch's pipeline cut after each step, the
rest lowered by the target's plain pipeline (``default_pipeline(plain=True)``), each cut
run on the item's inputs and judged against its golden (``worker/triage/bisect.py`` searches).

A cut the plain pipeline does not lower is lowered again without the ownership-based
deallocation (a leak, not a different result): that pass takes structured control flow
only, and a cut after ``convert-scf-to-cf`` has none left. One that still does not lower,
or does not run, has no verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_mlir_snippets.protocol import Options, Recorded, Triage
from pytest_mlir_snippets.worker.core import Compiled, Reference, SnippetFailure
from pytest_mlir_snippets.worker.lowering import decompose, mlirtools
from pytest_mlir_snippets.worker.lowering import passes as lowering
from pytest_mlir_snippets.worker.triage import bisect

# a compile of the cut's parts with its Python steps (before, between): the backend's
Compile = Callable[[list[str], tuple[Any, Any]], Compiled]


class Cuts:
    """The item's pipeline (``item``, in parts) as steps, and the plain pipelines (``tails``,
    in the order tried) that lower the rest of a cut. ``own_steps``: the item's pipeline is
    the target's default, with its own Python steps (``plugin:decompose``) before it."""

    def __init__(self, module: str, item: list[str], tails: list[list[str]], own_steps: bool) -> None:
        self.module = module
        self.steps = self._named(item, own_steps)
        self.tails = [self._named(tail, True) for tail in tails]

    def _named(self, parts: list[str], own_steps: bool) -> list[bisect.Step]:
        collector = mlirtools.Collector("cpu")
        decomposed: bisect.Step = ("plugin:decompose", lambda module: decompose.lower(module, collector))
        return bisect.pipeline_steps(parts, ("plugin:prepare_for_llvm", lowering.prepare_for_llvm),
                                     decomposed if own_steps and decompose.needed(self.module) else None)

    def lowered(self, k: int, compile_: Compile) -> Compiled | None:
        """The cut after step ``k``, lowered by the first tail that takes it (None: none does)."""
        for tail in self.tails:
            parts, before, between = bisect.schedule(self.steps[:k + 1] + tail)
            try:
                return compile_(parts, (before, between))
            except SnippetFailure:
                continue
        return None

    def search(self, compile_: Compile, run: Callable[[Compiled, list[np.ndarray]], list[np.ndarray]],
               reference: Callable[[Compiled, list[np.ndarray]], Reference], options: Options,
               golden: Recorded | None) -> Triage:
        """``diverged_after`` and the cuts tried (``bisect.search``), each cut judged by
        ``bisect.cut_verdicts`` on its own inputs."""
        judged = bisect.cut_verdicts(options, golden, reference)
        return bisect.search([name for name, _ in self.steps], lambda k: judged(self.lowered(k, compile_), run),
                             options.deadline)
