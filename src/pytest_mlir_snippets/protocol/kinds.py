"""The protocol's words: outcome kinds, statuses, stages, subject kinds, golden bases and
the requests' ops.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import enum


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
    NOTHING = "nothing"  # a check's values reach it as given (constants, arguments): no op computed them


class Op(enum.StrEnum):
    """What a request asks of the worker (``Request.op``); the worker answers each with one
    handler (``worker/loop.py``), the pytest side sends each with one method of its client
    (``client.Client``). The values are spelled here only; a failure's ``Response.stage`` is
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
    REFERENCE = "reference"  # another target's worker asks for reference outputs (worker/judging/reference.py)
    INPUTS = "seeded-inputs"  # the seeded inputs an execute of the function is given (mlir-snippets record-goldens)
    SCHEDULE = "schedule"  # an optimization run's transform.mlir checked (module: the schedule)
    ITERATION = "iteration"  # an iteration compiled (protocol.requests.IterationCompile): its [compile]
    ITERATION_EXECUTE = "iteration-execute"  # ... that compile run and judged: [correctness]
    ITERATION_BENCHMARK = "iteration-benchmark"  # ... and timed: [benchmark]
    PYTORCH_COMPILE = "pytorch-compile"  # a run's PyTorch reference compiled (its reference.py)
    PYTORCH_BENCHMARK = "pytorch-benchmark"  # ... and timed
    DRIVER = "driver"  # a failed execute's driver module: its function on its inputs, compared with its golden

    @property
    def executes(self) -> bool:
        """Whether the request runs code on the device (which must be open first)."""
        return self in (Op.EXECUTE, Op.BISECT, Op.RUN, Op.ITERATION_EXECUTE, Op.ITERATION_BENCHMARK)


# the words of a verdict without an independent golden (a reference that failed, ``self``)
NO_INDEPENDENT = "no independent golden"
# The worker's environment variable naming a file it rewrites before each pass and each of the
# plugin's own steps (a JSON object: what ``failing_pass`` and its reproducer need) while it runs
# pipelines one pass at a time: set by the client that re-runs a compile that crashed, which
# reads the file after the crash (``triage/crashtriage.py``, ``worker/triage/failingpass.py``)
PROGRESS_ENV = "MLIR_SNIPPETS_PROGRESS"
