"""ONNX ops that torch-mlir leaves (or converts wrongly), expanded into ONNX ops it converts.

Runs on an imported ONNX model before ``convert-torch-onnx-to-torch``: each
``torch.operator "onnx.X"`` with an expander in ``EXPANDERS`` is offered to it;
the expander either returns the op's results, built from simpler ONNX ops and
constants computed here with numpy (shapes are static in an ONNX import), or
``None`` to leave the op to torch-mlir. The expansions follow the ONNX
specification and its reference implementation (``onnx.reference``), the same
semantics the recorded outputs were made with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from pytest_mlir_snippets.worker.lowering.onnx.build import Body, Emitter, OnnxOp, view

# after the conversion: the expansions' functions inlined (and dropped), nothing else changed
INLINE = "builtin.module(inline{default-pipeline=})"

Expander = Callable[[OnnxOp, Emitter], "list[Any] | None"]


def _expanders() -> dict[str, Expander]:
    from pytest_mlir_snippets.worker.lowering.onnx import (
        affine,
        control,
        dropout,
        empty,
        nms,
        pad,
        quant,
        resize,
        select,
        spectral,
        unpool,
    )

    return {
        "AffineGrid": affine.affine_grid,
        "DFT": spectral.dft,
        "Compress": select.compress,
        "ConvTranspose": select.conv_transpose,
        "DequantizeLinear": quant.dequantize_linear,
        "Dropout": dropout.dropout,
        "Flatten": empty.empty_view,
        "If": control.if_,
        "Loop": control.loop,
        "MaxUnpool": unpool.max_unpool,
        "NonMaxSuppression": nms.non_max_suppression,
        "Pad": pad.pad,
        "QLinearMatMul": quant.qlinear_matmul,
        "QuantizeLinear": quant.quantize_linear,
        "Reshape": empty.empty_view,
        "Resize": resize.resize,
        "Squeeze": empty.empty_view,
        "Unsqueeze": empty.empty_view,
    }


def expand(module: Any, tir: Any) -> int:
    """Expand every ONNX op there is an expander for; returns how many were expanded.

    Result types the import got wrong are set right first (``infer``): expanders read them.
    Each expansion is built in a private function of its own, at opset ``OPSET`` (the
    conversion picks an op's pattern by its function's opset, and the ops an expansion
    uses must mean what it means by them whatever the model's opset), called in the op's
    place; ``INLINE`` inlines it once converted."""
    from pytest_mlir_snippets.worker.lowering.onnx import infer

    infer.fix_result_types(module, tir)
    table = _expanders()
    found: list[Any] = []

    def visit(op: Any) -> Any:
        if op.name == "torch.operator" and _onnx_name(op) in table:
            found.append(op)
        return tir.WalkResult.ADVANCE

    module.operation.walk(visit)
    expanded = 0
    for op in found:
        onnx_op = view(op, tir)
        body = Body(tir, module, op, f"onnx_expansion_{expanded}_{onnx_op.name}")
        onnx_op.inputs = [None if x is None else dataclasses.replace(x, value=body.arguments[i])
                          for i, x in enumerate(onnx_op.inputs)]
        results = table[onnx_op.name](onnx_op, Emitter(tir, body.block, op.location))
        if results is None:
            body.erase()
            continue
        body.replace(results)
        expanded += 1
    return expanded


def _onnx_name(op: Any) -> str:
    name = str(op.attributes["name"]).strip('"')
    return name.removeprefix("onnx.")
