"""IREE's compiler in the worker's process (``iree-base-compiler``'s ``iree.compiler.api``).

One compiler ``Session`` (an MLIR context with a set of flags) per distinct flag set, kept for
the worker's life: a compile costs the parse and IREE's pipeline, never a process or a fresh
context. IREE's diagnostics arrive as data with their locations in the split module.

The input dialect is detected from the snippet (``input_type``) and given to IREE as
``--iree-input-type``; ops of dialects IREE does not take as input are ``unsupported``,
by name. ONNX snippets (torch functions with ``torch.onnx_meta.opset_version``) first
try a shorter route: ``convert-torch-onnx-to-torch``, then IREE's ``torch`` input
pipeline. It skips torch-mlir's backend contract, whose shape and dtype refinement
re-parses torch's shape library on every compile (a quarter of the compile of a
one-op test) and which an ONNX import (value semantics, static types) does not need.
When that route fails, IREE's own ``onnx`` route compiles it, and its diagnostics
are the ones reported. An ``--iree-input-type`` in the config's flags turns the
detection and the shorter route off; a config taken verbatim (one that names its
device) takes IREE's own route only, as ``iree-compile`` does.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pytest_mlir_snippets.golden.inputs import TypeSpec, UnsupportedType
from pytest_mlir_snippets.mlirtext.ireeops import newer_iree_syntax
from pytest_mlir_snippets.protocol import Diagnostic, Kind, Triage
from pytest_mlir_snippets.registry import IREE_INPUT
from pytest_mlir_snippets.worker.dialects import dialect_failure
from pytest_mlir_snippets.worker.lowering import mlirtools
from pytest_mlir_snippets.worker.targets import iree_fed
from pytest_mlir_snippets.worker.targets.base import SnippetFailure
from pytest_mlir_snippets.worker.triage import iree_repro
from pytest_mlir_snippets.worker.triage.failingpass import marked

ACCEPTED = "linalg/tensor/arith, TOSA, StableHLO, torch and ONNX"
_STABLEHLO = re.compile(r"\b(?:stablehlo|chlo)\.")
_TORCH = re.compile(r"!torch\.|\btorch\.(?:operator|aten|prim|constant|vtensor)|\"onnx\.")
_ONNX = re.compile(r"torch\.onnx_meta\.opset_version|\"onnx\.")
_TOSA = re.compile(r"\btosa\.")
ONNX_TO_TORCH = "func.func(convert-torch-onnx-to-torch)"  # a pipeline on the module: no builtin.module(...)
_VTENSOR = re.compile(r"^!torch\.vtensor<\[([-?\d,]*)\],(\w+)>$")
_TORCH_ELEMENTS = {"si64": "i64", "si32": "i32", "si16": "i16", "si8": "i8"}  # torch's signed names




def iree_release() -> str:
    """The installed IREE compiler's release, e.g. ``3.13``."""
    from importlib import metadata

    try:
        return ".".join(metadata.version("iree-base-compiler").split(".")[:2])
    except metadata.PackageNotFoundError:
        return "(unknown)"


def input_type(text: str) -> str:
    """``--iree-input-type`` for a snippet: stablehlo, onnx, torch, tosa or none."""
    if _STABLEHLO.search(text):
        return "stablehlo"
    if _TORCH.search(text):
        return "onnx" if _ONNX.search(text) else "torch"
    return "tosa" if _TOSA.search(text) else "none"


@dataclass
class Output:
    """What a compile made: the module (``.vmfb``), the entry's signature, the route taken."""

    vmfb: bytes
    signature: tuple[list[TypeSpec], list[TypeSpec]]
    input_type: str
    route: str  # "onnx via torch" (the shorter route) or IREE's own input pipeline
    ir: str = ""  # the VM dialect module, when asked for
    runtime: bool | None = None  # whether what the entry checks or returns depends on run-time values
    barred: iree_fed.Barred = field(default_factory=iree_fed.Barred)  # constants kept from the folder


