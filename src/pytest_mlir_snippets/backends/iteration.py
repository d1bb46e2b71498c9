"""Compile one iteration of an optimization run: the payload (``model_linalg.mlir``),
its Transform schedule applied by the transform interpreter, then its pass pipeline."""

from __future__ import annotations

from typing import Any

from ..protocol import Kind, Response
from . import mlirtools

HOST_LOOPS = ("scf.for", "scf.parallel", "scf.forall", "affine.for", "affine.parallel", "memref.copy")


def compile_iteration(model: str, schedule: str, pipeline: str, target: str) -> Response:
    from mlir import ir, passmanager

    with ir.Context() as ctx, ir.Location.unknown(), mlirtools.collecting(ctx, target) as diags:
        try:
            payload = ir.Module.parse(model)
            sequence = ir.Module.parse(schedule)
        except Exception as error:
            failure = diags.failure(Kind.COMPILE_ERROR, "the model or the schedule does not parse", error)
            return Response(failure.kind, failure.message, failure.diagnostics)
        payload.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        insert = ir.InsertionPoint(payload.body)
        for op in sequence.body.operations:
            insert.insert(op.clone())
        pipeline = pipeline.strip()
        if not pipeline.startswith("builtin.module("):
            pipeline = f"builtin.module({pipeline})" if pipeline else "builtin.module()"
        try:
            mlirtools.run_passes(payload, "builtin.module(transform-interpreter)", passmanager.PassManager.parse,
                                 diags, "the transform schedule")
            for op in mlirtools.ops_where(payload, ir, lambda op: op.name == "transform.named_sequence"):
                op.erase()
            del payload.operation.attributes["transform.with_named_sequence"]
            mlirtools.run_passes(payload, pipeline, passmanager.PassManager.parse, diags, "pass_pipeline.txt")
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
