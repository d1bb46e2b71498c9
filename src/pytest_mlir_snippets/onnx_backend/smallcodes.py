"""ONNX's small element types (f8, e8m0, f4, 4-bit and 2-bit integers) as the bytes that
carry them, and the constants their conversions count with.

torch-mlir's importer knows none of 2-bit, f4 and e8m0, and converts no Cast to or from f8
or 4-bit types; the cpu target feeds and reads none of them. ``smalltypes.carry`` rewrites a
model so that each such tensor travels as its byte: a float type's code (ui8, as
``ml_dtypes`` stores it), a 4-bit or 2-bit integer's value (si8 or ui8). This module has
the types and, per float type, the values of its codes and the thresholds a float is
rounded to a code by: a magnitude's code is how many thresholds it reaches, which is
rounding to nearest, ties to even, when the thresholds are the midpoints between
neighbouring values and a midpoint whose upper code is even is reached at equality.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import ml_dtypes
import numpy as np

# onnx.TensorProto's numbers of the types
FLOAT, FLOAT16, DOUBLE, BFLOAT16, INT8, UINT8, INT64 = 1, 10, 11, 16, 3, 2, 7
E8M0 = 24
FLOAT_TYPES = {17: "float8_e4m3fn", 18: "float8_e4m3fnuz", 19: "float8_e5m2", 20: "float8_e5m2fnuz",
               23: "float4_e2m1fn", E8M0: "float8_e8m0fnu"}
INT_TYPES = {22: ("int4", INT8), 21: ("uint4", UINT8), 26: ("int2", INT8), 25: ("uint2", UINT8)}
WIDE_FLOATS = {FLOAT16, FLOAT, DOUBLE, BFLOAT16}


@dataclass(frozen=True)
class Small:
    """A small type: its ONNX number, its ml_dtypes type and the ONNX type that carries it."""

    onnx_type: int
    dtype: np.dtype
    carrier: int

    @property
    def is_float(self) -> bool:
        return self.onnx_type in FLOAT_TYPES

    @property
    def carrier_dtype(self) -> np.dtype:
        return np.dtype(np.int8 if self.carrier == INT8 else np.uint8)


def small(onnx_type: int) -> Small | None:
    """The small type numbered ``onnx_type``, or None for every other type."""
    if onnx_type in FLOAT_TYPES:
        return Small(onnx_type, np.dtype(getattr(ml_dtypes, FLOAT_TYPES[onnx_type])), UINT8)
    if onnx_type in INT_TYPES:
        name, carrier = INT_TYPES[onnx_type]
        return Small(onnx_type, np.dtype(getattr(ml_dtypes, name)), carrier)
    return None


def to_carrier(array: np.ndarray, kind: Small) -> np.ndarray:
    """A small-typed array as its carrier: a float's code bytes, an integer's value."""
    if kind.is_float:
        return np.ascontiguousarray(array.astype(kind.dtype)).view(np.uint8)
    return array.astype(kind.carrier_dtype)


def from_carrier(array: np.ndarray, kind: Small) -> np.ndarray:
    """The carrier's array read back in the small type."""
    if kind.is_float:
        return np.ascontiguousarray(array.astype(np.uint8)).view(kind.dtype)
    return np.asarray(array).astype(kind.dtype)


@dataclass(frozen=True)
class Codes:
    """A float type's codes: ``values`` (f64) of all codes; of the non-negative ones, the
    largest finite code, the sign bit, the codes of NaN and of +-infinity (what an overflow
    without saturation gives: infinity, NaN or the largest value, as ml_dtypes converts),
    whether -0 has a code of its own, and the rounding thresholds: a magnitude's code is
    ``sum(a >= reach) + sum(a > exceed)``, ``top + 1`` meaning beyond the largest value."""

    values: np.ndarray
    top: int
    sign: int
    nan: int
    inf: tuple[int, int]
    signed_zero: bool
    reach: np.ndarray
    exceed: np.ndarray


def _code(value: float, dtype: np.dtype) -> int:
    with np.errstate(invalid="ignore", over="ignore"):
        return int(np.array([value], np.float32).astype(dtype).view(np.uint8)[0])


@cache
def codes(onnx_type: int) -> Codes:
    """The codes of float type ``onnx_type`` other than e8m0, from ml_dtypes' own values."""
    kind = small(onnx_type)
    assert kind is not None and kind.is_float and onnx_type != E8M0
    count = 16 if kind.dtype.name.startswith("float4") else 256
    values = np.arange(count, dtype=np.uint8).view(kind.dtype).astype(np.float64)
    sign = count // 2
    finite = np.isfinite(values[:sign])
    top = int(np.flatnonzero(finite)[-1])
    ladder = np.append(values[:top + 1], 2 * values[top] - values[top - 1])  # and the value above the top
    middle = (ladder[:-1] + ladder[1:]) / 2
    upper_even = (np.arange(1, top + 2) % 2) == 0
    return Codes(values, top, sign, _code(np.nan, kind.dtype), (_code(np.inf, kind.dtype), _code(-np.inf, kind.dtype)),
                 _code(-0.0, kind.dtype) != 0, middle[upper_even], middle[~upper_even])


def e8m0_thresholds(mode: str) -> tuple[np.ndarray, np.ndarray]:
    """(reach, exceed) for e8m0, whose code is an f32's exponent field with ONNX's rounding
    (``onnx.numpy_helper.to_float8e8m0``): ``up`` rounds a magnitude with a fraction up, a
    subnormal to code 1; ``down`` drops the fraction; ``nearest`` rounds a mantissa of 1.5 or
    more up, a subnormal above 2^-127 to code 1. Before saturation: code 255 beyond 2^127."""
    powers = np.ldexp(1.0, np.arange(-126, 128))
    if mode == "down":
        return powers, np.zeros(0)
    if mode == "nearest":
        return 1.5 * np.ldexp(1.0, np.arange(-126, 128)), np.array([2.0**-127])
    if mode == "up":
        return np.zeros(0), np.append(0.0, powers)
    raise ValueError(f"Cast's round_mode {mode!r} is none of up, down, nearest")