class Compiler:
    """Compiles snippets with IREE, one session per flag set."""

    def __init__(self) -> None:
        from iree.compiler import ir
        from iree.compiler.api import Output as Buffer
        from iree.compiler.api import Session

        self._ir, self._buffer, self._session_type = ir, Buffer, Session
        self._sessions: dict[tuple[str, ...], Any] = {}
        self._barred = iree_fed.Barred()  # what the last compile put behind barriers (``iree_fed``)

    def _session(self, flags: tuple[str, ...]) -> Any:
        session = self._sessions.get(flags)
        if session is None:
            session = self._session_type()
            try:
                session.set_flags(*flags)
            except ValueError as error:  # an unknown or malformed flag (the config's, or --mlir-pipeline's)
                raise SnippetFailure(Kind.COMPILE_ERROR, f"IREE's compiler rejects the flags: {error}") from None
            session.context.allow_unregistered_dialects = True  # so that an unknown op is named, not a parse error
            session.context.enable_multithreading(False)  # one compile per worker; xdist gives the parallelism
            self._sessions[flags] = session
        return session

    def compile(self, text: str, function: str, flags: list[str], target: str, keep_ir: bool = False,
                shorter_route: bool = True, analyze: bool = False) -> Output:
        """``text`` compiled with ``flags`` (the target's, then the config's); failures raise.
        ``shorter_route``: an ONNX snippet tries the torch route first (see the module's doc).
        ``analyze``: say whether the results depend on run-time values (``Output.runtime``)."""
        chosen = next((f.split("=", 1)[1] for f in flags if f.startswith("--iree-input-type=")), None)
        kind = chosen or input_type(text)
        routes: list[tuple[str, list[str]]] = [(kind, [])]
        if chosen is None and kind == "onnx" and shorter_route:
            routes.insert(0, ("torch", [ONNX_TO_TORCH]))
        failure: SnippetFailure | None = None
        for used, before in routes:
            own = () if chosen else (f"--iree-input-type={used}",)
            try:  # a compile run again after a crash: iree-compile names the pass first (``iree_repro``)
                with marked(lambda: Triage() if before else iree_repro.locate(text, [*flags, *own])):  # noqa: B023 (called at once)
                    try:
                        vmfb, signature, ir_text, runtime = self._run(text, function, (*flags, *own), before,
                                                                      target, keep_ir, analyze, bar=analyze)
                    except SnippetFailure as barred:  # an op that needs its constant: the module as written
                        if barred.kind is not Kind.COMPILE_ERROR or not self._barred.fed:
                            raise
                        vmfb, signature, ir_text, runtime = self._run(text, function, (*flags, *own), before,
                                                                      target, keep_ir, analyze, bar=False)
            except SnippetFailure as error:
                if error.kind is not Kind.COMPILE_ERROR:
                    raise
                failure = error  # the last route's (IREE's own) diagnostics are the ones kept
                continue
            route = "onnx via torch-onnx-to-torch and the torch input" if before else f"{used} input"
            return Output(vmfb, signature, kind, route, ir_text, runtime, self._barred)
        assert failure is not None
        found = iree_repro.locate(text, [*flags, *own], parsed=not failure.triaged().iree_cannot_parse)
        if found.failing_pass not in ("iree-compile", "import"):
            failure.message = f"{failure.message} in {found.failing_pass}"
        raise failure.with_triage(found)

    def _run(self, text: str, function: str, flags: tuple[str, ...], before: list[str], target: str,
             keep_ir: bool, analyze: bool, bar: bool = False) -> tuple[bytes, tuple[list[TypeSpec], list[TypeSpec]],
                                                                      str, bool | None]:
        session = self._session(flags)
        with mlirtools.collecting(session.context, target) as parsing, session.context:
            try:  # in Python, with the GIL: a Python handler may take the parser's diagnostics
                module = self._ir.Module.parse(text)
            except Exception as error:
                release = iree_release()
                failure = parsing.failure(Kind.COMPILE_ERROR, f"the snippet does not parse or verify with IREE "
                                          f"{release}", error)
                if newer_iree_syntax([d.message for d in failure.diagnostics]):
                    failure.message += (f" (hint: written for a newer IREE than {release}? IREE's op syntax "
                                        "changes between releases)")
                    failure.triaged().iree_cannot_parse = release  # counted apart: a file this IREE cannot read
                for diagnostic in failure.diagnostics:
                    diagnostic.notes = [_parse(f"-:{n.line}:{n.column}: {n.message}", n.severity) if n.line else n
                                        for n in diagnostic.notes]
                raise failure from None
        _reject_other_dialects(module, self._ir, target)
        self._barred = iree_fed.bar_constants(module, self._ir, function, bar)
        signature = entry_signature(mlirtools.find_function(module, function), self._ir)
        invocation = session.invocation()
        diags = CallbackDiagnostics(invocation, target)  # IREE's pipeline runs without the GIL, on any thread
        try:
            invocation.import_module(module.operation)
            for pipeline in before:
                if not invocation.execute_text_pass_pipeline(pipeline):
                    raise diags.failure(Kind.COMPILE_ERROR, f"IREE's {pipeline} failed")
            runtime = self._analyzed(invocation, diags, function) if analyze else None
            if not invocation.execute():
                raise diags.failure(Kind.COMPILE_ERROR, "IREE's compiler failed")
            output = self._buffer.open_membuffer()
            try:
                invocation.output_vm_bytecode(output)
            except ValueError as error:
                raise diags.failure(Kind.COMPILE_ERROR, f"IREE's compiler failed: {error}") from None
            vmfb = bytes(output.map_memory())
            ir_text = ""
            if keep_ir:
                printed = self._buffer.open_membuffer()
                invocation.output_ir(printed)
                ir_text = bytes(printed.map_memory()).decode("utf-8", "replace")
        finally:
            invocation.close()
        return vmfb, signature, ir_text, runtime

    def _analyzed(self, invocation: Any, diags: Any, function: str) -> bool | None:
        """Run IREE's pipeline up to its global optimization (constants folded, nothing yet
        in buffers), decide on that IR whether the entry's checks or results depend on
        run-time values (``judging.valueflow.tensor_runtime``), and set the invocation to go
        on from there."""
        from pytest_mlir_snippets.worker.judging.valueflow import tensor_runtime

        handle = invocation._inv_p
        _phase_setter("To")(handle, PHASE)
        if not invocation.execute():
            raise diags.failure(Kind.COMPILE_ERROR, "IREE's compiler failed")
        printed = self._buffer.open_membuffer()
        invocation.output_ir(printed)
        text = bytes(printed.map_memory()).decode("utf-8", "replace")
        try:
            with invocation.session.context:
                runtime = tensor_runtime(self._ir.Module.parse(text), function)
        except Exception:  # no verdict on computing: the compile goes on
            runtime = None
        _phase_setter("From")(handle, PHASE)
        _phase_setter("To")(handle, b"end")
        return runtime


