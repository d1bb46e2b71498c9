"""QuantizeLinear, DequantizeLinear and QLinearMatMul for integer quantized types, in the
arithmetic of ONNX's reference implementation: the same float types for each step (numpy's
promotions), rounding half to even (``Round``), saturation to the type's range (``Clip``).

torch-mlir leaves blocked quantization (``block_size``), crashes on ui16 (its QuantizeLinear
asks ``getScalarTypeForType`` for a quantized ui16 type, an LLVM fatal error) and rounds
QLinearMatMul's requantization differently; no ONNX Cast there takes or makes ui16 either, so
ui16 passes through si16 with its bits unchanged (``Emitter.reinterpret``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import ONNX_TYPE, Emitter, OnnxOp, Tensor

# the integer quantized types and their ranges (saturation bounds)
RANGES = {"ui8": (0, 255), "si8": (-128, 127), "ui16": (0, 65535), "si16": (-32768, 32767)}
FLOATS = ("f16", "bf16", "f32", "f64")
TORCH_TYPE = {v: k for k, v in ONNX_TYPE.items()}


def to_float(e: Emitter, value: Any, shape: list[int], dtype: str, to: str) -> Any:
    """An integer or float tensor cast to float type ``to`` (ui16 read as si16, 65536 added to negatives)."""
    if dtype == to:
        return value
    if dtype != "ui16":
        return e.op1("Cast", [value], shape, to, to=ONNX_TYPE[to])
    signed = e.op1("Cast", [e.reinterpret(value, shape, "ui16", "si16")], shape, to, to=ONNX_TYPE[to])
    negative = e.op1("Less", [signed, e.const(0, to)], shape, "i1")
    wrapped = e.op1("Add", [signed, e.const(65536, to)], shape, to)
    return e.op1("Where", [negative, wrapped, signed], shape, to)


def to_int(e: Emitter, value: Any, shape: list[int], dtype: str) -> Any:
    """An integer-valued float tensor within ``dtype``'s range cast to ``dtype``: si16 by
    CastLike (torch-mlir's Cast has no int16), ui16 as the si32 value truncated to si16, the
    same 16 bits, read as ui16."""
    if dtype not in ("si16", "ui16"):
        return e.op1("Cast", [value], shape, dtype, to=ONNX_TYPE[dtype])
    if dtype == "si16":
        return e.op1("CastLike", [value, e.const(0, "si16")], shape, "si16")
    wide = e.op1("Cast", [value], shape, "si32", to=ONNX_TYPE["si32"])
    low = e.op1("CastLike", [wide, e.const(0, "si16")], shape, "si16")
    return e.reinterpret(low, shape, "si16", "ui16")


def saturate(e: Emitter, value: Any, shape: list[int], work: str, dtype: str) -> Any:
    """Clip an integer-valued ``work`` float tensor to ``dtype``'s range and cast it to ``dtype``."""
    low, high = RANGES[dtype]
    clipped = e.op1("Clip", [value, e.const(low, work), e.const(high, work)], shape, work)
    return to_int(e, clipped, shape, dtype)


def along(e: Emitter, t: Tensor, shape: list[int], axis: int, block: int) -> tuple[Any, list[int]]:
    """A scale or zero point made broadcastable to ``shape`` as ONNX's reference does it: a
    scalar or one element as a scalar, a vector along ``axis`` (per-axis), or blocks of
    ``block`` along ``axis`` repeated to the full size (blocked; the last may be partial)."""
    if t.rank == 0:
        return t.value, []
    if int(np.prod(t.shape)) == 1:
        return e.op1("Reshape", [t, e.const(np.zeros(0), "si64")], [], t.dtype), []
    if not block:
        dims = [1] * len(shape)
        dims[axis] = t.shape[0]
        return e.op1("Reshape", [t, e.const(dims, "si64")], dims, t.dtype), dims
    index = np.arange(shape[axis]) // block
    full = [*t.shape[:axis], shape[axis], *t.shape[axis + 1:]]
    return e.op1("Gather", [t, e.const(index, "si64")], full, t.dtype, axis=axis), full


def _promote(a: str, b: str) -> str:
    """numpy's type for an operation of two float types (f16 with bf16 goes to f32)."""
    if a == b:
        return a
    return "f64" if "f64" in (a, b) else "f32"


def _quantize_args(op: OnnxOp) -> tuple[Tensor, Tensor, Tensor | None, str, int, int] | None:
    x, scale, zero = op.input(0), op.input(1), op.input(2)
    out = op.results[0][1]
    if x is None or scale is None or out not in RANGES or x.dtype not in FLOATS or scale.dtype not in FLOATS:
        return None  # float 8 and 4-bit types stay with torch-mlir
    if zero is not None and zero.dtype != out:
        return None
    axis = int(op.attrs.get("axis", 1))
    axis = axis + x.rank if axis < 0 else axis
    block = int(op.attrs.get("block_size", 0))
    if scale.rank > 0 and int(np.prod(scale.shape)) > 1 and not 0 <= axis < x.rank:
        return None
    return x, scale, zero, out, axis, block


def quantize_linear(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """y = saturate(round_half_even(x / y_scale) + y_zero_point); ``saturate`` (float 8 only)
    does not apply to the integer types; ``output_dtype`` is the result's type as imported."""
    args = _quantize_args(op)
    if args is None:
        return None
    x, scale, zero, out, axis, block = args
    shape = x.shape
    s, s_shape = along(e, scale, shape, axis, block)
    # x / y_scale in numpy's type of the two, or in ``precision`` (opset 23) where given
    work = TORCH_TYPE.get(int(op.attrs.get("precision", 0)), _promote(x.dtype, scale.dtype))
    if work not in FLOATS:
        return None
    q = e.op1("Div", [to_float(e, x.value, shape, x.dtype, work), to_float(e, s, s_shape, scale.dtype, work)],
              shape, work)
    rounded = e.op1("Round", [q], shape, work)
    # the reference adds the zero point in int32: f32 holds every sum that can land in range
    # exactly (larger ones stay beyond it), f16 and bf16 do not
    wide = "f64" if work == "f64" else "f32"
    total = to_float(e, rounded, shape, work, wide)
    if zero is not None:
        z, z_shape = along(e, zero, shape, axis, block)
        total = e.op1("Add", [total, to_float(e, z, z_shape, zero.dtype, wide)], shape, wide)
    return [saturate(e, total, shape, wide, out)]


def dequantize_linear(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """y = (x - x_zero_point) * x_scale: x as f32, the difference in numpy's type (f64 for an
    si32 zero point), the product in f32 or f64, cast to ``output_dtype`` or the scale's type."""
    x, scale, zero = op.input(0), op.input(1), op.input(2)
    out = op.results[0][1]
    ints = (*RANGES, "si32")
    if x is None or scale is None or x.dtype not in ints or scale.dtype not in FLOATS or out not in FLOATS:
        return None
    if (zero is not None and zero.dtype != x.dtype):
        return None
    axis = int(op.attrs.get("axis", 1))
    axis = axis + x.rank if axis < 0 else axis
    block = int(op.attrs.get("block_size", 0))
    shape = x.shape
    work = "f64" if zero is not None and x.dtype == "si32" else "f32"
    dx = to_float(e, to_float(e, x.value, shape, x.dtype, "f32"), shape, "f32", work)
    if zero is not None:
        z, z_shape = along(e, zero, shape, axis, block)
        dx = e.op1("Sub", [dx, to_float(e, z, z_shape, zero.dtype, work)], shape, work)
    s, s_shape = along(e, scale, shape, axis, block)
    product = _promote(work, scale.dtype)
    y = e.op1("Mul", [to_float(e, dx, shape, work, product), to_float(e, s, s_shape, scale.dtype, product)],
              shape, product)
    return [to_float(e, y, shape, product, out)]


def qlinear_matmul(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """Y = saturate(round_half_even((A - a_zero) @ (B - b_zero) * (a_scale * b_scale / y_scale)
    + y_zero)): the scale product in the scales' type, the rest in f64 (numpy's type of an int32
    array times a float one); the integer matrix product in f64 is exact (sums below 2**53)."""
    if len(op.inputs) < 7:
        return None
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale = op.inputs[:7]
    y_zero = op.input(7)
    shape, out = op.results[0]
    if a is None or b is None or a_scale is None or b_scale is None or y_scale is None or out not in RANGES:
        return None
    if a.dtype not in RANGES or b.dtype not in RANGES or not shape:
        return None
    scales = (a_scale, b_scale, y_scale)
    if any(s.dtype not in FLOATS for s in scales) or len({s.dtype for s in scales}) != 1:
        return None

    def centred(t: Tensor, zero: Tensor | None) -> Any:
        value = to_float(e, t.value, t.shape, t.dtype, "f64")
        if zero is None:
            return value
        return e.op1("Sub", [value, to_float(e, zero.value, zero.shape, zero.dtype, "f64")], t.shape, "f64")

    product = e.op1("MatMul", [centred(a, a_zero), centred(b, b_zero)], shape, "f64")
    kind = a_scale.dtype
    ab_shape = list(np.broadcast_shapes(tuple(a_scale.shape), tuple(b_scale.shape)))
    ab = e.op1("Mul", [a_scale, b_scale], ab_shape, kind)
    s_shape = list(np.broadcast_shapes(tuple(ab_shape), tuple(y_scale.shape)))
    multiplier = e.op1("Div", [ab, y_scale], s_shape, kind)
    d = e.op1("Mul", [product, to_float(e, multiplier, s_shape, kind, "f64")], shape, "f64")
    if y_zero is not None:
        d = e.op1("Add", [d, to_float(e, y_zero.value, y_zero.shape, y_zero.dtype, "f64")], shape, "f64")
    return [saturate(e, e.op1("Round", [d], shape, "f64"), shape, "f64", out)]
