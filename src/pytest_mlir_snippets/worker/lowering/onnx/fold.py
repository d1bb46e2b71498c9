"""A small constant folder over imported ONNX ops, for the control-flow expansions.

Loop's trip count and conditions and If's condition must be known at compile time to
unroll or inline them; in the ONNX tests they are literals, ``onnx.Constant``s, recorded
inputs baked in on the plugin's retry, or computed from those and from static shapes
(``Equal(Size(x), 4)``). ``fold`` evaluates such a value with numpy, following the ONNX
specification of each op it knows, and gives None for anything else (a run-time input,
an op it does not know, a shape with a dynamic dimension, a result too large to be a
shape or a condition).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import (
    NUMPY,
    ONNX_TYPE,
    constant_value,
    defining_op,
    dense_value,
    onnx_attributes,
    onnx_name,
    parse_type,
)

MAX_ELEMENTS = 1024  # larger values are data, not shapes or conditions: left alone
NUMPY_OF_ONNX = {code: NUMPY[name] for name, code in ONNX_TYPE.items() if name in NUMPY}
_UNARY = {"Not": np.logical_not, "Neg": np.negative, "Abs": np.abs, "Ceil": np.ceil, "Floor": np.floor}
_BINARY = {"Equal": np.equal, "Greater": np.greater, "Less": np.less, "GreaterOrEqual": np.greater_equal,
           "LessOrEqual": np.less_equal, "And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor,
           "Add": np.add, "Sub": np.subtract, "Mul": np.multiply}
_VARIADIC = {"Max": np.maximum, "Min": np.minimum}


def _ir() -> Any:
    import torch_mlir.ir as tir  # the bindings the module was parsed with (no torch import)

    return tir


def static_shape(value: Any) -> list[int] | None:
    parsed = parse_type(str(value.type))
    return None if parsed is None else parsed[0]


def element_type(value: Any) -> Any:
    parsed = parse_type(str(value.type))
    return None if parsed is None else NUMPY.get(parsed[1])


def fold(value: Any, depth: int = 0) -> np.ndarray | None:
    """``value`` as a numpy array where it is known at compile time, else None."""
    if str(value.type) == "!torch.none" or depth > 64:
        return None
    op = defining_op(value)
    if op is None:
        return None
    if op.name == "torch.vtensor.literal":
        return _small(dense_value(op.attributes["value"], _ir()))
    name = onnx_name(op)
    if name is None:
        return None
    try:
        result = _evaluate(name, op, depth)
    except (ValueError, TypeError, IndexError, KeyError, OverflowError, ZeroDivisionError):
        return None  # KeyError: a type numpy does not hold (a Cast to bf16, float8, string)
    if result is None:
        return None
    dtype = element_type(value)  # the result in the element type the import declared
    return _small(np.asarray(result).astype(dtype) if dtype is not None else np.asarray(result))


def _small(array: np.ndarray | None) -> np.ndarray | None:
    return array if array is not None and array.size <= MAX_ELEMENTS else None


def _evaluate(name: str, op: Any, depth: int) -> Any:
    attrs = onnx_attributes(op, _ir())
    if name == "Constant":
        return constant_value(attrs)
    if name in ("Shape", "Size"):  # from the operand's static type: its value is not needed
        shape = static_shape(op.operands[0])
        if shape is None:
            return None
        if name == "Size":
            return np.int64(np.prod(shape, dtype=np.int64))
        rank = len(shape)
        start, end = int(attrs.get("start", 0)), int(attrs.get("end", rank))
        start, end = (max(0, min(rank, s + rank if s < 0 else s)) for s in (start, end))
        return np.array(shape[start:end], np.int64)
    present = [str(v.type) != "!torch.none" for v in op.operands]
    args: list[Any] = [fold(v, depth + 1) if p else None for v, p in zip(op.operands, present, strict=True)]
    if not args or any(p and a is None for a, p in zip(args, present, strict=True)):
        return None  # an operand not known here
    if name in ("Identity", "Cast", "CastLike"):
        if name == "Cast":
            return np.asarray(args[0]).astype(NUMPY_OF_ONNX[int(attrs["to"])])
        return args[0]  # CastLike: the declared result type casts it below
    if name in _UNARY:
        return _UNARY[name](args[0])
    if name in _BINARY:
        return _BINARY[name](args[0], args[1])
    if name in _VARIADIC:
        out = args[0]
        for a in args[1:]:
            out = _VARIADIC[name](out, a)
        return out
    if name == "Div":  # integers truncate, as the reference's division cast back
        return np.asarray(np.divide(args[0], args[1])).astype(np.result_type(args[0], args[1]))
    return _shape_op(name, args, attrs)


def _shape_op(name: str, args: list[Any], attrs: dict[str, Any]) -> Any:
    """Shape ops, some of whose inputs are optional (opset-dependent: axes as an input or
    an attribute)."""
    x = np.asarray(args[0])
    if name == "Concat":
        return np.concatenate([np.asarray(a) for a in args], axis=int(attrs["axis"]))
    if name == "Gather":
        return np.take(x, np.asarray(args[1]), axis=int(attrs.get("axis", 0)))
    if name in ("Unsqueeze", "Squeeze"):
        axes = attrs.get("axes") if len(args) < 2 or args[1] is None else list(np.asarray(args[1]).reshape(-1))
        if name == "Squeeze":
            return np.squeeze(x, axis=None if axes is None else tuple(int(a) for a in axes))
        rank = x.ndim + len(axes or [])
        for a in sorted(int(a) % rank for a in axes or []):
            x = np.expand_dims(x, a)
        return x
    if name == "Range":
        return np.arange(x.item(), np.asarray(args[1]).item(), np.asarray(args[2]).item())
    if name == "Reshape":
        shape = [int(d) for d in np.asarray(args[1]).reshape(-1)]
        if not int(attrs.get("allowzero", 0)):
            shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
        return x.reshape(shape)
    return None
