"""Compile one iteration of an optimization run: the payload (``model_linalg.mlir``),
its Transform schedule applied by the transform interpreter, then its pass pipeline."""

from __future__ import annotations

from typing import Any

from ..protocol import Diagnostic, Kind, Response
from . import mlirtools

INTERPRETER = "builtin.module(transform-interpreter)"
HOST_LOOPS = ("scf.for", "scf.parallel", "scf.forall", "affine.for", "affine.parallel", "memref.copy")


def full_pipeline(text: str) -> str:
    """``pass_pipeline.txt`` as a module pipeline."""
    text = text.strip()
    if text.startswith("builtin.module("):
        return text
    return f"builtin.module({text})" if text else "builtin.module()"


def spliced(model: str, schedule: str) -> str:
    """The payload with the schedule's named sequences in it, for the transform interpreter."""
    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        payload = ir.Module.parse(model)
        sequence = ir.Module.parse(schedule)
        payload.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        insert = ir.InsertionPoint(payload.body)
        for op in sequence.body.operations:
            insert.insert(op.clone())
        text: str = payload.operation.get_asm(enable_debug_info=True)
        return text


def drop_schedule(module: Any, ir: Any) -> None:
    """After the transform interpreter: the payload alone."""
    for op in mlirtools.ops_where(module, ir, lambda op: op.name == "transform.named_sequence"):
        op.erase()
    if "transform.with_named_sequence" in module.operation.attributes:
        del module.operation.attributes["transform.with_named_sequence"]


def compile_iteration(model: str, schedule: str, pipeline: str, target: str) -> Response:
    from mlir import ir, passmanager

    try:
        text = spliced(model, schedule)
    except Exception as error:
        found = [mlirtools.to_diagnostic(d) for d in getattr(error, "error_diagnostics", None) or []]
        return Response(Kind.COMPILE_ERROR, "the model or the schedule does not parse",
                        found or [Diagnostic("error", str(error))])
    with ir.Context() as ctx, ir.Location.unknown(), mlirtools.collecting(ctx, target) as diags:
        payload = ir.Module.parse(text)
        try:
            mlirtools.run_passes(payload, INTERPRETER, passmanager.PassManager.parse, diags, "the transform schedule")
            drop_schedule(payload, ir)
            mlirtools.run_passes(payload, full_pipeline(pipeline), passmanager.PassManager.parse, diags,
                                 "pass_pipeline.txt")
        except Exception as failure:  # SnippetFailure from run_passes
            return Response(getattr(failure, "kind", Kind.COMPILE_ERROR), str(failure),
                            list(getattr(failure, "diagnostics", [])))
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
