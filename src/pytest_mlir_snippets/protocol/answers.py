"""What a sandbox worker answers: a ``Response`` with its outcome kind and words, and the
typed facts its request gathered (the verdict, a failure's triage, the compile's facts,
the device opened, the values of a run, ...). ``protocol.infojson`` writes them under the
keys records and the compile cache publish (``info.tolerance``, ``info.cache``, ...).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from pytest_mlir_snippets.protocol.kinds import Computed, Golden, Kind
from pytest_mlir_snippets.protocol.requests import Diagnostic

if TYPE_CHECKING:
    import numpy as np

# a value as JSON holds it (tt-mlir's golden report, kept whole)
JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"


@dataclass
class AppliedTolerance:
    """The rule a float comparison used, in numbers (``info.tolerance``)."""

    atol: float
    rtol: float
    ulp: int = 0
    source: str = ""  # who set it: the anchors, IREE's thresholds, an option, a comment line


@dataclass
class CheckComputed:
    """One check of a function with checks, and whether what it compares was computed."""

    check: str  # as written: check.expect_eq, ...
    line: int | None
    computed: Computed | None  # ``nothing``: a vacuous check, which does not count; None: not said


@dataclass
class Verdict:
    """What an execute compared its results with, and how."""

    golden: Golden | None = None  # the golden basis (None: not decided, a run that failed before)
    reference: str = ""  # the golden in words ("recorded outputs (x.npz)", "StableHLO interpreter")
    computed: Computed | None = None  # None: the target does not say, or no result had an element
    compared: int | None = None  # the elements compared (0: results without elements); None: not counted
    checks: list[CheckComputed] = field(default_factory=list)  # a function with checks: each one's ``computed``
    tolerance: AppliedTolerance | None = None  # of the first float result
    input_specs: list[tuple[str, str]] = field(default_factory=list)  # (shape "4x?", element "f32") per argument
    stdout: str = ""  # what the entry printed (a lit RUN command: what FileCheck saw)
    golden_report: JsonValue = None  # tt-mlir's own, kept whole


@dataclass
class Triage:
    """Where a failure happened: the pass (or plugin step) that failed and what it received,
    the command that runs it alone; after ``--mlir-bisect``, the step results diverged after."""

    failing_pass: str = ""  # "plugin:NAME" for the plugin's own steps
    before_pass_ir: str = ""  # the IR the failing step received
    failing_pipeline: str = ""  # the pass alone, as a pipeline
    failing_tool: str = ""  # the tool that runs it alone (mlir-opt, iree-opt, ...)
    failing_args: list[str] | None = None  # that tool's arguments (None: --pass-pipeline=failing_pipeline)
    failing_input: str = ""  # the tool's input, when it is not before_pass_ir
    after_step: str = ""  # the plugin's last step before the failing pass
    diverged_after: str = ""  # --mlir-bisect: the step after which results differ
    bisect_cuts: list[str] = field(default_factory=list)  # what each cut gave, one line each
    iree_cannot_parse: str = ""  # the IREE release a file needs that the installed one cannot parse
    left_ops: list[str] = field(default_factory=list)  # ops a legalization left: the script fails when they stay


@dataclass
class CompileFacts:
    """What a compile found out about the function, for reports and later requests."""

    front_end: str = ""  # stablehlo, tosa, torch, upstream, ...
    inputs: list[str] = field(default_factory=list)  # the arguments' types ("tensor<4xf32> = fed ...")
    outputs: list[str] = field(default_factory=list)  # the results' types
    input_specs: list[tuple[str, str]] = field(default_factory=list)  # where the compile knows them (IREE)
    baked: str = ""  # recorded inputs baked in as constants, in words
    fed_inputs: list[str] = field(default_factory=list)  # the snippet's constants fed at run time
    kept_constants: list[str] = field(default_factory=list)  # ... and those kept, with why
    widened: list[str] = field(default_factory=list)  # arguments and results fed in a wide type
    iree_route: str = ""  # the IREE input route taken
    reference: str = ""  # the golden a later execute will use, when the compile decides it
    legacy: list[str] = field(default_factory=list)  # a lit RUN line's: what of another LLVM was replaced
    ptx: str = ""  # cuda: the kernels' assembly


@dataclass
class HostOp:
    """An op of an iteration's compiled module that runs on the host (outside gpu.module)."""

    op: str
    line: int | None
    column: int | None


