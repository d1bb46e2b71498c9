"""NonMaxSuppression as static tensor algebra: torch-mlir's conversion aborts at run time
("unimplemented: score_threshold should be <= min(scores)") wherever a score is under
the threshold, so the whole specification is built here from ops it converts.

Per (batch, class), with N boxes: each box's rank in the selection order (score
descending, the lower index first among equal scores, as ``onnx.reference``) from an
N x N comparison; a one-hot permutation P takes scores, indices and the IoU test
matrix into that order; the greedy selection is unrolled over the N positions (a box
is kept when its score passes the threshold and no kept box before it overlaps it more
than the IoU threshold); max_output_boxes_per_class caps each class's running count;
the declared K rows of (batch, class, box) triples are gathered by a 0/1 matrix product.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import ONNX_TYPE, Emitter, OnnxOp

MAX_BOXES = 256  # the selection is unrolled per box: beyond this the module grows too large
F32, SI64, I1 = "f32", "si64", "i1"


def _corners(boxes: Any, b: int, n: int, center: bool, e: Emitter) -> tuple[list[Any], list[Any]]:
    """(x_min, y_min) and (x_max, y_max) as [B,N] tensors, with the reference's arithmetic."""
    def coord(k: int) -> Any:
        picked = e.op1("Gather", [boxes, e.const(np.array(k), SI64)], [b, n], F32, axis=2)
        return picked

    if center:
        los, his = [], []
        for c, size in ((0, 2), (1, 3)):  # [x_center, y_center, width, height]
            half = e.op1("Div", [coord(size), e.const(np.array(2.0), F32)], [b, n], F32)
            los.append(e.op1("Sub", [coord(c), half], [b, n], F32))
            his.append(e.op1("Add", [coord(c), half], [b, n], F32))
        return los, his
    los, his = [], []
    for first, second in ((1, 3), (0, 2)):  # [y1, x1, y2, x2], either corner first
        los.append(e.op1("Min", [coord(first), coord(second)], [b, n], F32))
        his.append(e.op1("Max", [coord(first), coord(second)], [b, n], F32))
    return los, his


def _overlaps(op: OnnxOp, b: int, n: int, e: Emitter) -> Any:
    """[B,1,N,N] f32: 1 where box i suppresses box j (``suppress_by_iou`` of the reference)."""
    los, his = _corners(op.inputs[0], b, n, bool(op.attrs.get("center_point_box", 0)), e)
    pair = [b, n, n]

    def rows(v: Any) -> Any:
        return e.op1("Reshape", [v, e.const([b, n, 1], SI64)], [b, n, 1], F32)

    def cols(v: Any) -> Any:
        return e.op1("Reshape", [v, e.const([b, 1, n], SI64)], [b, 1, n], F32)

    conds, sides, areas = [], [], []
    for lo, hi in zip(los, his, strict=True):
        ilo = e.op1("Max", [rows(lo), cols(lo)], pair, F32)
        ihi = e.op1("Min", [rows(hi), cols(hi)], pair, F32)
        conds.append(e.op1("Greater", [ihi, ilo], pair, I1))
        sides.append(e.op1("Sub", [ihi, ilo], pair, F32))
        areas.append(e.op1("Sub", [hi, lo], [b, n], F32))
    inter = e.op1("Mul", sides, pair, F32)
    area = e.op1("Mul", areas, [b, n], F32)
    a1, a2 = rows(area), cols(area)
    union = e.op1("Sub", [e.op1("Add", [a1, a2], pair, F32), inter], pair, F32)
    zero = e.const(np.array(0.0), F32)
    iou = e.op1("Div", [inter, union], pair, F32)
    thr = op.input(3)
    conds += [e.op1("Greater", [inter, zero], pair, I1), e.op1("Greater", [a1, zero], [b, n, 1], I1),
              e.op1("Greater", [a2, zero], [b, 1, n], I1), e.op1("Greater", [union, zero], pair, I1),
              e.op1("Greater", [iou, zero if thr is None else thr], pair, I1)]
    both = conds[0]
    for c in conds[1:]:
        both = e.op1("And", [both, c], pair, I1)
    over = e.op1("Cast", [both], pair, F32, to=ONNX_TYPE[F32])
    return e.op1("Reshape", [over, e.const([b, 1, n, n], SI64)], [b, 1, n, n], F32)


