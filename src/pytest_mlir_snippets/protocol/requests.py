"""What the pytest process asks of a sandbox worker: one dataclass per request, each naming
its op (``protocol.Op``); the worker answers each with one handler (``worker/loop.py``), the
pytest side sends each with one method of its client (``client.Client``). Plain dataclasses
that pickle; numpy arrays travel in them, but this module imports no numpy.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from pytest_mlir_snippets.protocol.kinds import Golden, Op

if TYPE_CHECKING:
    import numpy as np

    from pytest_mlir_snippets.mlirtext.litscript import LitCommand


@dataclass
class Diagnostic:
    """One MLIR diagnostic, location still in the coordinates of the text that was sent."""

    severity: str  # error, warning, note, remark
    message: str
    line: int | None = None
    column: int | None = None
    notes: list[Diagnostic] = field(default_factory=list)
    file: str = ""  # the named text the location is in (an optimization run's schedule); "": the module sent


@dataclass
class Options:
    """Everything a backend needs to know besides the snippet itself."""

    target: str = "cpu"
    pipeline: str | None = None
    seed: int = 0
    dynamic_dim: int = 4
    # seeded inputs drawn uniformly from [low, high) (a ``// mlir-snippets: inputs=`` line);
    # None: floats normal, ints small (``golden.inputs.make_inputs``)
    input_range: tuple[float, float] | None = None
    opt_level: int = 0  # LLVM's, for the JIT
    # no item executes (--mlir-skip-exec): a cpu compile stops at the LLVM dialect, checked
    # translatable op by op, as mlir-opt stops; machine code is made only for what runs
    skip_exec: bool = False
    atol: float | None = None  # None: by element type (golden.DEFAULT_TOLERANCE)
    rtol: float | None = None
    ulp: int | None = None  # elements this many units in the last place apart pass too
    tolerance_source: str = ""  # who set atol/rtol/ulp ("": --mlir-atol/--mlir-rtol)
    outputs: tuple[int, ...] | None = None  # a function without results: the memref arguments it writes (None: all)
    pcc: float = 0.99
    lenient_shapes: bool = False  # recorded outputs may differ from results by unit dimensions
    print_ir: bool = False
    device_id: int | None = None
    cuda_chip: str | None = None  # cuda target: None = the device's, else sm_80
    sys_desc: str | None = None  # ttmetal/ttnn: system descriptor (None: $SYSTEM_DESC_PATH, ttrt's default)
    disable_eth_dispatch: bool = False  # ttmetal/ttnn: dispatch on worker cores
    save_artifacts: bool = False
    artifact_dir: str | None = None  # this item's artifact folder, with save_artifacts
    bench_warmup: int = 5  # benchmark items: untimed calls first
    bench_time: float = 1.0  # then timed calls for at least this many seconds
    bench_settle: float = 10.0  # and at most this many more, while the CPU ran slowed (benchstats)
    bench_previous_ms: float = 0.0  # the same code's last settled median on this machine (0: unknown)
    iree_compile_flags: list[str] = field(default_factory=list)  # iree-cpu/iree-cuda: from an IREE config JSON
    iree_run_flags: list[str] = field(default_factory=list)  # iree-run-module's flags of that config
    # when the caller stops waiting for this answer, on time.monotonic()'s clock (one clock for
    # every process of the machine; client.Sandbox.call sets it; None: no limit)
    deadline: float | None = None


@dataclass(frozen=True)
class Thresholds:
    """Recorded data's own rule: absolute thresholds per element type (IREE's), no relative part."""

    source: str  # the rule in words
    types: tuple[tuple[str, float, float], ...]  # (numpy type name, atol, rtol)


@dataclass
class Recorded:
    """Recorded golden data (``golden.recorded``): inputs, and the outputs to compare with."""

    inputs: list[np.ndarray]
    outputs: list[np.ndarray] | None = None  # None: only inputs (a reference computes the outputs)
    source: str = "recorded outputs"  # the reference's name in a verdict
    basis: Golden = Golden.RECORDED  # the verdict's golden basis on these outputs
    tolerance: Thresholds | None = None  # the data's own rule; None: the anchors


@dataclass
class Request:
    """What every request carries: the options of the item it is for."""

    op: ClassVar[Op]
    options: Options = field(default_factory=Options, kw_only=True)


@dataclass
class Ping(Request):
    op = Op.PING


@dataclass
class OpenDevice(Request):
    op = Op.OPEN


@dataclass
class Probe(Request):
    op = Op.PROBE


@dataclass
class CloseDevice(Request):
    op = Op.CLOSE


@dataclass
class CheckPipeline(Request):
    op = Op.CHECK_PIPELINE
    pipeline: str


@dataclass
class CheckSchedule(Request):
    op = Op.SCHEDULE
    schedule: str  # an optimization run's transform.mlir


@dataclass
class FunctionRequest(Request):
    """A request about one function of a module (a split snippet, an iteration's model)."""

    module: str  # the module's text
    function: str  # the entry function's symbol
    recorded: Recorded | None = None  # its recorded inputs (and outputs)


@dataclass
class Compile(FunctionRequest):
    op = Op.COMPILE


@dataclass
class Execute(FunctionRequest):
    op = Op.EXECUTE


@dataclass
class Bisect(FunctionRequest):
    op = Op.BISECT


@dataclass
class Run(FunctionRequest):
    """mlir_device.run: ``recorded.inputs`` are the caller's, the results come back unjudged."""

    op = Op.RUN
    specialize: bool = False  # small integer inputs may be baked in (the ONNX backend)


@dataclass
class Reference(FunctionRequest):
    """This worker's target's outputs on ``recorded.inputs``: another target's reference."""

    op = Op.REFERENCE


@dataclass
class Inputs(FunctionRequest):
    """The seeded inputs an execute of the function is given (``values``): what
    ``mlir-snippets record-goldens`` asks a reference for."""

    op = Op.INPUTS


@dataclass
class Driver(FunctionRequest):
    """A failed execute's reproducer; ``compare``: False when the item crashed (its golden was
    never computed): a driver that compares nothing."""

    op = Op.DRIVER
    compare: bool = True


@dataclass
class LitRequest(FunctionRequest):
    """A RUN command of an upstream integration test (``worker/litrun.py``); ``module`` is the file."""

    command: LitCommand = field(kw_only=True)


@dataclass
class LitCompile(LitRequest):
    """The file through the command's mlir-opt stages."""

    op = Op.COMPILE


@dataclass
class LitExecute(LitRequest):
    """... then its runner, and FileCheck on what it printed."""

    op = Op.EXECUTE


@dataclass
class IterationRequest(FunctionRequest):
    """An optimization-run iteration: ``module`` is its model."""

    schedule: str = field(kw_only=True)  # transform.mlir
    pipeline: str = field(kw_only=True)  # its pass pipeline
    # the ``compiled_digest`` of the [compile] that a [correctness] or [benchmark] builds on: the
    # worker fails the stage when the compile it would run has another ("": not checked); what
    # the stage expects to run, not what to compile, so not part of the compile key
    expected_digest: str = field(default="", kw_only=True)


@dataclass
class IterationCompile(IterationRequest):
    op = Op.ITERATION


@dataclass
class IterationExecute(IterationRequest):
    op = Op.ITERATION_EXECUTE


@dataclass
class IterationBenchmark(IterationRequest):
    op = Op.ITERATION_BENCHMARK


@dataclass
class PytorchRequest(Request):
    reference: str  # the path of the run's reference.py


@dataclass
class PytorchCompile(PytorchRequest):
    op = Op.PYTORCH_COMPILE


@dataclass
class PytorchBenchmark(PytorchRequest):
    op = Op.PYTORCH_BENCHMARK
