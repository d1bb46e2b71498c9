"""What the pytest process and a sandbox worker say to each other.

Plain dataclasses that pickle; no MLIR here, so the pytest process never
imports the MLIR bindings.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import enum
import pickle
import struct
from dataclasses import dataclass, field
from typing import Any, BinaryIO


class Kind(enum.StrEnum):
    """Outcome kinds (SPEC 5); every report shows them."""

    PASS = "pass"
    COMPILE_ERROR = "compile-error"
    EXECUTE_ERROR = "execute-error"
    GOLDEN_MISMATCH = "golden-mismatch"
    CRASH = "crash"
    TIMEOUT = "timeout"
    UNSUPPORTED = "unsupported"
    CONTRACT_ERROR = "contract-error"  # an optimization-run iteration breaks its file contract
    NO_GOLDEN = "no-golden"  # --mlir-require-golden: the verdict rests on nothing independent


class Status(enum.StrEnum):
    """What a record says of an item that has no outcome kind of its own."""

    SKIP = "skip"  # skipped: no device, nothing to compare, an expectation's skip
    NOT_RUN = "not-run"  # never ran (expected to crash; a CI shard that did not report)
    ERROR = "error"  # not an MLIR outcome: a bug, or a hook that raised


class Outcome(enum.StrEnum):
    """pytest's verdict on an item, as records keep it."""

    NONE = ""  # not decided yet (a skeleton)
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    NOT_RUN = "not run"


class Stage(enum.StrEnum):
    """The stages items are made of; the stage is the part of a node id in brackets."""

    COMPILE = "compile"
    EXECUTE = "execute"
    FILE = "file"  # a snippet file that cannot be split: the <file> item
    CONTRACT = "contract"  # optimization-run iterations ...
    HOST_OPS = "host_ops"
    LAUNCH = "launch"
    CORRECTNESS = "correctness"
    BENCHMARK = "benchmark"
    PYTORCH_COMPILE = "pytorch_compile"  # the PyTorch reference compiled (torch.compile), before ...
    PYTORCH = "pytorch"  # ... its benchmark
    CALL = "call"  # a Python test that used the mlir_device fixture


class SubjectKind(enum.StrEnum):
    """What an item is a part of (a record's ``subject_kind``): the reports group and name
    items by it."""

    SNIPPET = "snippet"  # a function of a snippet file, or the <file> item of one that cannot be split
    ITERATION = "iteration"  # an optimization run's iteration (vN)
    PYTORCH = "pytorch"  # an optimization run's PyTorch reference
    RUN = "run"  # an optimization run as a whole: its contract on a target without run stages
    LIT = "lit"  # a RUN command of an upstream integration test
    PYTHON = "python"  # a Python test that used the mlir_device fixture


class Golden(enum.StrEnum):
    """What an execute verdict compared the results with (SPEC 4): its golden basis."""

    RECORDED = "recorded"  # recorded outputs (IREE's io flags, an .npz sidecar)
    CHECKS = "checks"  # the function's own check ops (openxla's, IREE's check dialect)
    FILECHECK = "filecheck"  # the printed output against the file's CHECK lines
    INTERPRETER = "interpreter"  # StableHLO's reference interpreter
    TORCH = "torch"  # an optimization run's PyTorch reference
    TT = "tt"  # tt-mlir's own golden report
    DIFFERENTIAL_CPU = "differential:cpu"  # a second, independent compiler's result
    DIFFERENTIAL_IREE_CPU = "differential:iree-cpu"
    SELF = "self"  # the plugin's own plainer lowering: a last resort, not independent
    NONE = "none"  # nothing was compared

    @classmethod
    def differential(cls, target: str) -> Golden:
        return cls(f"differential:{target}")

    @property
    def independent(self) -> bool:
        """Whether a pass on this basis means something independent was compared."""
        return self not in (Golden.SELF, Golden.NONE)


class Computed(enum.StrEnum):
    """Whether an execute's results came from code that ran on its inputs (SPEC 4)."""

    RUNTIME = "runtime"  # a result depends on a value given at run time
    COMPILE_TIME = "compile-time"  # none does: the constant folder computed them


