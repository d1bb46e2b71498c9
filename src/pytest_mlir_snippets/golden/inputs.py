"""Argument and result descriptions, and seeded inputs generated from them.

numpy only: the worker turns MLIR types into ``TypeSpec`` and everything else
works on these.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


class _Dtypes(dict[str, np.dtype]):
    """``DTYPES``, whose bf16 comes from ml_dtypes imported at its first use: importing
    ml_dtypes registers its numpy loops, ~0.4 s of CPU that every worker paid at start."""

    def __missing__(self, key: str) -> np.dtype:
        if key != "bf16":
            raise KeyError(key)
        import ml_dtypes

        value: np.dtype = np.dtype(ml_dtypes.bfloat16)
        self[key] = value
        return value

    def __contains__(self, key: object) -> bool:
        return key == "bf16" or super().__contains__(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default


# MLIR element type -> numpy dtype, for every type the cpu target can feed.
DTYPES: dict[str, np.dtype] = _Dtypes({
    "f64": np.dtype(np.float64),
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "i64": np.dtype(np.int64),
    "i32": np.dtype(np.int32),
    "i16": np.dtype(np.int16),
    "i8": np.dtype(np.int8),
    "i1": np.dtype(np.bool_),
    "index": np.dtype(np.int64),
    "ui64": np.dtype(np.uint64),
    "ui32": np.dtype(np.uint32),
    "ui16": np.dtype(np.uint16),
    "ui8": np.dtype(np.uint8),
    "complex<f32>": np.dtype(np.complex64),
    "complex<f64>": np.dtype(np.complex128),
})


class UnsupportedType(ValueError):
    """An argument or result type the target cannot feed or read."""


@dataclass(frozen=True)
class TypeSpec:
    """A function argument or result: ``tensor``, ``memref`` or ``scalar``."""

    kind: str
    element: str
    shape: tuple[int | None, ...] = ()  # None: a dynamic dimension
    size: int | None = None  # a dimension argument: always this value (worker/lowering/shlo/refine.py)

    @property
    def dtype(self) -> np.dtype:
        try:
            return DTYPES[self.element]
        except KeyError:
            raise UnsupportedType(f"element type {self.element} cannot be fed on this target") from None

    @property
    def dims(self) -> str:
        """The shape as reports write it: ``4x?``; ``0-d`` for a 0-d tensor, ``scalar`` for a scalar."""
        if self.kind == "scalar":
            return "scalar"
        return "x".join("?" if d is None else str(d) for d in self.shape) or "0-d"

    def concrete_shape(self, dynamic_dim: int) -> tuple[int, ...]:
        return tuple(dynamic_dim if d is None else d for d in self.shape)

    def __str__(self) -> str:
        if self.kind == "scalar":
            return self.element
        dims = "".join(f"{'?' if d is None else d}x" for d in self.shape)
        text = f"{self.kind}<{dims}{self.element}>"
        return text if self.size is None else f"{text} = {self.size} (dimension size)"


def _fits(specs: list[TypeSpec], dynamic_dim: int) -> None:
    """MemoryError, saying how much, when the inputs cannot be made within this process's
    address-space limit (the sandbox's ``--mlir-memory-limit``) or the machine's memory;
    making them takes twice their size (values are drawn in 64 bits)."""
    import os
    import resource

    need = sum(int(np.prod(s.concrete_shape(dynamic_dim), dtype=np.int64)) * max(8, s.dtype.itemsize)
               for s in specs)
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    have = memory if limit == resource.RLIM_INFINITY else min(limit, memory)
    if need > have:
        raise MemoryError(f"inputs need {need / 2**30:.1f} GiB, more than the memory limit ({have / 2**30:.1f} GiB)")


def make_inputs(specs: list[TypeSpec], seed: int, dynamic_dim: int,
                input_range: tuple[float, float] | None = None) -> list[np.ndarray]:
    """Seeded values for each argument: floats (and complex parts) normal, ints small, i1 bool;
    with ``input_range`` (a ``// mlir-snippets: inputs=`` line), floats and complex parts
    uniform in [low, high) and ints the integers in it (unsigned ones from 0).

    A dimension argument (``size``) gets its size. Scalars are returned as 0-d arrays.
    The same seed gives the same values on every machine and every xdist worker.
    """
    _fits(specs, dynamic_dim)
    rng = np.random.default_rng(seed)
    values = []
    for spec in specs:
        dtype = spec.dtype
        shape = spec.concrete_shape(dynamic_dim)
        if spec.size is not None:
            values.append(np.full(shape, spec.size, dtype=dtype))
            continue
        if dtype.kind == "f" or spec.element == "bf16":
            data = _reals(rng, shape, input_range).astype(dtype)
        elif dtype.kind == "c":
            data = (_reals(rng, shape, input_range) + 1j * _reals(rng, shape, input_range)).astype(dtype)
        elif dtype.kind == "b":
            data = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            low, high = _integers(input_range, dtype)
            data = rng.integers(low, high, shape).astype(dtype)
        values.append(np.array(data, dtype=dtype, order="C"))  # keeps 0-d arrays 0-d
    return values


def _reals(rng: np.random.Generator, shape: tuple[int, ...], input_range: tuple[float, float] | None) -> np.ndarray:
    """Normal values, else uniform ones in ``input_range``."""
    if input_range is None:
        return rng.standard_normal(shape)
    return rng.uniform(input_range[0], input_range[1], shape)


def _integers(input_range: tuple[float, float] | None, dtype: np.dtype) -> tuple[int, int]:
    """[low, high) of the integers drawn: small ones by default, else those in ``input_range``
    (at least one value; unsigned from 0)."""
    if input_range is None:
        return (0, 10) if dtype.kind == "u" else (-8, 9)
    low = max(int(np.ceil(input_range[0])), 0 if dtype.kind == "u" else int(np.iinfo(dtype).min))
    high = min(int(np.ceil(input_range[1])), int(np.iinfo(dtype).max) + 1)
    return low, max(high, low + 1)
