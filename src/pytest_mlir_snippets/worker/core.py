"""The worker's core types, below lowering, targets and optrun (which all use them): a
snippet-level failure (``SnippetFailure``), a compiled snippet (``Compiled``, with what it
keeps for later steps, ``Kept``) and a reference's outputs (``Reference``).
``targets/base.py`` re-exports them for backends.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_mlir_snippets.protocol import CompileFacts, Diagnostic, Golden, IterationFacts, Kind, Triage, Verdict

if TYPE_CHECKING:
    from pytest_mlir_snippets.golden.checks import Check


class SnippetFailure(Exception):
    """A snippet-level outcome other than pass, with MLIR's own words, and what the failing
    step knew (the answer's typed facts)."""

    def __init__(self, kind: Kind, message: str, diagnostics: list[Diagnostic] | None = None,
                 metrics: dict[str, float] | None = None, *, stage: str = "", environment: bool = False,
                 skip: bool = False, triage: Triage | None = None, verdict: Verdict | None = None,
                 facts: CompileFacts | None = None, files: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.diagnostics = diagnostics or []
        self.metrics = metrics or {}
        self.stage = stage  # "": the request's
        self.environment = environment  # about this machine (a package, a file it lacks): never cached
        self.skip = skip  # no device to run on: skipped, not unsupported
        self.triage = triage
        self.verdict = verdict
        self.facts = facts
        self.files = files or {}

    def triaged(self) -> Triage:
        """This failure's triage, made empty when it has none."""
        if self.triage is None:
            self.triage = Triage()
        return self.triage

    def with_triage(self, found: Triage) -> SnippetFailure:
        """This failure, what ``found`` says (its fields that are set) over its own triage."""
        own = self.triaged()
        for name in (f.name for f in fields(found)):
            if getattr(found, name):
                setattr(own, name, getattr(found, name))
        return self


@dataclass
class Kept:
    """What a compile keeps for the worker's later steps; never sent to the pytest side."""

    source: str = ""  # the module as it was sent
    constants: dict[int, np.ndarray] = field(default_factory=dict)  # recorded inputs baked in
    checks: list[Check] = field(default_factory=list)  # the function's check ops: its own golden
    fed: list[np.ndarray] = field(default_factory=list)  # the snippet's constants, fed at run time
    parallel: list[Any] = field(default_factory=list)  # run_parallel plans (lowering/parallel.py)
    ulp_ops: list[str] = field(default_factory=list)  # ops approximated to a few ULP
    runtime_results: list[bool] | None = None  # per result: depends on a run-time value (judging.dataflow)
    runtime: bool | None = None  # ... for the whole function (the IREE targets)
    check_sites: list[tuple[str, int, int]] = field(default_factory=list)  # IREE check ops: (name, line, column)
    check_imports: list[str] = field(default_factory=list)  # the check module's functions it imports
    vacuous_checks: list[bool] = field(default_factory=list)  # IREE check ops, in order: values as given
    route: str = ""  # tt targets: "pjrt" through tt-xla's plugin
    linked: bool = False  # cpu: its callbacks attached to the engine
    link_failure: Any = None  # cpu: the SnippetFailure of its translation at the first run, kept
    ir_file: str = ""  # an iteration's: the file its final IR is written to (``registry.Target.run_ir``)
    check_calls: Any = None  # checkcalls.Recorder of the run
    parallel_runs: Any = None  # parallelrun.Runner of the run
    chip: str = ""  # cuda: the chip compiled for
    kernel_count: int = 0  # cuda: kernels in the module
    ptx_lines: int = 0
    single_thread: bool = False  # cuda: no parallel loop, one block of one thread
    vmfb_bytes: int = 0  # IREE: the module's size
    unfeedable: str = ""  # why a run cannot feed or read the function's types (its compile stands alone)


@dataclass
class Compiled:
    """A compiled snippet: what execute needs, plus what reports show (``facts``)."""

    ir: str  # the final IR (LLVM dialect on cpu), as text
    function: str
    signature: Any  # backend-specific description of arguments and results
    handle: Any = None  # backend-specific object (e.g. an ExecutionEngine)
    facts: CompileFacts = field(default_factory=CompileFacts)
    kept: Kept = field(default_factory=Kept)
    iteration: IterationFacts | None = None  # an optimization-run iteration's
    files: dict[str, str] = field(default_factory=dict)  # artifacts: name -> base64 (--mlir-save-artifacts)


@dataclass
class Executed:
    """A run that was judged: its metrics, the verdict, and the files a reproducer needs."""

    metrics: dict[str, float]
    verdict: Verdict
    files: dict[str, str] = field(default_factory=dict)  # name -> base64 (--mlir-save-artifacts)


@dataclass
class Reference:
    """A reference's outputs for the inputs a run had, what it is in words, and its golden basis."""

    outputs: list[np.ndarray]
    name: str
    golden: Golden