class Op(enum.StrEnum):
    """What a request asks of the worker (``Request.op``); the worker answers each with one
    handler (``worker/loop.py``), the pytest side sends each with one method of its client
    (``client.Client``). The values are spelled here only; a failure's ``info["stage"]`` is
    the op's value when the worker names no other stage."""

    PING = "ping"  # the worker's pid: it is up
    OPEN = "open"  # open the device (options: which)
    PROBE = "probe"  # check that the open device still works
    CLOSE = "close"  # release the device
    CHECK_PIPELINE = "check-pipeline"  # --mlir-pipeline parsed, once before the run (module: the pipeline)
    COMPILE = "compile"  # a split module
    EXECUTE = "execute"  # compiled (from the worker's memo), run on inputs and judged
    BISECT = "bisect"  # a golden-mismatch's pipeline cut after each step: which step diverged (--mlir-bisect)
    RUN = "run"  # mlir_device.run: the caller's inputs, the results returned unjudged
    REFERENCE = "reference"  # another target's worker asks for reference outputs (worker/reference.py)
    SCHEDULE = "schedule"  # an optimization run's transform.mlir checked (module: the schedule)
    ITERATION = "iteration"  # an iteration compiled (attachments: schedule, pipeline): its [compile]
    ITERATION_EXECUTE = "iteration-execute"  # ... that compile run and judged: [correctness]
    ITERATION_BENCHMARK = "iteration-benchmark"  # ... and timed: [benchmark]
    PYTORCH_COMPILE = "pytorch-compile"  # a run's PyTorch reference compiled (attachments: reference)
    PYTORCH_BENCHMARK = "pytorch-benchmark"  # ... and timed
    DRIVER = "driver"  # a failed execute's driver module: its function on its inputs, compared with its golden

    @property
    def executes(self) -> bool:
        """Whether the request runs code on the device (which must be open first)."""
        return self in (Op.EXECUTE, Op.BISECT, Op.RUN, Op.ITERATION_EXECUTE, Op.ITERATION_BENCHMARK)


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
    opt_level: int = 0  # LLVM's, for the JIT
    # no item executes (--mlir-skip-exec): a cpu compile stops at the LLVM dialect, checked
    # translatable op by op, as mlir-opt stops; machine code is made only for what runs
    skip_exec: bool = False
    atol: float | None = None  # None: by element type (golden.DEFAULT_TOLERANCE)
    rtol: float | None = None
    ulp: int | None = None  # elements this many units in the last place apart pass too
    tolerance_source: str = ""  # who set atol/rtol/ulp ("": --mlir-atol/--mlir-rtol)
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


# Response.info key: the verdict's golden basis (a ``Golden`` value) on an execute's response
GOLDEN = "golden"
# the words of a verdict without an independent golden (a reference that failed, ``self``)
NO_INDEPENDENT = "no independent golden"
# Response.info key: a ``Computed`` value, whether the results were computed at run time
COMPUTED = "computed"
# Response.info key, true when the verdict is about this machine (a package or a file it
# lacks), not about the request: the compile cache never keeps such a verdict.
ENVIRONMENT = "environment"
# Response.info key: the entry's arguments as [shape, element type] pairs ("4x?", "f32"; "scalar", "i32")
INPUT_SPECS = "input_specs"
# Response.info key, true when the item is to be skipped rather than counted `unsupported`
# (which is for dialects and types a target cannot handle): the machine has no device to
# run on ("no CUDA device"). The item's record kind is then `skip`.
SKIP = "skip"
# The worker's environment variable naming a file it rewrites before each pass and each of the
# plugin's own steps (a JSON object: what ``failing_pass`` and its reproducer need) while it runs
# pipelines one pass at a time: set by the client that re-runs a compile that crashed, which
# reads the file after the crash (``sandbox/crashtriage.py``, ``worker/lowering/failingpass.py``)
PROGRESS_ENV = "MLIR_SNIPPETS_PROGRESS"


@dataclass
class Request:
    op: Op
    module: str = ""  # the split module's text
    function: str = ""  # entry function symbol
    options: Options = field(default_factory=Options)
    golden: dict[str, Any] | None = None  # recorded inputs/outputs (numpy arrays)
    attachments: dict[str, str] = field(default_factory=dict)  # other texts (a run's schedule, pipeline)

    def __post_init__(self) -> None:
        self.op = Op(self.op)  # an op given by its value is checked here, not in the worker


@dataclass
class Response:
    kind: Kind
    message: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # shapes, dtypes, reference used, ...
    ir: str | None = None  # compiled IR when asked for
    stderr: str = ""  # filled in by the parent from the worker's fd 2
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.kind is Kind.PASS


# ------------------------------------------------------------------ framing
_HEADER = struct.Struct("<Q")


def write_message(stream: BinaryIO, message: Request | Response) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_message(stream: BinaryIO) -> Any:
    """The next message, or None at end of stream."""
    header = _read_exactly(stream, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    data = _read_exactly(stream, size)
    return None if data is None else pickle.loads(data)


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