def non_max_suppression(op: OnnxOp, e: Emitter) -> list[Any] | None:
    boxes, scores = op.inputs[0], op.inputs[1]
    (k, width), out_dtype = op.results[0]
    if boxes is None or scores is None or boxes.rank != 3 or scores.rank != 3 or width != 3 \
            or boxes.dtype != F32 or scores.dtype != F32:
        return None
    b, c, n = scores.shape
    if k == 0 or op.input(2) is None:  # no boxes asked for: no rows
        return [e.const(np.zeros((k, 3)), out_dtype)]
    if n > MAX_BOXES:
        return None
    quad = [b, c, n, n]
    # rank of box i: the boxes before it, by a higher score or an equal one and a lower index
    s_i = e.op1("Reshape", [scores, e.const([b, c, n, 1], SI64)], [b, c, n, 1], F32)
    s_j = e.op1("Reshape", [scores, e.const([b, c, 1, n], SI64)], [b, c, 1, n], F32)
    lower = e.const(np.tril(np.ones((n, n), dtype=bool), -1), I1)  # [i, j]: j < i
    before = e.op1("Or", [e.op1("Greater", [s_j, s_i], quad, I1),
                          e.op1("And", [e.op1("Equal", [s_j, s_i], quad, I1), lower], quad, I1)], quad, I1)
    rank = e.op1("MatMul", [e.op1("Cast", [before], quad, F32, to=ONNX_TYPE[F32]), e.const(np.ones((n, 1)), F32)],
                 [b, c, n, 1], F32)
    rank_row = e.op1("Reshape", [rank, e.const([b, c, 1, n], SI64)], [b, c, 1, n], F32)
    perm = e.op1("Cast", [e.op1("Equal", [rank_row, e.const(np.arange(n).reshape(n, 1), F32)], quad, I1)],
                 quad, F32, to=ONNX_TYPE[F32])  # P[r, i] = 1 where box i is r-th
    perm_t = e.op1("Transpose", [perm], quad, F32, perm=[0, 1, 3, 2])
    over = e.op1("MatMul", [e.op1("MatMul", [perm, _overlaps(op, b, n, e)], quad, F32), perm_t], quad, F32)
    thr = op.input(4)
    valid = e.const(np.ones((b, c, n, 1)), F32) if thr is None else e.op1(
        "Cast", [e.op1("Greater", [s_i, thr], [b, c, n, 1], I1)], [b, c, n, 1], F32, to=ONNX_TYPE[F32])
    valid = e.op1("Reshape", [e.op1("MatMul", [perm, valid], [b, c, n, 1], F32), e.const([b, c, 1, n], SI64)],
                  [b, c, 1, n], F32)
    row = [b, c, 1, n]
    keep = e.const(np.zeros(row), F32)
    for i in range(n):  # greedy, in selection order: kept where valid and no kept box overlaps it
        hits = e.op1("MatMul", [keep, over], row, F32)
        free = e.op1("Cast", [e.op1("Equal", [hits, e.const(np.array(0.0), F32)], row, I1)], row, F32,
                     to=ONNX_TYPE[F32])
        onehot = e.const(np.eye(n)[i], F32)
        keep = e.op1("Add", [keep, e.op1("Mul", [e.op1("Mul", [valid, free], row, F32), onehot], row, F32)], row, F32)
    cap = e.op1("Cast", [op.inputs[2]], [1], F32, to=ONNX_TYPE[F32])
    count = e.op1("CumSum", [keep, e.const(np.array(3), SI64)], row, F32)
    keep = e.op1("Mul", [keep, e.op1("Cast", [e.op1("LessOrEqual", [count, cap], row, I1)], row, F32,
                                     to=ONNX_TYPE[F32])], row, F32)
    # rows of the output: the r-th kept triple, in (batch, class, selection) order
    m = b * c * n
    flat = e.op1("Reshape", [keep, e.const([1, m], SI64)], [1, m], F32)
    nth = e.op1("CumSum", [flat, e.const(np.array(1), SI64)], [1, m], F32)
    pick = e.op1("Mul", [e.op1("Cast", [e.op1("Equal", [nth, e.const(np.arange(1, k + 1).reshape(k, 1), F32)],
                                              [k, m], I1)], [k, m], F32, to=ONNX_TYPE[F32]), flat], [k, m], F32)
    box = e.op1("MatMul", [perm, e.const(np.arange(n).reshape(n, 1), F32)], [b, c, n, 1], F32)
    grid = np.stack(np.meshgrid(np.arange(b), np.arange(c), indexing="ij"), -1)  # (batch, class)
    bc = e.const(np.broadcast_to(grid[:, :, None, :], (b, c, n, 2)), F32)
    triples = e.op1("Reshape", [e.op1("Concat", [bc, box], [b, c, n, 3], F32, axis=3), e.const([m, 3], SI64)],
                    [m, 3], F32)
    out = e.op1("MatMul", [pick, triples], [k, 3], F32)
    return [e.op1("Cast", [out], [k, 3], out_dtype, to=ONNX_TYPE[out_dtype])]