@dataclass
class Launch:
    """A gpu.launch(_func) of an iteration: grid, block and dynamic shared memory (None: not a constant)."""

    kernel: str
    grid: list[int | None]
    block: list[int | None]
    line: int | None
    dynamic_shared_bytes: int | None


@dataclass
class IterationFacts:
    """An optimization-run iteration's compile (and what the pytest side adds to it)."""

    compiled_digest: str = ""  # sha256 of the compiled module's text
    compiles: int = 0  # iterations this worker compiled so far
    host_ops: list[HostOp] | None = None  # None: not told (a response of a run stage)
    kernels: list[Launch] | None = None
    mma: str = ""  # the pytest side's: the MMA instructions in the PTX
    digest: str = ""  # the pytest side's: the code's digest in the benchmark history
    reference_ms: float | None = None  # ... the same code's last settled median
    measured: str = ""  # ... when it was measured


@dataclass
class PytorchFacts:
    """An optimization run's PyTorch reference, compiled or timed."""

    threads: int = 1
    torch_compile: str = ""  # "reused", "compiled before timing"
    compile_error: str = ""  # why torch.compile failed (eager timed instead)


@dataclass
class DriverFacts:
    """A failed execute's reproducer: the cpu target's driver module (``module`` .. ``libraries``)
    or IREE's commands (``commands``; the files in ``Response.files``)."""

    golden: str  # what it compares with, in words
    module: str = ""
    pipeline: str = ""  # the rest of the lowering after ``step``
    step: str = ""  # the plugin step the module was saved after
    entry: str = ""  # the driver's entry function
    libraries: list[str] = field(default_factory=list)  # mlir-runner's shared libraries
    commands: list[list[str]] = field(default_factory=list)


@dataclass
class DeviceFacts:
    """The device a worker opened (the ``pytest_mlir_device_opened`` hook's ``info``)."""

    device: str = ""  # in words
    id: int | None = None
    ignored_run_flags: list[str] = field(default_factory=list)  # iree-run-module flags the runtime ignores
    system_descriptor: str = ""  # tt targets
    reference: str = ""  # tt targets: their golden


@dataclass
class Response:
    kind: Kind
    message: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    ir: str | None = None  # compiled IR when asked for
    stderr: str = ""  # filled in by the parent from the worker's fd 2
    seconds: float = 0.0
    stage: str = ""  # a failure's stage ("": the request's op)
    environment: bool = False  # the verdict is about this machine (a package, a file it lacks): never cached
    skip: bool = False  # the machine has no device to run on: skipped, not counted unsupported
    internal: bool = False  # an internal error of the backend
    returncode: int | None = None  # the worker's, when it died
    cache: str = ""  # "hit": the verdict came from the compile cache
    verdict: Verdict | None = None
    triage: Triage | None = None
    facts: CompileFacts | None = None
    device: DeviceFacts | None = None  # an open's
    values: list[np.ndarray] | None = None  # a run's results, a reference's outputs
    files: dict[str, str] = field(default_factory=dict)  # artifacts: name -> base64 of the bytes
    iteration: IterationFacts | None = None
    pytorch: PytorchFacts | None = None
    driver: DriverFacts | None = None
    steps: list[str] = field(default_factory=list)  # a schedule's transform steps
    pid: int = 0  # a ping's: the worker's

    @property
    def ok(self) -> bool:
        return self.kind is Kind.PASS

    @property
    def reference(self) -> str:
        """The golden in words: the verdict's, else what the compile decided."""
        return (self.verdict.reference if self.verdict else "") or (self.facts.reference if self.facts else "")

    @property
    def input_specs(self) -> list[tuple[str, str]]:
        return (self.verdict.input_specs if self.verdict else []) or (self.facts.input_specs if self.facts else [])

    def triaged(self) -> Triage:
        """This response's triage, made empty when it has none."""
        if self.triage is None:
            self.triage = Triage()
        return self.triage
