"""Checks of a Transform-dialect schedule (an optimization run's ``vN/transform.mlir``)."""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.protocol import Kind, Response
from pytest_mlir_snippets.worker.lowering import mlirtools

ENTRY = "__transform_main"


def check_schedule(text: str) -> Response:
    """A real schedule: parses, and has ``transform.named_sequence @__transform_main``
    doing more than yield."""
    from mlir import ir

    with ir.Context() as ctx, ir.Location.unknown(), mlirtools.collecting(ctx, "cpu") as diags:
        try:
            module = ir.Module.parse(text)
        except Exception as error:
            failure = diags.failure(Kind.COMPILE_ERROR, "transform.mlir does not parse", error)
            return Response(failure.kind, failure.message, failure.diagnostics)
        entries = mlirtools.ops_where(module, ir, lambda op: _is_entry(op))
        if not entries:
            return Response(Kind.COMPILE_ERROR, f"transform.mlir has no transform.named_sequence @{ENTRY}")
        body = entries[0].regions[0].blocks[0].operations
        steps = [op.name for op in body if op.name != "transform.yield"]
        if not steps:
            return Response(Kind.COMPILE_ERROR, f"@{ENTRY} only yields: a placeholder, not a schedule")
        return Response(Kind.PASS, steps=steps)


def _is_entry(op: Any) -> bool:
    return op.name == "transform.named_sequence" and "sym_name" in op.attributes and \
        op.attributes["sym_name"].value == ENTRY