PHASE = b"global-optimization"  # where ``Compiler._analyzed`` looks at the program


@cache
def _phase_setter(which: str) -> Any:
    """The embedding API's ``ireeCompilerInvocationSetCompile{To,From}Phase``
    (``iree/compiler/embedding_api.h``), which the Python wrapper does not expose:
    ``--compile-to`` / ``--compile-from`` of one invocation."""
    from iree.compiler.api import ctypes_dl

    setter = getattr(ctypes_dl._dylib, f"ireeCompilerInvocationSetCompile{which}Phase")
    setter.argtypes, setter.restype = [ctypes.c_void_p, ctypes.c_char_p], ctypes.c_void_p
    return setter


_SEVERITY = {0: "note", 1: "warning", 2: "error", 3: "remark"}  # iree_compiler_diagnostic_severity_t
_LOCATED = re.compile(r"^(.*?):(\d+):(\d+): (.*)$", re.S)
_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p)


class CallbackDiagnostics(mlirtools.Collector):
    """An invocation's diagnostics, through the embedding API's callback: IREE's pipeline
    runs in ctypes calls (the GIL released) and on its own threads, where a handler of the
    Python bindings may not run; a ctypes callback takes the GIL itself. A message comes
    formatted, ``-:19:11: message``, its notes after it on lines of their own."""

    def __init__(self, invocation: Any, target: str) -> None:
        super().__init__(target)
        from iree.compiler.api import ctypes_dl

        enable = ctypes_dl._dylib.ireeCompilerInvocationEnableCallbackDiagnostics
        enable.restype, enable.argtypes = None, [ctypes.c_void_p, ctypes.c_int, _CALLBACK, ctypes.c_void_p]
        self._callback = _CALLBACK(self._received)  # kept: the invocation calls it until it is closed
        enable(invocation._inv_p, 0, self._callback, None)

    def _received(self, severity: int, message: bytes, size: int, _user: Any) -> None:
        text = ctypes.string_at(message, size).decode("utf-8", "replace")
        parts = [p for p in text.split("\n\n") if p.strip()] or [text]
        first = _parse(parts[0], _SEVERITY.get(severity, "error"))
        notes = [_parse(p, "note") for p in parts[1:]]
        first.notes = [n for n in notes if n.message]
        self.diagnostics.append(first)


