"""A RUN command of upstream MLIR's integration tests, run in the sandbox worker.

compile: the file through the command's ``mlir-opt`` stages, in process through the
bindings (``optflags``), then ``mlir-translate`` where the command has it. execute: the
wheel's ``mlir-runner`` (or ``lli``) on that, as a subprocess with the command's own
arguments (``-e``, ``-entry-point-result``, ``-shared-libs``, ``-O3``, ...); its stdout
(and stderr, where the command merges it: ``2>&1``) goes through FileCheck with the
command's arguments: golden ``filecheck``. The runner's stderr otherwise goes to the
worker's capture file, the item's output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

from pytest_mlir_snippets import children
from pytest_mlir_snippets.compilekey import CompileKey, request_key
from pytest_mlir_snippets.golden.filecheck import filecheck
from pytest_mlir_snippets.mlirtext.litscript import LLI, TRANSLATE, LitCommand, tool
from pytest_mlir_snippets.mlirtext.sections import sections
from pytest_mlir_snippets.protocol import CompileFacts, Golden, Kind, LitExecute, LitRequest, Response, Stage, Verdict
from pytest_mlir_snippets.worker.core import SnippetFailure

EXECUTE = Stage.EXECUTE.value  # the stage of a failure of the runner or FileCheck
RUN_TIMEOUT = 3600.0  # the sandbox's own timeout kills the worker first; the runner dies with it
OUTPUT_MARKER = "\n// -----\n"  # between the sections' outputs, as mlir-opt prints them
_lowered: OrderedDict[CompileKey, tuple[str, list[str]]] = OrderedDict()


def handle(request: LitRequest) -> Response:
    """A compile or execute request for a RUN command."""
    command = request.command
    key = request_key(request)
    if key not in _lowered:
        notes: list[str] = []
        try:
            _lowered[key] = (lower(request.module, command, notes), notes)
        except SnippetFailure as failure:
            failure.stage = Stage.COMPILE.value
            raise
        while len(_lowered) > 16:
            _lowered.popitem(last=False)
    lowered, notes = _lowered[key]
    # legacy: what of another LLVM version was replaced (legacy.py), said on the record
    facts = CompileFacts(front_end="lit RUN line", legacy=list(notes))
    if not isinstance(request, LitExecute):
        return Response(Kind.PASS, ir=lowered if request.options.print_ir else None, facts=facts)
    return execute(lowered, command, request.module, facts)


def lower(text: str, command: LitCommand, notes: list[str] | None = None) -> str:
    """The file after the command's mlir-opt stages (and mlir-translate), as text;
    ``notes`` gets what of another LLVM version was replaced on the way."""
    notes = [] if notes is None else notes
    if command.opt_stages and splits(command.opt_stages[0]):  # each section alone, the outputs joined
        text = OUTPUT_MARKER.join(_optimize(section, command, notes) for section in split_file(text))
    elif command.opt_stages:
        text = _optimize(text, command, notes)
    if command.translate is not None:
        done = subprocess.run([tool(TRANSLATE), *command.translate], input=text.encode(), capture_output=True,
                              timeout=RUN_TIMEOUT)
        if done.returncode:
            raise SnippetFailure(Kind.COMPILE_ERROR, "mlir-translate failed:\n" + done.stderr.decode(errors="replace"))
        text = done.stdout.decode()
    return text


def splits(args: list[str]) -> bool:
    """Whether an mlir-opt stage reads its input with ``-split-input-file``."""
    return any(a.lstrip("-").split("=", 1)[0] == "split-input-file" for a in args)


def split_file(text: str) -> list[str]:
    """The ``// -----`` sections of ``text``, each on its own lines of the file (the lines
    before it left empty), so that diagnostics name the file's lines, as mlir-opt's do."""
    return ["\n" * text.count("\n", 0, start) + text[start:end] for start, end in sections(text)]


def _optimize(text: str, command: LitCommand, notes: list[str]) -> str:
    from mlir import ir

    from pytest_mlir_snippets.worker.lowering import mlirtools
    from pytest_mlir_snippets.worker.lowering.optflags import steps

    plans = [steps(args, notes) for args in command.opt_stages]  # a test pass without equivalent fails first
    with ir.Context() as ctx, ir.Location.unknown(), mlirtools.collecting(ctx, "cpu") as diags:
        located = _Located(command.source or "-")
        handler = ctx.attach_diagnostic_handler(located)  # runs before the collector's
        try:
            return _run_stages(text, command, plans, diags, notes)
        except SnippetFailure as failure:
            located.apply(failure.diagnostics, failure.__cause__ or failure.__context__)
            raise
        finally:
            handler.detach()


class _Located:
    """File lines for diagnostics: the file is parsed under its own path (as mlir-opt
    names it in locations), which ``mlirtools``' named texts do not cover. Diagnostics
    are matched by their message."""

    def __init__(self, source: str) -> None:
        self.pattern = re.compile(re.escape(f'"{source}":') + r"(\d+):(\d+)")
        self.found: dict[str, tuple[int, int]] = {}

    def __call__(self, d: Any) -> bool:
        m = self.pattern.search(str(d.location))
        if m:
            self.found.setdefault(d.message, (int(m.group(1)), int(m.group(2))))
        return False  # on to the collector

    def apply(self, diagnostics: list[Any], error: BaseException | None = None) -> None:
        for raw in getattr(error, "error_diagnostics", None) or []:  # a parse error's, not seen by handlers
            self(raw)
        for diagnostic in diagnostics:
            if diagnostic.line is None and diagnostic.message in self.found:
                diagnostic.line, diagnostic.column = self.found[diagnostic.message]


def _run_stages(text: str, command: LitCommand, plans: list[list[Any]], diags: Any, notes: list[str]) -> str:
    """Parse the file and run the mlir-opt stages' steps on it, in the current context."""
    from mlir import ir, passmanager

    from pytest_mlir_snippets.worker.lowering import legacy, mlirtools

    ir.Context.current.allow_unregistered_dialects = any(
        "-allow-unregistered-dialect" in a for stage in command.opt_stages for a in stage)
    module = _parse(text, command.source or "-", diags, notes)
    for plan in plans:
        for step in plan:
            if isinstance(step, str):
                mlirtools.run_passes(module, step, passmanager.PassManager.parse, diags, "mlir-opt")
            else:
                try:
                    step(module)
                except SnippetFailure:
                    raise
                except Exception as error:  # the transform interpreter's MLIRError, ...: the step's compile-error
                    raise diags.failure(Kind.COMPILE_ERROR, f"{step.__name__} failed", error) from error
                if not module.operation.verify():
                    raise diags.failure(Kind.COMPILE_ERROR, f"{step.__name__} left invalid IR")
    left = _op_names(module, ir)
    if legacy.left_for_finish(left):  # the runner of the file's time got these lowered by convert-func-to-llvm
        mlirtools.run_passes(module, legacy.FINISH, passmanager.PassManager.parse, diags, "mlir-opt")
        notes.append(f"the pipeline left {', '.join(sorted(left))}: finished with {legacy.FINISH} "
                     "(what the file's pipeline lowered with the LLVM of its time)")
    return str(module)


