"""``mlir_device``: tests written in Python compile and run MLIR in the run's sandbox.

The device is the process's ``DeviceManager`` for the target (``RunState.device_manager``):
the sandbox worker snippet items use, opened once per pytest process (per xdist
worker, with ``--mlir-devices``), reopened after a crash or a hang. Nothing here
imports MLIR: a module built with the bindings is sent as its text.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest

from pytest_mlir_snippets.items.failures import (
    Candidate,
    Unsupported,
    diagnostic_lines,
    extract_diagnostics,
    failure_of,
    format_failure,
    signature_lines,
)
from pytest_mlir_snippets.mlirtext.splitter import SnippetSource, SplitError
from pytest_mlir_snippets.protocol import (
    Compile,
    FunctionRequest,
    Kind,
    Options,
    Recorded,
    Response,
    Run,
    SubjectKind,
)
from pytest_mlir_snippets.session import RunState, Subject

TEXT_SOURCE = "<mlir>"  # how diagnostics name a source given as text
MARGIN = 0.5  # seconds a call ends before it: the call's timeout, not pytest-timeout's, tells of a hang
DEVICE: pytest.StashKey[MlirDevice] = pytest.StashKey()  # a test's mlir_device, on its item


@dataclass
class Where:
    """A compile or run as failure formatting sees it (``failures.Located``)."""

    path: Path
    stage: str
    function_name: str
    function_line: int

    def original_line(self, line: int) -> int | None:
        return line  # the whole source is sent: its lines are the diagnostics' lines


@dataclass
class Call:
    """One compile or run a test made, for its record."""

    call: str  # "compile" or "run"
    function: str
    kind: str
    message: str = ""
    diagnostics: list[str] = field(default_factory=list)
    output: str = ""  # the worker's captured output, for a failed call
    seconds: float = 0.0
    signature_lines: list[Candidate] = field(default_factory=list)  # a failed call's (items.failures)

    def to_json(self) -> dict[str, Any]:
        return {"call": self.call, "function": self.function, "kind": self.kind, "message": self.message,
                "seconds": round(self.seconds, 6)}


@dataclass
class Compiled:
    """What ``mlir_device.compile`` made: the entry's signature and the artifacts the target
    keeps. Valid across a worker restart: ``run`` sends the source, and a fresh worker
    compiles it again."""

    source: str  # the MLIR text that was compiled
    function: str  # the entry
    target: str
    pipeline: str | None
    path: Path  # the source's file, or "<mlir>" for text
    line: int  # the entry's line in the source (0: not found before compiling)
    inputs: list[str] = field(default_factory=list)  # argument types, as MLIR writes them
    outputs: list[str] = field(default_factory=list)  # result types
    ir: str = ""  # the final IR (cpu: the LLVM dialect module; IREE: the VM module)
    artifacts: dict[str, str | bytes] = field(default_factory=dict)  # compiled.mlir, kernels.ptx, model.vmfb, ...

    @property
    def signature(self) -> tuple[list[str], list[str]]:
        return self.inputs, self.outputs

    def where(self, stage: str, function: str | None = None) -> Where:
        return Where(self.path, stage, function or self.function, self.line)


def read_source(source: Any) -> tuple[str, Path]:
    """(MLIR text, where it comes from) of text, a path, or a module of any MLIR Python
    bindings (printed here: the test imported the bindings, not the plugin)."""
    if isinstance(source, os.PathLike):
        path = Path(source)
        return path.read_text("utf-8"), path
    if isinstance(source, str):
        if "\n" not in source and "{" not in source and Path(source).is_file():
            return Path(source).read_text("utf-8"), Path(source)
        return source, Path(TEXT_SOURCE)
    if hasattr(source, "operation"):  # mlir.ir.Module, torch_mlir.ir.Module, iree.compiler.ir.Module
        return str(source), Path(TEXT_SOURCE)
    raise TypeError(f"mlir_device.compile takes MLIR text, a path or an MLIR module, not {type(source).__name__}")


def marked_target(node: pytest.Item, default: str) -> str:
    """The target of ``@pytest.mark.mlir_target("iree-cpu")`` on the test, else ``default``."""
    from pytest_mlir_snippets.settings import TARGETS

    marker = node.get_closest_marker("mlir_target")
    if marker is None:
        return default
    target = marker.args[0] if marker.args else marker.kwargs.get("name")
    if target not in TARGETS:
        pytest.fail(f"@pytest.mark.mlir_target({target!r}): not a target ({', '.join(TARGETS)})", pytrace=False)
    return str(target)


def entry_of(text: str, function: str | None) -> tuple[str, int]:
    """The entry's name and line: ``function``, else the first public function."""
    try:
        functions = SnippetSource(text).functions
    except SplitError:
        functions = []  # the compiler says what is wrong with it
    for fn in functions:
        if function is None or fn.name == function:
            return fn.name, fn.line
    return function or "", 0