def _parse(text: str, severity: str) -> Diagnostic:
    """``-:19:11: message`` (``-``: the module sent) as a Diagnostic; a note keeps its first line."""
    m = _LOCATED.match(text.strip())
    if m is None:
        return Diagnostic(severity, text.strip())
    message = m.group(4).strip()
    if message.startswith("see current operation"):  # the op, printed whole: its first line is enough
        message = "see current operation: " + message.split(":", 1)[1].strip().splitlines()[0][:300]
    return Diagnostic(severity, message, int(m.group(2)), int(m.group(3)), file="" if m.group(1) == "-" else m.group(1))


def _reject_other_dialects(module: Any, ir: Any, target: str) -> None:
    """Ops of dialects IREE does not take as input: unsupported, by name."""
    found = {op.name.split(".")[0] for op in mlirtools.ops_where(module, ir, lambda op: True)}
    other = found - IREE_INPUT
    if other:
        raise dialect_failure(other, target, detail=f" (IREE takes {ACCEPTED} input)")


def entry_signature(func_op: Any, ir: Any) -> tuple[list[TypeSpec], list[TypeSpec]]:
    """Argument and result specs of the entry, torch's value tensors included."""
    ftype = func_op.type
    try:
        return [type_spec(t, ir) for t in ftype.inputs], [type_spec(t, ir) for t in ftype.results]
    except UnsupportedType as error:
        raise SnippetFailure(Kind.UNSUPPORTED, str(error)) from None


def type_spec(t: Any, ir: Any) -> TypeSpec:
    """A builtin tensor or scalar type, or ``!torch.vtensor<[3,?],si64>``, as a ``TypeSpec``."""
    text = str(t)
    m = _VTENSOR.match(text)
    if m:
        shape = tuple(None if d in ("?", "-1") else int(d) for d in m.group(1).split(",") if d)
        spec = TypeSpec("tensor", _TORCH_ELEMENTS.get(m.group(2), m.group(2)), shape)
        spec.dtype  # noqa: B018 - raises UnsupportedType for element types we cannot feed
        return spec
    if text.startswith("!torch."):
        raise UnsupportedType(f"argument or result type {text} cannot be fed on this target")
    if text.startswith("memref<"):
        raise UnsupportedType(f"memref arguments ({text}) are not IREE input: IREE takes tensors")
    return mlirtools.type_spec(ir.ShapedType(t) if text.startswith("tensor<") else t)
