"""Result types the ONNX import got wrong, recomputed from the operands' static types.

Where a reduction takes its axes as a run-time input (ReduceSum since opset 13,
the other ReduceX since 18), ONNX's shape inference cannot know the result's
shape, and the import declares it ``!torch.vtensor<[],T>`` (rank 0) even where the
model's output says otherwise; the elementwise ops after it inherit that type.
torch-mlir then builds ``aten.sum.dim_IntList`` with a rank-0 result, which no
lowering accepts, or, for empty axes, leaves the ReduceSum unconverted. Once
the axes are constant (a literal, an ``onnx.Constant``, or the recorded input
baked in on the plugin's retry), the shape follows from the specification: this
pass sets it, then carries the corrected shapes forward through elementwise ops
whose declared type disagrees with their operands.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.onnx.build import (
    Emitter,
    OnnxOp,
    onnx_name,
    onnx_ops,
    parse_type,
    view,
    vtensor,
)
from pytest_mlir_snippets.worker.lowering.onnx.fold import fold

REDUCTIONS = frozenset({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                        "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
# the opset from which each reduction's axes are an input rather than an attribute
AXES_INPUT_SINCE = {"ReduceSum": 13}
AXES_INPUT_SINCE_OTHERS = 18
# result shape = the first input's shape
SAME_SHAPE = frozenset({
    "Cast", "CastLike", "Identity", "Sqrt", "Log", "Exp", "Abs", "Neg", "Reciprocal", "Floor", "Ceil", "Round",
    "Sign", "Sigmoid", "Tanh", "Relu", "Erf", "Not", "Softplus", "Softsign", "Sin", "Cos", "Tan", "Asin", "Acos",
    "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "IsNaN", "IsInf", "Clip", "LeakyRelu", "Elu", "Selu",
    "HardSigmoid", "HardSwish", "Mish", "Gelu", "ThresholdedRelu", "Celu", "BitwiseNot", "Shrink"})
# result shape = the multidirectional (numpy) broadcast of every input's shape
BROADCAST = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal", "Less", "Greater",
    "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
    "BitShift", "PRelu"})


def reduced_shape(op: OnnxOp) -> list[int] | None:
    """A ReduceX op's result shape, None where its axes are not known here."""
    x = op.input(0)
    if x is None or parse_type(str(x.value.type)) is None:
        return None
    since = AXES_INPUT_SINCE.get(op.name, AXES_INPUT_SINCE_OTHERS)
    if op.opset >= since:
        if not op.known(1):
            return None
        axes = op.ints(1, [])
    else:
        axes = list(op.attrs.get("axes", []))
    assert axes is not None
    keepdims = bool(op.attrs.get("keepdims", 1))
    if not axes:
        if op.opset >= since and op.attrs.get("noop_with_empty_axes", 0):
            return list(x.shape)  # the input unchanged
        axes = list(range(x.rank))  # every axis
    if any(not -x.rank <= a < x.rank for a in axes):
        return None
    axes_set = {a % x.rank for a in axes} if x.rank else set()
    if keepdims:
        return [1 if d in axes_set else n for d, n in enumerate(x.shape)]
    return [n for d, n in enumerate(x.shape) if d not in axes_set]


def broadcast(shapes: list[list[int]]) -> list[int] | None:
    """The numpy broadcast of ``shapes``, None where they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        sizes = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0} - {1}
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return out


def _operand_shapes(op: Any) -> list[list[int]] | None:
    shapes = []
    for value in op.operands:
        if str(value.type) == "!torch.none":
            continue
        parsed = parse_type(str(value.type))
        if parsed is None:
            return None
        shapes.append(parsed[0])
    return shapes


def _elementwise_shape(op: Any, name: str) -> list[int] | None:
    shapes = _operand_shapes(op)
    if not shapes:
        return None
    return shapes[0] if name in SAME_SHAPE else broadcast(shapes)


def _owner(use: Any) -> Any:
    """The operation that uses a value: an ``OpView`` of ``torch.operator`` reads ``name`` as its
    attribute (the ONNX op's name), so its generic ``Operation`` is taken."""
    owner = use.owner
    return getattr(owner, "operation", owner)


def _retype(value: Any, shape: list[int], tir: Any) -> bool:
    """Give ``value`` ``shape`` (its element type kept); False where it already has it or
    a ``func.return`` uses it (the function's declared result type is not changed here)."""
    parsed = parse_type(str(value.type))
    if parsed is None or parsed[0] == shape:
        return False
    if any(_owner(use).name == "func.return" for use in value.uses):
        return False
    value.set_type(tir.Type.parse(vtensor(shape, parsed[1])))
    return True


def fold_axes(op: Any, tir: Any) -> None:
    """A reduction's axes computed from shapes (``Range(0, Size(Shape(x)))`` in ONNX's function
    bodies: RMSNormalization, LayerNormalization) replaced by a literal of their value."""
    if len(op.operands) < 2 or str(op.operands[1].type) == "!torch.none" or view(op, tir).known(1):
        return
    axes = fold(op.operands[1])
    if axes is not None:
        op.operands[1] = Emitter(tir, None, op.location, before=op).const(axes.reshape(-1), "si64")


def fix_result_types(module: Any, tir: Any) -> int:
    """Set the result type of each reduction whose shape is known and declared wrong, and of
    the elementwise ops that follow it; returns how many results were retyped."""
    reductions = onnx_ops(module, tir, REDUCTIONS)
    work: list[Any] = []
    for op in reductions:
        fold_axes(op, tir)
        shape = reduced_shape(view(op, tir))
        if shape is not None and _retype(op.results[0], shape, tir):
            work.append(op.results[0])
    retyped = len(work)
    while work:  # forward: the users of a retyped value whose declared shape now disagrees
        value = work.pop()
        for use in value.uses:
            user = _owner(use)
            if user.name != "torch.operator" or len(user.results) != 1:
                continue
            name = onnx_name(user)
            if name not in SAME_SHAPE and name not in BROADCAST:
                continue
            shape = _elementwise_shape(user, name)
            if shape is not None and _retype(user.results[0], shape, tir):
                work.append(user.results[0])
                retyped += 1
    return retyped
