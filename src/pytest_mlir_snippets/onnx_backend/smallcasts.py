"""Cast, CastLike, QuantizeLinear and DequantizeLinear on small types (``smallcodes``) as
ONNX ops torch-mlir converts, on the carried bytes, computed at run time.

To a float type: the magnitude's code is the count of rounding thresholds it reaches (a
comparison with a constant vector and a sum), then the sign bit, saturation (ONNX's clip
to the largest value) or the overflow code, and NaN's code. From one: a ``Gather`` of the
type's values by code. To a 4-bit or 2-bit integer: truncated toward zero; out of range, as
the installed ml_dtypes converts (ONNX's reference converts with it): 0 (0.7), or the low bits
of C's conversion to int32 (0.6: wrapped; 0 beyond int32). The quantizations follow
``onnx.reference``: a float 8 type's zero point is ignored, float 4's is added, an integer
one's result is the 8-bit QuantizeLinear clipped to the small range.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.onnx_backend.smallcodes import (
    DOUBLE,
    E8M0,
    FLOAT,
    INT64,
    WIDE_FLOATS,
    Small,
    codes,
    e8m0_thresholds,
    small,
)

BOOL = 9
NP_TYPES = {FLOAT: np.float32, DOUBLE: np.float64}
Typed = tuple[int, list[int]]  # an ONNX value's element type and static shape


class Nodes:
    """ONNX nodes under construction, named after the node they replace."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.nodes: list[Any] = []

    def op(self, op_type: str, inputs: list[str], output: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        name = output or f"{self.prefix}__small{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, inputs, [name], **attrs))
        return name

    def const(self, value: Any, dtype: Any) -> str:
        from onnx import numpy_helper

        return self.op("Constant", [], value=numpy_helper.from_array(np.asarray(value, dtype)))

    def cast(self, value: str, source: int, to: int) -> str:
        return value if source == to else self.op("Cast", [value], to=to)


def _count(n: Nodes, a: str, reach: np.ndarray, exceed: np.ndarray, work: int) -> str:
    """How many of ``reach`` ``a`` is at or above, plus how many of ``exceed`` it is above."""
    column = n.op("Unsqueeze", [a, n.const([-1], np.int64)])
    total = None
    for thresholds, compare in ((reach, "GreaterOrEqual"), (exceed, "Greater")):
        if thresholds.size:
            hits = n.op("Cast", [n.op(compare, [column, n.const(thresholds, NP_TYPES[work])])], to=work)
            part = n.op("ReduceSum", [hits, n.const([-1], np.int64)], keepdims=0)
            total = part if total is None else n.op("Add", [total, part])
    assert total is not None
    return total


def _where(n: Nodes, condition: str, code: Any, other: str, work: int) -> str:
    return n.op("Where", [condition, n.const(code, NP_TYPES[work]), other])


def encode(n: Nodes, x: str, source: int, to: Small, saturate: bool = True, mode: str = "up",
           output: str | None = None) -> str | None:
    """``x`` (a wide float) converted to small type ``to``'s carrier, as ONNX's Cast does."""
    if source not in WIDE_FLOATS:
        return None
    work = DOUBLE if source == DOUBLE else FLOAT  # f16 and bf16 are exact in f32: one rounding
    f = n.cast(x, source, work)
    if not to.is_float:
        low, high = _int_range(to)
        below = n.op("Less", [f, n.const(0, NP_TYPES[work])])
        truncated = n.op("Where", [below, n.op("Ceil", [f]), n.op("Floor", [f])])
        value = truncated
        if _wraps(to):  # the low bits: t - span * floor(t / span) is exact for a power-of-two span
            span = n.const(high - low + 1, NP_TYPES[work])
            value = n.op("Sub", [truncated, n.op("Mul", [n.op("Floor", [n.op("Div", [truncated, span])]), span])])
            if low < 0:
                value = n.op("Where", [n.op("Greater", [value, n.const(high, NP_TYPES[work])]),
                                       n.op("Sub", [value, span]), value])
            low, high = -(2**31), 2**31 - 1  # beyond int32 (NaN, infinity): 0
        inside = n.op("And", [n.op("GreaterOrEqual", [truncated, n.const(low, NP_TYPES[work])]),
                              n.op("LessOrEqual", [truncated, n.const(high, NP_TYPES[work])])])
        return n.op("Cast", [_where_zero(n, inside, value, work)], output, to=to.carrier)
    magnitude = n.op("Abs", [f])
    nan = n.op("IsNaN", [f])
    if to.onnx_type == E8M0:  # the exponent field of |x|: no sign; NaN and infinity give 255
        code = _count(n, magnitude, *e8m0_thresholds(mode), work)
        if saturate:
            code = n.op("Min", [code, n.const(254, NP_TYPES[work])])
        special = n.op("Or", [nan, n.op("IsInf", [f])])
        return n.op("Cast", [_where(n, special, 255, code, work)], output, to=to.carrier)
    c = codes(to.onnx_type)
    code = _count(n, magnitude, c.reach, c.exceed, work)
    if saturate or np.isfinite(c.values[c.inf[0]]):  # ONNX clips to the largest value (f4 always saturates)
        code = n.op("Min", [code, n.const(c.top, NP_TYPES[work])])
    # negative: below zero, or -0 (1 / -0 is -inf; a Div: torch-mlir's Reciprocal crashes the compile)
    zero = n.const(0, NP_TYPES[work])
    negative = n.op("Or", [n.op("Less", [f, zero]), n.op("Less", [n.op("Div", [n.const(1, NP_TYPES[work]), f]), zero])])
    if not c.signed_zero:
        negative = n.op("And", [negative, n.op("Greater", [code, n.const(0, NP_TYPES[work])])])
    signed = n.op("Add", [code, n.op("Mul", [n.cast(negative, BOOL, work), n.const(c.sign, NP_TYPES[work])])])
    if not saturate:
        beyond = n.op("Greater", [code, n.const(c.top, NP_TYPES[work])])
        overflow = n.op("Where", [negative, n.const(c.inf[1], NP_TYPES[work]), n.const(c.inf[0], NP_TYPES[work])])
        signed = n.op("Where", [beyond, overflow, signed])
    return n.op("Cast", [_where(n, nan, c.nan, signed, work)], output, to=to.carrier)


def _int_range(kind: Small) -> tuple[int, int]:
    bits = 4 if "4" in kind.dtype.name else 2
    return (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if kind.dtype.name.startswith("int") else (0, 2**bits - 1)


def _wraps(kind: Small) -> bool:
    """Whether the installed ml_dtypes wraps a value out of ``kind``'s range (before 0.7)."""
    return int(np.array([_int_range(kind)[1] + 2], np.float32).astype(kind.dtype).astype(np.int32)[0]) != 0


def _where_zero(n: Nodes, condition: str, value: str, work: int) -> str:
    return n.op("Where", [condition, value, n.const(0, NP_TYPES[work])])


def decode(n: Nodes, code: str, source: Small, to: int, output: str | None = None) -> str | None:
    """Small type ``source``'s carrier ``code`` converted to wide type ``to``: a float type's
    values looked up by code (exact in f32), an integer by Cast."""
    if not source.is_float:
        return n.op("Cast", [code], output, to=to)
    if to not in WIDE_FLOATS:
        return None
    size = 16 if source.dtype.name.startswith("float4") else 256
    with np.errstate(invalid="ignore"):
        table = np.arange(size, dtype=np.uint8).view(source.dtype).astype(np.float32)
    index = n.op("Cast", [code], to=INT64)
    value = n.op("Gather", [n.const(table, np.float32), index])
    return n.op("Cast", [value], output, to=to) if output or to != FLOAT else value


def along(n: Nodes, value: str, typed: Typed, rank: int, axis: int) -> str | None:
    """A scale or zero point broadcastable to a rank-``rank`` input: a scalar as it is, a
    vector along ``axis``; None for a blocked one."""
    shape = typed[1]
    if len(shape) == 0:
        return value
    if int(np.prod(shape)) == 1:
        return n.op("Reshape", [value, n.const(np.zeros(0), np.int64)])
    if len(shape) != 1:
        return None
    dims = [1] * rank
    dims[axis + rank if axis < 0 else axis] = shape[0]
    return n.op("Reshape", [value, n.const(dims, np.int64)])


def quantize(n: Nodes, node: Any, types: dict[str, Typed], to: Small, attrs: dict[str, Any]) -> bool:
    """QuantizeLinear to small type ``to``; False where the form is not foreseen."""
    x, scale = node.input[0], node.input[1]
    zero = node.input[2] if len(node.input) > 2 and node.input[2] else None
    if attrs.get("block_size") or attrs.get("precision") or x not in types or scale not in types:
        return False
    if not to.is_float:  # the 8-bit carrier's QuantizeLinear, then the small type's range
        kept = {k: v for k, v in attrs.items() if k != "output_dtype"}
        if "output_dtype" in attrs and zero is None:
            kept["output_dtype"] = to.carrier
        wide = n.op("QuantizeLinear", list(node.input), **kept)
        low, high = _int_range(to)
        n.op("Clip", [wide, n.const(low, to.carrier_dtype), n.const(high, to.carrier_dtype)], node.output[0])
        return True
    (x_type, x_shape), (s_type, _) = types[x], types[scale]
    if x_type not in WIDE_FLOATS or s_type not in WIDE_FLOATS:
        return False
    work = DOUBLE if DOUBLE in (x_type, s_type) else FLOAT
    axis = int(attrs.get("axis", 1))
    s = along(n, n.cast(scale, s_type, work), types[scale], len(x_shape), axis)
    if s is None:
        return False
    q = n.op("Div", [n.cast(x, x_type, work), s])
    if zero is not None and to.onnx_type not in (17, 18, 19, 20):  # float 4 adds its zero point
        z = decode(n, zero, to, work)
        z = along(n, z, types[zero], len(x_shape), axis) if z is not None else None
        if z is None:
            return False
        q = n.op("Add", [q, z])
    return encode(n, q, work, to, bool(attrs.get("saturate", 1)), output=node.output[0]) is not None


def dequantize(n: Nodes, node: Any, types: dict[str, Typed], source: Small, to: int,
               attrs: dict[str, Any]) -> bool:
    """DequantizeLinear of small type ``source`` (a float type: its zero point ignored, as
    the reference does); an integer type is the 8-bit carrier's own DequantizeLinear."""
    if not source.is_float:
        n.op("DequantizeLinear", list(node.input), node.output[0], **attrs)
        return True
    x, scale = node.input[0], node.input[1]
    if attrs.get("block_size") or x not in types or scale not in types or types[scale][0] not in WIDE_FLOATS:
        return False
    work = DOUBLE if types[scale][0] == DOUBLE else FLOAT
    dx = decode(n, x, source, work)
    s = along(n, n.cast(scale, types[scale][0], work), types[scale], len(types[x][1]), int(attrs.get("axis", 1)))
    if dx is None or s is None:
        return False
    n.op("Cast", [n.op("Mul", [dx, s])], node.output[0], to=to)
    return True


def cast(n: Nodes, node: Any, source: int, to: int, attrs: dict[str, Any]) -> bool:
    """Cast (or CastLike) from ``source`` to ``to``, one of them small; False where not foreseen."""
    into, out_of = small(to), small(source)
    saturate, mode = bool(attrs.get("saturate", 1)), attrs.get("round_mode", b"up")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    x, output = node.input[0], node.output[0]
    if out_of is not None and into is not None:  # through f32, which holds every small value
        wide = decode(n, x, out_of, FLOAT)
        return wide is not None and encode(n, wide, FLOAT, into, saturate, mode, output) is not None
    if out_of is not None:
        return decode(n, x, out_of, to, output) is not None
    assert into is not None
    return encode(n, x, source, into, saturate, mode, output) is not None
