"""Rewrites in the torch dialect for what torch-mlir only lowers in a narrower form.

``aten.nll_loss_forward`` and ``aten.cross_entropy_loss`` lower (or decompose)
only for inputs of rank 1 or 2, while ONNX's NegativeLogLikelihoodLoss and
SoftmaxCrossEntropyLoss give them ``N x C x d1 x ... x dk``. The same loss over
``(N*d1*...*dk) x C`` rows is the same number (sum and weighted mean run over
every element either way), and with ``reduction = none`` its rows reshape back.
``cross_entropy_loss`` becomes ``log_softmax`` and ``nll_loss_forward``: torch-mlir's
own decomposition sums the weights of a weighted mean as integers (0.9 -> 0)
and divides by zero.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.onnx.build import parse_type, vtensor

LOSSES = ("torch.aten.nll_loss_forward", "torch.aten.cross_entropy_loss")
REDUCTION_NONE = 0


def _static_shape(value: Any) -> tuple[list[int], str] | None:
    return parse_type(str(value.type))


def _constant_int(value: Any) -> int | None:
    owner = value.owner
    if getattr(owner, "name", None) != "torch.constant.int":
        return None
    return int(owner.attributes["value"].value)


class _Builder:
    """Creates torch ops before ``anchor``, at its location."""

    def __init__(self, tir: Any, anchor: Any) -> None:
        self.tir = tir
        self.anchor = anchor

    def op(self, name: str, result_types: list[str], operands: list[Any], **attributes: Any) -> Any:
        tir = self.tir
        with tir.InsertionPoint(self.anchor), self.anchor.location:
            return tir.Operation.create(name, results=[tir.Type.parse(t) for t in result_types],
                                        operands=operands, attributes=attributes)

    def ints(self, values: list[int]) -> Any:
        i64 = self.tir.IntegerType.get_signless(64)
        items = [self.op("torch.constant.int", ["!torch.int"], [], value=self.tir.IntegerAttr.get(i64, v)).result
                 for v in values]
        return self.op("torch.prim.ListConstruct", ["!torch.list<int>"], items).result

    def reshape(self, value: Any, shape: list[int], element: str) -> Any:
        return self.op("torch.aten.reshape", [vtensor(shape, element)], [value, self.ints(shape)]).result


def flatten_losses(module: Any, tir: Any) -> int:
    """Rewrite every loss of rank > 2 over rows; returns how many were rewritten."""
    found: list[Any] = []

    def visit(op: Any) -> Any:
        if op.name in LOSSES:
            found.append(op)
        return tir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return sum(_flatten(op, tir) for op in found)


def _constant_float(value: Any) -> float | None:
    owner = value.owner
    if getattr(owner, "name", None) != "torch.constant.float":
        return None
    return float(owner.attributes["value"].value)


def _flatten(op: Any, tir: Any) -> bool:
    operands = list(op.operands)
    source, target = _static_shape(operands[0]), _static_shape(operands[1])
    reduction = _constant_int(operands[3])
    if source is None or target is None or reduction is None:
        return False
    (shape, element), (target_shape, target_element) = source, target
    cross_entropy = op.name == "torch.aten.cross_entropy_loss"
    if len(shape) < (2 if cross_entropy else 3) or target_shape != [shape[0], *shape[2:]]:
        return False
    if cross_entropy and _constant_float(operands[5]) != 0.0:
        return False  # label smoothing: left to torch-mlir's decomposition
    extra = op.results[1] if len(op.results) > 1 else None  # nll's total_weight
    if extra is not None and list(extra.uses) and str(extra.type) != vtensor([], element):
        return False
    b = _Builder(tir, op)
    scores, labels = operands[0], operands[1]
    if cross_entropy:  # log_softmax over classes, then nll: its weighted mean lowers right
        none = b.op("torch.constant.none", ["!torch.none"], []).result
        dim = b.op("torch.constant.int", ["!torch.int"], [],
                   value=tir.IntegerAttr.get(tir.IntegerType.get_signless(64), 1)).result
        scores = b.op("torch.aten.log_softmax.int", [str(scores.type)], [scores, dim, none]).result
    rows = shape[0]
    for d in shape[2:]:
        rows *= d
    if len(shape) > 2:
        order = [0, *range(2, len(shape)), 1]
        moved = b.op("torch.aten.permute", [vtensor([shape[i] for i in order], element)],
                     [scores, b.ints(order)]).result
        scores = b.reshape(moved, [rows, shape[1]], element)
        labels = b.reshape(labels, [rows], target_element)
    loss_shape = [rows] if reduction == REDUCTION_NONE else []
    loss = b.op("torch.aten.nll_loss_forward", [vtensor(loss_shape, element), vtensor([], element)],
                [scores, labels, operands[2], operands[3], operands[4]])
    value = loss.results[0]
    if reduction == REDUCTION_NONE and len(shape) > 2:
        value = b.reshape(value, [shape[0], *shape[2:]], element)
    op.results[0].replace_all_uses_with(value)
    if extra is not None:
        extra.replace_all_uses_with(loss.results[1])
    op.erase()
    return True
