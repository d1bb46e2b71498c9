"""An ONNX op emitted in place in the model's own function (an unrolled Loop or Scan),
moved into a private function at the expansions' opset (``build.OPSET``) and called there.

Unrolling builds ops at the model's opset; torch-mlir converts few ops of old opsets
(Concat-4 of a Scan-9 model has no pattern), while the same op at ``OPSET`` means the
same for the forms the unrolling builds (a Concat of same-typed values along an axis).
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.onnx.build import Body, defining_op

OLD = 13  # below this model opset, the op is moved


def lifted(value: Any, tir: Any, opset: int) -> Any:
    """``value``, the single result of an ONNX op, as computed at ``OPSET`` where ``opset``
    is old: the op cloned into a function of its operands, called in its place."""
    op = defining_op(value)
    if opset >= OLD or op is None:
        return value
    module = op.parent
    while module is not None and module.name != "builtin.module":
        module = module.parent
    if module is None:
        return value
    name = f"onnx_lifted_{len(module.regions[0].blocks[0].operations)}"
    body = Body(tir, module.opview, op, name)
    clone = op.clone(ip=tir.InsertionPoint(body.block))
    for i, argument in enumerate(body.arguments):
        clone.operands[i] = argument
    return body.replace([clone.results[0]])[0]
