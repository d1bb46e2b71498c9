"""Compile one iteration of an optimization run: the payload (``model_linalg.mlir``),
its Transform schedule applied by the transform interpreter, then its pass pipeline."""

from __future__ import annotations

from typing import Any

from ..protocol import Kind, Response
from . import mlirtools
from .base import SnippetFailure

INTERPRETER = "builtin.module(transform-interpreter)"
HOST_LOOPS = ("scf.for", "scf.parallel", "scf.forall", "affine.for", "affine.parallel", "memref.copy")


def full_pipeline(text: str) -> str:
    """``pass_pipeline.txt`` as a module pipeline."""
    text = text.strip()
    if text.startswith("builtin.module("):
        return text
    return f"builtin.module({text})" if text else "builtin.module()"


def splice(ir: Any, model: str, schedule: str) -> Any:
    """The payload with the schedule's named sequences in it, for the transform
    interpreter (parsed in the current context)."""
    payload = ir.Module.parse(model)
    sequence = ir.Module.parse(schedule)
    payload.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
    insert = ir.InsertionPoint(payload.body)
    for op in sequence.body.operations:
        insert.insert(op.clone())
    return payload


def spliced(model: str, schedule: str) -> str:
    """``splice`` as text, for a backend that parses it itself."""
    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        text: str = splice(ir, model, schedule).operation.get_asm(enable_debug_info=True)
        return text


def drop_schedule(module: Any, ir: Any) -> None:
    """After the transform interpreter: the payload alone."""
    for op in mlirtools.ops_where(module, ir, lambda op: op.name == "transform.named_sequence"):
        op.erase()
    if "transform.with_named_sequence" in module.operation.attributes:
        del module.operation.attributes["transform.with_named_sequence"]


def compile_iteration(model: str, schedule: str, pipeline: str, target: str) -> Response:
    from mlir import ir, passmanager

    with ir.Context() as ctx, ir.Location.unknown(), mlirtools.collecting(ctx, target) as diags:
        try:
            payload = splice(ir, model, schedule)
        except Exception as error:
            failure = diags.failure(Kind.COMPILE_ERROR, "the model or the schedule does not parse", error)
            return Response(failure.kind, failure.message, failure.diagnostics)
        try:
            mlirtools.run_passes(payload, INTERPRETER, passmanager.PassManager.parse, diags, "the transform schedule")
            drop_schedule(payload, ir)
            mlirtools.run_passes(payload, full_pipeline(pipeline), passmanager.PassManager.parse, diags,
                                 "pass_pipeline.txt")
        except SnippetFailure as failure:
            return Response(failure.kind, failure.message, failure.diagnostics)
        return Response(Kind.PASS, ir=str(payload), info={"host_ops": host_ops(payload, ir)})


def host_ops(module: Any, ir: Any) -> list[dict[str, Any]]:
    """Loops and copies left in host code (outside ``gpu.module`` and GPU kernels)."""
    def on_host(op: Any) -> bool:
        if op.name not in HOST_LOOPS:
            return False
        parent = op.parent
        while parent is not None:
            if parent.name in ("gpu.module", "gpu.launch", "gpu.func"):
                return False
            parent = parent.parent
        return True

    found = []
    for op in mlirtools.ops_where(module, ir, on_host):
        line, column = mlirtools.location_of(str(op.location))
        found.append({"op": op.name, "line": line, "column": column})
    return found
