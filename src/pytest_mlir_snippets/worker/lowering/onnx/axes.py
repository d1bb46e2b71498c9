"""Ops whose ``axes`` was an attribute in older opsets, in forms torch-mlir's conversion of
those opsets lacks, as the same op at the expansions' opset with ``axes`` an input:

- ReduceMin and ReduceMax before opset 18 without ``axes``: every axis reduced (ONNX's
  DynamicQuantizeLinear function body, of opset 11, has them);
- Unsqueeze before opset 13 (an opset-11 Loop's body has it), which torch-mlir does
  not convert at all; and Slice of opsets 10 to 12 (starts and ends already inputs, the
  same op as Slice-13), which it does not convert either."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, named_attributes
from pytest_mlir_snippets.worker.lowering.onnx.empty import empty_view
from pytest_mlir_snippets.worker.lowering.onnx.indexing import slice_

REDUCE_AXES_INPUT_SINCE = 18  # ReduceMin and ReduceMax take axes as an input from opset 18
UNSQUEEZE_AXES_INPUT_SINCE = 13
SLICE_INPUTS_SINCE = 10  # Slice-1 takes starts and ends as attributes


def all_axes(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or op.opset >= REDUCE_AXES_INPUT_SINCE or "axes" in op.attrs or not x.rank or not op.results:
        return None
    shape, dtype = op.results[0]
    keepdims = int(op.attrs.get("keepdims", 1))
    if len(shape) != (x.rank if keepdims else 0):
        return None
    return [e.op1(op.name, [x, e.const(np.arange(x.rank), "si64")], shape, dtype, keepdims=keepdims)]


def unsqueeze(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """An empty result as a literal (``empty.empty_view``); before opset 13, axes as an input."""
    empty = empty_view(op, e)
    x = op.inputs[0]
    if empty is not None or x is None or op.opset >= UNSQUEEZE_AXES_INPUT_SINCE or "axes" not in op.attrs:
        return empty
    shape, dtype = op.results[0]
    axes = np.array(op.attrs["axes"]).reshape(-1)
    return [e.op1("Unsqueeze", [x, e.const(axes, "si64")], shape, dtype)]


def slice_before_13(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """A reversed slice as Gathers (``indexing.slice_``); Slice 10 to 12 as Slice-13."""
    gathered = slice_(op, e)
    if gathered is not None or not SLICE_INPUTS_SINCE <= op.opset < UNSQUEEZE_AXES_INPUT_SINCE:
        return gathered
    return as_written(op, e)


def as_written(op: OnnxOp, e: Emitter) -> list[Any]:
    """``op`` again, its attributes and result types (``[?]`` ones too) as imported, in the
    expansion's function: at the expansions' opset."""
    operands = [e.none() if x is None else x.value for x in op.inputs]
    attributes = {a.name: a.attr for a in named_attributes(op.operation)}
    types = [str(r.type) for r in op.operation.results]
    return list(e._create("torch.operator", types, operands, attributes).results)
