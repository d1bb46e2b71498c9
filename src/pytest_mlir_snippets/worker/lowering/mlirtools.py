"""Helpers shared by backends that use MLIR Python bindings (upstream or torch-mlir)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pytest_mlir_snippets.golden.inputs import TypeSpec, UnsupportedType
from pytest_mlir_snippets.protocol import Diagnostic, Kind, Triage
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.dialects import dialect_failure

NAMED_SOURCES = ("model_linalg.mlir", "transform.mlir")  # texts parsed under their own name (parse_named)
# locations in those, and in the final IR of an iteration (registry.Target.run_ir)
_LOC = re.compile(r'"(-|model_linalg\.mlir|transform\.mlir|llvm\.mlir|gpu\.mlir)":(\d+):(\d+)')
_UNKNOWN_DIALECT = re.compile(r"Dialect `([\w.]+)' not found for custom op")
_SEVERITY = {"DiagnosticSeverity.ERROR": "error", "DiagnosticSeverity.WARNING": "warning",
             "DiagnosticSeverity.NOTE": "note", "DiagnosticSeverity.REMARK": "remark"}


# a boolean tensor's elements in hex: torch-mlir's MLIR writes a byte per element, and its
# parser, like upstream's, reads packed bits; text printed there is spelled out before a parse
_I1_HEX = re.compile(r'dense<"0x([0-9A-Fa-f]*+)">(\s*:\s*tensor<((?:\d+x)*)i1>)')


def spell_out_booleans(text: str) -> str:
    """``text`` with every boolean tensor literal written in hex a byte per element
    spelled out as ``[true, false, ...]``, which every MLIR version reads alike."""
    def spelled(m: re.Match[str]) -> str:
        data = bytes.fromhex(m.group(1))
        dims = [int(d) for d in m.group(3).split("x") if d]
        count = 1
        for d in dims:
            count *= d
        if len(data) != count:
            return m.group(0)
        values = [b != 0 for b in data]
        for d in reversed(dims[1:]):
            values = [values[i:i + d] for i in range(0, len(values), d)]  # type: ignore[misc]
        return "dense<" + repr(values).replace("True", "true").replace("False", "false") + ">" + m.group(2)

    return _I1_HEX.sub(spelled, text)


def source_location(location: str) -> tuple[str, int | None, int | None]:
    """(named source or "", line, column) in the parsed text, from a printed MLIR location."""
    m = _LOC.search(location)
    if not m:
        return "", None, None
    return ("" if m.group(1) == "-" else m.group(1)), int(m.group(2)), int(m.group(3))


def location_of(location: str) -> tuple[int | None, int | None]:
    """Line and column in the parsed text, from a printed MLIR location."""
    return source_location(location)[1:]


def to_diagnostic(d: Any) -> Diagnostic:
    """An MLIR ``Diagnostic``/``DiagnosticInfo`` as our picklable record."""
    severity = _SEVERITY.get(str(d.severity), str(d.severity).split(".")[-1].lower())
    file, line, column = source_location(str(d.location))
    return Diagnostic(severity, d.message, line, column, [to_diagnostic(n) for n in d.notes], file)


def parse_named(ir: Any, text: str, name: str) -> Any:
    """A module parsed with ``name`` in its locations, so that diagnostics say which text
    they are in (a single top-level op gets a module around it; text with several
    top-level ops is parsed as ``Module.parse`` does, without the name)."""
    try:
        op = ir.Operation.parse(text, source_name=name)
    except ir.MLIRError as error:
        if "single top-level operation" not in str(error):
            raise
        return ir.Module.parse(text)
    if op.operation.name == "builtin.module":
        return op
    module = ir.Module.create()
    ir.InsertionPoint(module.body).insert(op.operation)
    return module


def parse_module_named(ir: Any, text: str, name: str) -> Any:
    """``parse_named`` as an ``ir.Module`` (the ExecutionEngine's): the ops and attributes moved into one."""
    parsed = parse_named(ir, text, name)
    if isinstance(parsed, ir.Module):
        return parsed
    module = ir.Module.create(parsed.location)
    for attribute in parsed.operation.attributes:
        module.operation.attributes[attribute] = parsed.operation.attributes[attribute]
    insert = ir.InsertionPoint(module.body)
    for op in list(parsed.body.operations):
        op.detach_from_parent()
        insert.insert(op)
    return module


class Collector:
    """Collects every diagnostic the context emits while attached."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.diagnostics: list[Diagnostic] = []

    def __call__(self, d: Any) -> bool:
        self.diagnostics.append(to_diagnostic(d))
        return True

    def failure(self, kind: Kind, message: str, error: Exception | None = None,
                failing_pass: str = "") -> SnippetFailure:
        """``failing_pass``: the step that failed, when it is not a pass of a pipeline
        (``import``, ``translation``): on the record, as ``failingpass`` names passes."""
        diags = list(self.diagnostics)
        for d in getattr(error, "error_diagnostics", None) or []:
            diag = to_diagnostic(d)
            if diag not in diags:
                diags.append(diag)
        if not diags and error is not None:
            diags.append(Diagnostic("error", str(error)))
        unknown = next((m.group(1) for d in diags if (m := _UNKNOWN_DIALECT.search(d.message))), None)
        if unknown is not None:
            from pytest_mlir_snippets.worker.dialects import dialect_failure

            return dialect_failure([unknown], self.target, diags)
        return SnippetFailure(kind, message, diags, triage=Triage(failing_pass=failing_pass) if failing_pass else None)


@contextmanager
def collecting(context: Any, target: str) -> Iterator[Collector]:
    collector = Collector(target)
    handler = context.attach_diagnostic_handler(collector)
    try:
        yield collector
    finally:
        handler.detach()


SHARED_USES = 500  # compiles per shared context; interned types and attributes are freed with it
SHARED_MAX_TEXT = 1 << 20  # a bigger snippet (large constants) gets a context of its own
_shared: dict[str, Any] = {"context": None, "uses": 0}


def context_for(ir: Any, text: str) -> Any:
    """A context for compiling ``text``: one shared by many compiles (creating one
    registers every dialect, about 7 ms), replaced now and then; a fresh one for big
    inputs, whose constants would otherwise stay interned."""
    if len(text) > SHARED_MAX_TEXT:
        return _new_context(ir)
    if _shared["context"] is None or _shared["uses"] >= SHARED_USES:
        _shared.update(context=_new_context(ir), uses=0)
    _shared["uses"] += 1
    return _shared["context"]


def _new_context(ir: Any) -> Any:
    """Unregistered dialects allowed (the verifier names them); single-threaded: a split
    snippet is a function or a few, so the pass manager's thread pool only adds its
    dispatch to every nested pipeline (docs/speed.md), and
    the workers already run one per core."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    ctx.enable_multithreading(False)
    return ctx


def run_passes(module: Any, pipeline: str, pass_manager: Callable[[str], Any], collector: Collector,
               stage: str) -> None:
    """Run ``pipeline`` on ``module``; failures become a compile-error with diagnostics,
    naming the pass that failed (``failingpass.locate``, from a copy taken before it, unless
    ``failingpass.copying`` is off). In a compile run again after a crash
    (``failingpass.progress_file``), one pass at a time, each marked."""
    try:
        pm = pass_manager(pipeline)
    except Exception as error:  # a bad pipeline string
        from pytest_mlir_snippets.worker.lowering.passnames import unknown_passes

        hint = unknown_passes(str(error))
        raise collector.failure(Kind.COMPILE_ERROR, f"invalid {stage} pipeline: {pipeline}"
                                + (f": {hint}" if hint else ""), error) from None
    from pytest_mlir_snippets.worker.triage.failingpass import copying, locate, missed, progress_file

    if progress_file():  # a compile run again after a crash: one pass at a time, each marked
        found = locate(module.operation, pipeline, pass_manager)
        if found is not None:
            raise _failed_in(collector.failure(Kind.COMPILE_ERROR, f"{stage} failed"), stage, found) from None
        return
    if not copying():  # a failure is run again, copying (failingpass.on_failure_located)
        try:
            pm.run(module.operation)
        except Exception as error:
            missed()
            raise collector.failure(Kind.COMPILE_ERROR, f"{stage} failed", error) from None
        return
    snapshot = module.operation.clone()  # what the pipeline was given: to name the pass that fails
    try:
        pm.run(module.operation)
    except Exception as error:
        failure = collector.failure(Kind.COMPILE_ERROR, f"{stage} failed", error)
        found = locate(snapshot, pipeline, pass_manager)
        raise (_failed_in(failure, stage, found) if found is not None else failure) from None
    finally:
        snapshot.erase()


def _failed_in(failure: SnippetFailure, stage: str, found: Triage) -> SnippetFailure:
    failure.with_triage(found)
    failure.message = f"{stage} failed in {found.failing_pass}"
    return failure


def find_function(module: Any, name: str) -> Any:
    for op in module.body.operations:
        if op.operation.name == "func.func" and op.attributes["sym_name"].value == name:
            return op
    raise SnippetFailure(Kind.COMPILE_ERROR, f"function @{name} not found in the compiled module")


def type_spec(t: Any) -> TypeSpec:
    """An MLIR type as a ``TypeSpec``; raises UnsupportedType for anything else."""
    text = str(t)
    if text.startswith(("tensor<", "memref<")):
        kind = text.split("<", 1)[0]
        if text.startswith("tensor<*") or text.startswith("memref<*"):
            raise UnsupportedType(f"unranked type {text} cannot be fed on this target")
        if kind == "memref" and "," in text:
            raise UnsupportedType(f"memref with a layout or memory space ({text}) cannot be fed")
        shaped: Any = t
        element = str(shaped.element_type)
        shape = tuple(None if shaped.is_dynamic_dim(i) else shaped.get_dim_size(i) for i in range(shaped.rank))
        spec = TypeSpec(kind, element, shape)
    else:
        spec = TypeSpec("scalar", text)
    spec.dtype  # noqa: B018 - raises UnsupportedType for element types we cannot feed
    return spec


def signature(func_op: Any, shaped_type: Callable[[Any], Any]) -> tuple[list[TypeSpec], list[TypeSpec]]:
    """Argument and result specs of a ``func.func`` op."""
    ftype = func_op.type

    def spec(t: Any) -> TypeSpec:
        text = str(t)
        return type_spec(shaped_type(t) if text.startswith(("tensor<", "memref<")) else t)

    return [spec(t) for t in ftype.inputs], [spec(t) for t in ftype.results]


def ops_where(module: Any, ir: Any, predicate: Callable[[Any], bool]) -> list[Any]:
    """The ops of ``module`` for which ``predicate`` holds (collected first, so the
    caller may rewrite them); ``ir`` is the bindings' module (upstream or torch-mlir)."""
    found: list[Any] = []

    def visit(op: Any) -> Any:
        if predicate(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def ops_by_name(module: Any, ir: Any, names: frozenset[str]) -> dict[str, list[Any]]:
    """The ops of ``module`` whose name is in ``names``, by name, in one walk."""
    found: dict[str, list[Any]] = {}

    def visit(op: Any) -> Any:
        name = op.name
        if name in names:
            found.setdefault(name, []).append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def reject_unregistered(module: Any, ir: Any, ctx: Any, target: str, allowed: tuple[str, ...] = ()) -> None:
    """Ops of dialects these bindings do not have (but for ``allowed`` prefixes):
    ``unsupported``, naming every such dialect of the module and the targets that take
    them (a compile-error with a hint for a dialect no target knows: ``worker.dialects``)."""
    unknown = ops_where(module, ir, lambda op: not op.name.startswith(allowed)
                        and not ctx.is_registered_operation(op.name))
    if unknown:
        raise dialect_failure({op.name.split(".")[0] for op in unknown}, target, unregistered(unknown))


def unregistered(ops: list[Any]) -> list[Diagnostic]:
    """One error per unregistered op, at its line and column."""
    located = ((op, source_location(str(op.location))) for op in ops)
    return [Diagnostic("error", f"unregistered operation '{op.name}'", line, column, file=file)
            for op, (file, line, column) in located]


def declare_external(module: Any, ir: Any, name: str, inputs: list[Any], results: list[Any]) -> None:
    """A private ``func.func @name`` without a body at the top of ``module``, with the C interface
    (``_mlir_ciface_name``): what the JIT resolves to a runtime symbol the worker registers."""
    ins, outs = ", ".join(str(t) for t in inputs), ", ".join(str(t) for t in results)
    text = f"func.func private @{name}({ins}) -> ({outs}) attributes {{llvm.emit_c_interface}}"
    ir.InsertionPoint.at_block_begin(module.body).insert(ir.Operation.parse(text))
