"""Which reference a target's runs are judged against: the one place that chooses a golden.

``judge.judge_outputs`` takes, in order, the snippet's own checks, its recorded outputs
(a recorded test's; an optimization run's PyTorch outputs), else a reference: the first
of the target's ``REFERENCES`` that takes the function. A reference that cannot take it
(``Unavailable``) passes to the next and its reason is said in the name of the one used;
one that fails (``SnippetFailure``) ends the search: no independent golden. tt-mlir's
targets are judged by tt-mlir's own golden report (``Golden.TT``, ``targets/tt.py``).

Adding a golden: a ``protocol.Golden`` value, a source here (``SOURCES``) and its place in the
``golden_references`` of the targets it serves (``registry.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from pytest_mlir_snippets.protocol import Golden, Kind, Options
from pytest_mlir_snippets.registry import TARGETS
from pytest_mlir_snippets.worker.core import Compiled, Reference, SnippetFailure
from pytest_mlir_snippets.worker.judging import torcheval
from pytest_mlir_snippets.worker.judging.goldenprocess import INTERPRETER, TORCH, GoldenProcess, GoldenUnavailable
from pytest_mlir_snippets.worker.judging.reference import OtherTarget, share

ANOTHER = ""  # the table's key for a reference request: another target's worker asks this one
TORCH_INPUT = ("torch", "onnx")  # front ends every compiler here imports and lowers with torch-mlir
SHARED = "shares torch-mlir's lowering with the code under test"


class Unavailable(Exception):
    """This reference cannot take the function (why, in words); the next one is tried."""


class PlainLowering(Protocol):
    """The cpu target's plain lowering (no fusion, no tiling, no vectorization), in this worker."""

    def run_plain(self, compiled: Compiled, inputs: list[np.ndarray]) -> list[np.ndarray]: ...


class Goldens:
    """A worker's references: ``plain``, the cpu target's plain lowering where this worker
    has one; the workers of other targets (``OtherTarget``) and StableHLO's interpreter
    and PyTorch's ATen (``GoldenProcess``), each in a process of its own started at its first use."""

    def __init__(self, plain: PlainLowering | None = None) -> None:
        self._plain = plain
        self._workers: dict[str, OtherTarget] = {}
        self._evaluators: dict[str, GoldenProcess] = {}

    def reference(self, target: str, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference:
        """The reference for a run of ``compiled`` on ``target`` (``ANOTHER``: asked by another
        target's worker) on ``inputs``; a ``SnippetFailure`` when none can be computed."""
        why_not: list[str] = []
        for source in REFERENCES[target]:
            try:
                found = source(self, compiled, options, inputs)
            except Unavailable as why:
                why_not.append(str(why))
                continue
            if found is not None:
                return Reference(found.outputs, found.name + (f" ({'; '.join(why_not)})" if why_not else ""),
                                 found.golden)
        raise SnippetFailure(Kind.EXECUTE_ERROR, "no reference takes it: " + "; ".join(why_not))

    def worker(self, target: str) -> OtherTarget:
        if target not in self._workers:
            self._workers[target] = OtherTarget(target)
        return self._workers[target]

    def evaluator(self, golden: str) -> GoldenProcess:
        """The process of a golden that evaluates op by op (``goldenprocess.INTERPRETER``, ``TORCH``)."""
        if golden not in self._evaluators:
            self._evaluators[golden] = GoldenProcess(golden)
        return self._evaluators[golden]

    def close(self) -> None:
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()
        for evaluator in self._evaluators.values():
            evaluator.close()
        self._evaluators.clear()

    def plain_lowering(self) -> PlainLowering:
        assert self._plain is not None, "this worker has no cpu lowering"
        return self._plain


# A source gives a reference, None where it does not apply, or raises Unavailable (try the
# next) or SnippetFailure (no independent golden).
Source = Callable[[Goldens, Compiled, Options, list[np.ndarray]], Reference | None]


def interpreter(goldens: Goldens, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference | None:
    """StableHLO's reference interpreter, for a StableHLO snippet, in a process of its own:
    its abort or hang is the golden's (``Unavailable``, the next is tried), not the item's."""
    if compiled.facts.front_end != "stablehlo":
        return None
    try:
        outputs = goldens.evaluator(INTERPRETER).outputs("StableHLO's interpreter", compiled.kept.source,
                                                         compiled.function, options, inputs, share(options))
    except GoldenUnavailable as why:
        raise Unavailable(str(why)) from None
    return Reference(outputs, "StableHLO reference interpreter", Golden.INTERPRETER)


def pytorch(goldens: Goldens, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference | None:
    """PyTorch's ATen, op by op, for a torch-dialect function; ONNX's reference
    implementation for an ONNX import (``judging/torcheval.py``)."""
    if compiled.facts.front_end not in TORCH_INPUT:
        return None
    source, name = compiled.kept.source, torcheval.name_for(compiled.kept.source)
    try:  # in a process of its own: a crash of ATen's kernels is the golden's, not the item's
        outputs = goldens.evaluator(TORCH).outputs(name, source, compiled.function, options, inputs, share(options))
    except GoldenUnavailable as why:
        raise Unavailable(str(why)) from None
    return Reference(outputs, name, Golden.TORCH)


def independent(compiled: Compiled, compiler: str) -> None:
    """Unavailable where ``compiler`` and the code under test share torch-mlir's importer
    and lowering (torch and ONNX input): a second opinion that is not one."""
    if compiled.facts.front_end in TORCH_INPUT:
        raise Unavailable(f"{compiler} {SHARED}")


def plain_cpu(goldens: Goldens, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference:
    """The cpu target's plain lowering: a second compiler for another target."""
    independent(compiled, "the cpu target")
    return Reference(goldens.plain_lowering().run_plain(compiled, inputs), "cpu target (plain lowering)",
                     Golden.DIFFERENTIAL_CPU)


def iree_cpu(goldens: Goldens, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference:
    """IREE's compiler, in a worker of its own (``worker/judging/reference.py``), where it is installed."""
    independent(compiled, "iree-cpu")
    if TARGETS["iree-cpu"].absent():
        raise Unavailable("no second compiler installed (pytest-mlir-snippets[iree] gives iree-cpu)")
    try:
        return goldens.worker("iree-cpu").outputs(compiled.kept.source, compiled.function, options, inputs)
    except SnippetFailure as failure:
        raise Unavailable(f"iree-cpu could not take it: {failure.message.splitlines()[0]}") from None


def cpu_worker(goldens: Goldens, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference:
    """The cpu target's reference (its ``ANOTHER`` row), from a cpu worker of this worker's
    own: upstream's bindings cannot load beside IREE's."""
    return goldens.worker("cpu").outputs(compiled.kept.source, compiled.function, options, inputs)


def own_plain(goldens: Goldens, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference:
    """The plugin's own plain lowering of the cpu target's function: a last resort, not independent."""
    return Reference(goldens.plain_lowering().run_plain(compiled, inputs), "plugin's own plain lowering (cpu)",
                     Golden.SELF)


# a target's references by the names it declares them by (``registry.Target.golden_references``)
SOURCES: dict[str, Source] = {source.__name__: source for source in (pytorch, interpreter, plain_cpu, iree_cpu,
                                                                     cpu_worker, own_plain)}
# the run's target -> its references, best first
REFERENCES: dict[str, tuple[Source, ...]] = {
    **{name: tuple(SOURCES[source] for source in target.golden_references)
       for name, target in TARGETS.items() if target.golden_references},
    ANOTHER: (pytorch, interpreter, plain_cpu),  # the cpu target's, asked by an IREE worker
}
