"""Scan, which torch-mlir does not convert, unrolled in place as ``control.py`` unrolls
Loop: the scan inputs' length along their axes is static, so the body is cloned once per
iteration before the Scan, each scan input's slice taken with a Gather of the iteration's
index (``scan_input_directions``: from the end), the states threaded through, and each
iteration's scan output values given a unit axis at ``scan_output_axes`` and concatenated
(``scan_output_directions``: in reverse order). Only Scan-9 and later (Scan-8 has a batch
axis and sequence lengths)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, parse_type
from pytest_mlir_snippets.worker.lowering.onnx.control import (
    MAX_ITERATIONS,
    _give_up,
    _refine_returned,
    _replace,
    clone_body,
)
from pytest_mlir_snippets.worker.lowering.onnx.lift import lifted


def scan(op: OnnxOp, e: Emitter) -> list[Any] | None:
    if op.operation is not None and op.opset >= 9:
        scan_op = op.operation
        before = {inner.operation for inner in scan_op.block.operations}
        try:
            _unroll(scan_op, op.attrs, e.tir, op.opset, before)
        except Exception:  # a form not foreseen: nothing of the attempt stays
            _give_up(scan_op, before)
            raise
    return None  # unrolled in place, or left to torch-mlir


def _axes(attrs: dict[str, Any], name: str, count: int) -> list[int]:
    return [int(v) for v in attrs.get(name, [0] * count)]


def _unroll(scan_op: Any, attrs: dict[str, Any], tir: Any, opset: int, before: set[Any]) -> bool:
    m = int(attrs["num_scan_inputs"])
    operands = list(scan_op.operands)
    n = len(operands) - m
    inputs = [parse_type(str(v.type)) for v in operands[n:]]
    if any(t is None for t in inputs):
        return False
    in_axes, in_dirs = _axes(attrs, "scan_input_axes", m), _axes(attrs, "scan_input_directions", m)
    lengths = {t[0][a % len(t[0])] for t, a in zip(inputs, in_axes, strict=True) if t is not None}
    if len(lengths) != 1 or min(lengths) < 0 or max(lengths) > MAX_ITERATIONS:
        return False
    length = lengths.pop()
    block = scan_op.regions[0].blocks[0]
    args, ops = list(block.arguments), list(block.operations)
    terminator, body = ops[-1], ops[:-1]
    k = len(terminator.operands) - n
    out_axes, out_dirs = _axes(attrs, "scan_output_axes", k), _axes(attrs, "scan_output_directions", k)
    e = Emitter(tir, scan_op.block, scan_op.location, before=scan_op)
    states = operands[:n]
    rows: list[list[Any]] = [[] for _ in range(k)]
    for t in range(length):
        mapping = dict(zip(args[:n], states, strict=True))
        for j, (x, shape) in enumerate(zip(operands[n:], inputs, strict=True)):
            assert shape is not None
            axis = in_axes[j] % len(shape[0])
            index = e.const(np.array(length - 1 - t if in_dirs[j] else t), "si64")
            row = [d for i, d in enumerate(shape[0]) if i != axis]
            mapping[args[n + j]] = e.op1("Gather", [x, index], row, shape[1], axis=axis)
        mapped = clone_body(scan_op, body, terminator, mapping, tir, opset)
        states = mapped[:n]
        for j, value in enumerate(mapped[n:]):
            rows[j].append(value)
    outputs = list(states)
    for j, values in enumerate(rows):
        each = parse_type(str(terminator.operands[n + j].type))  # one iteration's value (the result's
        if each is None:  # type may be unknown in an imported function body)
            return _give_up(scan_op, before)
        axis = out_axes[j] % (len(each[0]) + 1)
        unit, dtype = [*each[0][:axis], 1, *each[0][axis:]], each[1]
        whole = [*each[0][:axis], length, *each[0][axis:]]
        stacked = [e.op1("Reshape", [v, e.const(np.array(unit), "si64")], unit, dtype) for v in values]
        if out_dirs[j]:
            stacked.reverse()
        if not stacked:
            return _give_up(scan_op, before)
        outputs.append(stacked[0] if len(stacked) == 1 else
                       lifted(e.op1("Concat", stacked, whole, dtype, axis=axis), tir, opset))
    _refine_returned(scan_op.results, outputs)
    _replace(scan_op, outputs)
    return True