class MlirDevice:
    """The target's device for this pytest process, in the sandbox worker."""

    def __init__(self, state: RunState, target: str, folders: Callable[[], Path] | None = None,
                 deadline: Callable[[], float | None] = lambda: None) -> None:
        self.target = target
        self.calls: list[Call] = []  # what the test did, for its record
        self._state = state
        self._folders = folders  # a fresh folder per compile, for artifacts a target writes (tt's flatbuffer)
        self._deadline = deadline  # pytest-timeout's end of the test, if it times the test

    def timeout(self) -> float:
        """A call's default timeout, as an item's: ``--mlir-timeout``, within what is left of
        pytest-timeout's time for the test."""
        limit, deadline = self._state.settings.timeout, self._deadline()
        if deadline is None:
            return limit
        return round(max(0.1, min(limit, deadline - time.monotonic() - MARGIN)), 2)

    def __repr__(self) -> str:
        return f"<mlir_device {self.target} (device {self._manager.device_id})>"

    @property
    def _manager(self) -> Any:
        return self._state.device_manager(self.target)

    def _options(self, pipeline: str | None) -> Options:
        options: Options = self._manager.options()
        options.pipeline, options.print_ir = pipeline, True
        return options

    def compile(self, source: Any, *, function: str | None = None, pipeline: str | None = None) -> Compiled:
        """Compile ``source`` (MLIR text, a path, or an MLIR module) for the target, in the
        sandbox; needs no device. Raises ``CompileError`` (``Crash``, ``Timeout``), skips
        with ``Unsupported``."""
        __tracebackhide__ = True
        text, path = read_source(source)
        name, line = entry_of(text, function)
        compiled = Compiled(text, name, self.target, pipeline, path, line)
        options = self._options(pipeline)
        if self._folders is not None:
            options.save_artifacts, options.artifact_dir = True, str(self._folders())
        subject = Subject(SubjectKind.PYTHON, str(path), name, self.target)  # a test's compiles are its own
        response = self._call(Compile(text, name, options=options), None, compiled.where("compile"), subject)
        facts = response.facts
        compiled.inputs = list(facts.inputs) if facts else []
        compiled.outputs = list(facts.outputs) if facts else []
        compiled.ir = response.ir or ""
        compiled.artifacts = artifacts(response, options.artifact_dir)
        return compiled

    def run(self, compiled: Compiled, *inputs: Any, function: str | None = None,
            timeout: float | None = None) -> list[Any]:
        """Run ``compiled`` on ``inputs`` (numpy arrays in the argument types; Python numbers
        and lists take them) and return its results as numpy arrays, unjudged. Opens the
        device at the first run; ``timeout``: seconds (default: the test's, as an item's:
        ``--mlir-timeout``, within pytest-timeout's time for the test)."""
        __tracebackhide__ = True
        if compiled.target != self.target:
            raise ValueError(f"compiled for target {compiled.target}, this device is {self.target}")
        if self._state.settings.skip_exec:
            pytest.skip("--mlir-skip-exec: compile only, no device opened")
        values = [v if not hasattr(v, "__array__") else _array(v) for v in inputs]
        request = Run(compiled.source, function or compiled.function, Recorded(values),
                      options=self._options(compiled.pipeline))
        response = self._call(request, timeout, compiled.where("run", function))
        return list(response.values or [])

    def _call(self, request: FunctionRequest, timeout: float | None, where: Where,
              compiles: Subject | None = None) -> Response:
        """``request`` sent to the target's worker (a compile of ``compiles`` through the
        session's one compile entry: no compile cache, no memo), and its outcome."""
        __tracebackhide__ = True
        timeout = self.timeout() if timeout is None else timeout
        response: Response = self._manager.call(request, timeout) if compiles is None else self._state.compile(
            compiles, lambda: request, timeout, cache=False, remember=False)
        failed = not response.ok
        self.calls.append(Call(request.op.value, request.function, response.kind.value, response.message,
                               diagnostic_lines(response, where) if failed else [],
                               response.stderr if failed else "", response.seconds,
                               signature_lines(response.diagnostics, where.path, extract_diagnostics(response.stderr))
                               if failed else []))
        if response.kind is Kind.UNSUPPORTED:
            skip(response)
        if failed:
            raise failure_of(response, format_failure(response, where))
        return response


def skip(response: Response) -> NoReturn:
    """``unsupported`` is a skip; "no CUDA device" (the machine's, not the target's) a plain one."""
    __tracebackhide__ = True
    if response.skip:
        pytest.skip(response.message)
    raise Unsupported(response.message)


def _array(value: Any) -> Any:
    import numpy as np  # the pytest process loads numpy only for tests that run MLIR

    return np.asarray(value)


def artifacts(response: Response, folder: str | None) -> dict[str, str | bytes]:
    """The compiled IR, PTX, and the files a target made (base64 in the response, or
    written into ``folder``)."""
    found: dict[str, str | bytes] = {}
    if response.ir:
        found["compiled.mlir"] = response.ir
    if response.facts is not None and response.facts.ptx:
        found["kernels.ptx"] = response.facts.ptx
    for name, data in response.files.items():
        found[name] = base64.b64decode(data)
    if folder is not None:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                found.setdefault(path.relative_to(folder).as_posix(), path.read_bytes())
    return found
