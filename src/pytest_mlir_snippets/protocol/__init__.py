"""What the pytest process and a sandbox worker say to each other: the words (``kinds``),
one dataclass per request (``requests``), the typed answer (``answers``), its published JSON
(``infojson``) and the framing (``framing``). Plain dataclasses that pickle; no MLIR and no
numpy here, so the pytest process imports neither for them.

PYTEST_DONT_REWRITE"""

from pytest_mlir_snippets.protocol.answers import (
    AppliedTolerance,
    CheckComputed,
    CompileFacts,
    DeviceFacts,
    DriverFacts,
    HostOp,
    IterationFacts,
    JsonValue,
    Launch,
    PytorchFacts,
    Response,
    Triage,
    Verdict,
)
from pytest_mlir_snippets.protocol.framing import read_request, read_response, write_message
from pytest_mlir_snippets.protocol.infojson import apply_info, group_json, info_json
from pytest_mlir_snippets.protocol.kinds import (
    NO_INDEPENDENT,
    PROGRESS_ENV,
    Computed,
    Golden,
    Kind,
    Op,
    Outcome,
    Stage,
    Status,
    SubjectKind,
)
from pytest_mlir_snippets.protocol.requests import (
    Bisect,
    CheckPipeline,
    CheckSchedule,
    CloseDevice,
    Compile,
    Diagnostic,
    Driver,
    Execute,
    FunctionRequest,
    Inputs,
    IterationBenchmark,
    IterationCompile,
    IterationExecute,
    IterationRequest,
    LitCompile,
    LitExecute,
    LitRequest,
    OpenDevice,
    Options,
    Ping,
    Probe,
    PytorchBenchmark,
    PytorchCompile,
    PytorchRequest,
    Recorded,
    Reference,
    Request,
    Run,
    Thresholds,
)

__all__ = [
    "NO_INDEPENDENT", "PROGRESS_ENV", "AppliedTolerance", "Bisect", "CheckComputed", "CheckPipeline", "CheckSchedule",
    "CloseDevice", "Compile", "CompileFacts", "Computed", "DeviceFacts", "Diagnostic", "Driver", "DriverFacts",
    "Execute", "FunctionRequest", "Golden", "HostOp", "Inputs", "IterationBenchmark", "IterationCompile",
    "IterationExecute",
    "IterationFacts", "IterationRequest", "JsonValue", "Kind", "Launch", "LitCompile", "LitExecute", "LitRequest", "Op",
    "OpenDevice", "Options", "Outcome", "Ping", "Probe", "PytorchBenchmark", "PytorchCompile", "PytorchFacts",
    "PytorchRequest", "Recorded", "Reference", "Request", "Response", "Run", "Stage", "Status", "SubjectKind",
    "Thresholds", "Triage", "Verdict", "apply_info", "group_json", "info_json", "read_request", "read_response",
    "write_message",
]
