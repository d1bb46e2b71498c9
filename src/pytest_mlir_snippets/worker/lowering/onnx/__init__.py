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

from collections.abc import Callable
from typing import Any

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, view

Expander = Callable[[OnnxOp, Emitter], "list[Any] | None"]


def _expanders() -> dict[str, Expander]:
    from pytest_mlir_snippets.worker.lowering.onnx import roialign, sampling, spectral

    return {
        "DFT": spectral.dft,
        "GridSample": sampling.grid_sample,
        "RoiAlign": roialign.roi_align,
    }


def expand(module: Any, tir: Any) -> int:
    """Expand every ONNX op there is an expander for; returns how many were expanded."""
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
        emitter = Emitter(tir, op)
        results = table[onnx_op.name](onnx_op, emitter)
        if results is None:
            emitter.discard()
            continue
        for old, new in zip(op.results, results, strict=True):
            old.replace_all_uses_with(new)
        op.erase()
        expanded += 1
    return expanded


def _onnx_name(op: Any) -> str:
    name = str(op.attributes["name"]).strip('"')
    return name.removeprefix("onnx.")