def _parse(text: str, source: str, diags: Any, notes: list[str]) -> Any:
    """The file as a module; where it does not parse, once more with the ops that
    upstream removed or renamed since written as it replaced them (``legacy``)."""
    from mlir import ir

    from pytest_mlir_snippets.worker.lowering import legacy, mlirtools

    try:
        return mlirtools.parse_named(ir, text, source)  # locations name the file
    except Exception as error:
        bridged, reasons = legacy.bridge_syntax(text)
        if reasons:
            try:
                module = mlirtools.parse_named(ir, bridged, source)
            except Exception:
                pass  # the first error is the one to show
            else:
                notes.extend(reasons)
                return module
        raise diags.failure(Kind.COMPILE_ERROR, "the file does not parse or verify", error) from error


def _op_names(module: Any, ir: Any) -> set[str]:
    """The names of the ops in ``module``, builtin's and llvm's left out."""
    from pytest_mlir_snippets.worker.lowering import mlirtools

    found = mlirtools.ops_where(module, ir, lambda op: not op.name.startswith(("builtin.", "llvm.")))
    return {op.name for op in found}


def execute(lowered: str, command: LitCommand, source_text: str, facts: CompileFacts) -> Response:
    with tempfile.TemporaryDirectory(prefix="mlir-lit-") as folder:
        path = Path(folder) / ("input.ll" if command.runner == LLI else "input.mlir")
        path.write_text(lowered)
        argv = [tool(command.runner), str(path), *command.runner_args]
        if command.runner == LLI:  # lli passes what follows its input to the program
            argv = [tool(LLI), *command.runner_args, str(path)]
        try:
            stderr = subprocess.STDOUT if command.merge_stderr else subprocess.PIPE  # 2>&1: FileCheck sees both
            done = subprocess.run(argv, timeout=RUN_TIMEOUT, cwd=folder, stdin=subprocess.DEVNULL,
                                  env=dict(os.environ, **command.env) if command.env else None,
                                  stdout=subprocess.PIPE, stderr=stderr, preexec_fn=children.die_with_parent())
        except subprocess.TimeoutExpired:
            raise SnippetFailure(Kind.TIMEOUT, f"{command.runner} ran longer than {RUN_TIMEOUT:g} s") from None
        seen = done.stdout.decode(errors="replace")
        if done.stderr:
            sys.stderr.write(done.stderr.decode(errors="replace"))
            sys.stderr.flush()
        verdict = Verdict(stdout=seen)
        status = children.exit_status(done.returncode)
        if command.expect_crash and done.returncode >= 0:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"{command.runner} {status}, but the RUN line expects a "
                                 "crash (not --crash)", stage=EXECUTE, verdict=verdict, facts=facts)
        if command.expect_failure == (done.returncode == 0):
            why = "exited 0, but the RUN line expects a failure (not)" if command.expect_failure else status
            modules = lowered.count(OUTPUT_MARKER) + 1
            if not command.expect_failure and modules > 1:  # what lit's run of the line meets too
                why += (f" (its input is {modules} modules, one per section of mlir-opt's -split-input-file, "
                        "which it reads as one file: an entry inside one of them is not at its top level)")
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"{command.runner} {why}", stage=EXECUTE, verdict=verdict,
                                 facts=facts)
        if command.filecheck is None:
            verdict.golden, verdict.reference = Golden.NONE, "the RUN line has no FileCheck"
            return Response(Kind.PASS, verdict=verdict, facts=facts)
        args = list(command.filecheck)
        if not Path(command.source).is_file():  # the check file, where the worker cannot read the original
            check = Path(folder) / Path(command.source).name
            check.write_text(source_text)
            args = [str(check) if a == command.source else a for a in args]
        checked = filecheck(args, seen)
    verdict.golden, verdict.reference = Golden.FILECHECK, f"FileCheck {' '.join(command.filecheck)}"
    if not checked.ok:
        raise SnippetFailure(Kind.GOLDEN_MISMATCH, "FileCheck: the output does not match the CHECK lines\n"
                             + checked.message, stage=EXECUTE, verdict=verdict, facts=facts)
    return Response(Kind.PASS, verdict=verdict, facts=facts)
