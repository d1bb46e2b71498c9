"""The run-time side of JAX's LAPACK custom calls (``lapack.py``): each call's callee,
resolved by the JIT to a Python callback that computes it with scipy's LAPACK.

The callee's name holds the routine, the batch dimensions, the call's attributes and the
operand and result types (``__mlir_snippets_lapack__spotrf__b0__uL__4x4xf32__4x4xf32_i32``),
so ``attach`` finds them in the compiled IR and builds each callback from its name alone.
Matrices are handed over as the logical (row-major) arrays JAX's custom calls take; a
result is what JAX's kernel writes (LAPACK's ``ipiv`` 1-based, ``info`` per matrix).
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.worker.lowering import jit

PREFIX = "__mlir_snippets_lapack__"
_TARGET = re.compile(r"^lapack_([sdcz])(\w+?)_ffi$")
_ELEMENTS = {"f32": "f32", "f64": "f64", "complex<f32>": "c64", "complex<f64>": "c128", "i32": "i32"}
_SPELLED = {v: k for k, v in _ELEMENTS.items()}
_CIFACE = "_mlir_ciface_"
_callbacks: dict[str, Any] = {}  # by callee name, alive as long as the worker: the JIT's code calls them


def parse_target(target: str) -> tuple[str, str] | None:
    """``lapack_spotrf_ffi`` as (``s``, ``potrf``); None for another call target."""
    m = _TARGET.match(target)
    return (m.group(1), m.group(2)) if m else None


def _short(tensor_type: str) -> str:
    m = re.fullmatch(r"tensor<(?:([\dx]+)x)?(f32|f64|i32|complex<f(?:32|64)>)>", tensor_type)
    if not m:
        raise ValueError(f"no LAPACK call takes {tensor_type}")
    return f"{m.group(1)}x{_ELEMENTS[m.group(2)]}" if m.group(1) else _ELEMENTS[m.group(2)]


def _spec(short: str) -> TypeSpec:
    *dims, element = short.split("x")
    return TypeSpec("tensor", _SPELLED[element], tuple(int(d) for d in dims))


def callee_name(target: str, batch: int, attrs: dict[str, str], ins: list[str], outs: list[str]) -> str:
    """The name of the callee that computes custom call ``target`` (see the module's docstring)."""
    letters = "".join(f"{key[0]}{value}" for key, value in sorted(attrs.items())) or "x"
    return PREFIX + "__".join([target[len("lapack_"):-len("_ffi")], f"b{batch}", letters,
                               "_".join(map(_short, ins)), "_".join(map(_short, outs))])


def attach(engine: Any, module: Any) -> None:
    """A callback for every LAPACK callee ``module`` (the LLVM dialect) declares, before the
    engine's first lookup."""
    symbols = (str(op.attributes["sym_name"]).strip('"') for op in module.body.operations
               if "sym_name" in op.attributes)
    for name in sorted({s[len(_CIFACE):] for s in symbols if s.startswith(_CIFACE + PREFIX)}):
        if name not in _callbacks:
            _callbacks[name] = _callback(name)
        engine.register_runtime(name, _callbacks[name])


def _callback(name: str) -> Any:
    routine, batch, letters, ins, outs = name[len(PREFIX):].split("__")
    attrs = {letters[i]: letters[i + 1] for i in range(0, len(letters) - 1, 2)}
    in_specs, out_specs = [_spec(s) for s in ins.split("_")], [_spec(s) for s in outs.split("_")]
    specs = [*in_specs, *out_specs]
    compute = ROUTINES[routine[1:]]
    batch_dims = int(batch[1:])

    def call(*descriptors: Any) -> None:
        values = [jit.read_memref(d.contents, s) for d, s in zip(descriptors, in_specs)]
        results = _batched(compute, routine[0], attrs, batch_dims, values, out_specs)
        for descriptor, spec, value in zip(descriptors[len(in_specs):], out_specs, results):
            _write(descriptor.contents, spec, value)

    return ctypes.CFUNCTYPE(None, *[ctypes.POINTER(jit.descriptor_type(s)) for s in specs])(call)


def _shape(spec: TypeSpec) -> tuple[int, ...]:
    return tuple(int(d or 0) for d in spec.shape)  # static: callee names hold static shapes only


def _write(descriptor: Any, spec: TypeSpec, value: np.ndarray) -> None:
    rank = len(spec.shape)
    strides = tuple(descriptor.strides[i] for i in range(rank)) if rank else ()
    base = ctypes.cast(descriptor.aligned, ctypes.c_void_p).value or 0
    view = jit.strided_view(base + descriptor.offset * spec.dtype.itemsize, spec.dtype, _shape(spec), strides)
    view[...] = np.asarray(value).astype(spec.dtype)


def _batched(compute: Callable[..., list[Any]], kind: str, attrs: dict[str, str], batch_dims: int,
             values: list[np.ndarray], out_specs: list[TypeSpec]) -> list[np.ndarray]:
    results = [np.zeros(_shape(s), s.dtype) for s in out_specs]
    for index in np.ndindex(*values[0].shape[:batch_dims]):
        for result, value in zip(results, compute(kind, attrs, *[v[index] for v in values])):
            result[index] = value
    return results


def _lapack(kind: str, name: str) -> Any:
    from scipy.linalg import lapack

    return getattr(lapack, kind + name)


def _potrf(kind: str, attrs: dict[str, str], a: np.ndarray) -> list[Any]:
    factor, info = _lapack(kind, "potrf")(a, lower=attrs.get("u", "L") == "L", clean=0)
    return [factor, info]


def _getrf(kind: str, attrs: dict[str, str], a: np.ndarray) -> list[Any]:
    lu, pivots, info = _lapack(kind, "getrf")(a)
    return [lu, pivots + 1, info]  # scipy gives LAPACK's pivots 0-based


def _geqrf(kind: str, attrs: dict[str, str], a: np.ndarray) -> list[Any]:
    qr, tau, _, _ = _lapack(kind, "geqrf")(a)
    return [qr, tau]


def _orgqr(kind: str, attrs: dict[str, str], a: np.ndarray, tau: np.ndarray) -> list[Any]:
    q, _, _ = _lapack(kind, "ungqr" if kind in "cz" else "orgqr")(a, tau)
    return [q]


def _gesdd(kind: str, attrs: dict[str, str], a: np.ndarray) -> list[Any]:
    mode = attrs.get("m", "A")
    u, s, vt, info = _lapack(kind, "gesdd")(a, compute_uv=int(mode != "N"), full_matrices=int(mode == "A"))
    if mode == "N":
        return [a, s, 0, 0, info]
    return [a, s, u, vt, info]


def _syevd(kind: str, attrs: dict[str, str], a: np.ndarray) -> list[Any]:
    w, v, info = _lapack(kind, "heevd" if kind in "cz" else "syevd")(
        a, compute_v=int(attrs.get("m", "V") == "V"), lower=int(attrs.get("u", "L") == "L"))
    return [v if attrs.get("m", "V") == "V" else a, w, info]


def _trsm(kind: str, attrs: dict[str, str], a: np.ndarray, b: np.ndarray) -> list[Any]:
    from scipy.linalg import blas

    x = getattr(blas, kind + "trsm")(1.0, a, b, side=int(attrs.get("s", "L") == "R"),
                                      lower=int(attrs.get("u", "L") == "L"), trans_a="NTC".index(attrs.get("t", "N")),
                                      diag=int(attrs.get("d", "N") == "U"))
    return [x]


ROUTINES: dict[str, Callable[..., list[Any]]] = {
    "potrf": _potrf, "getrf": _getrf, "geqrf": _geqrf, "orgqr": _orgqr, "ungqr": _orgqr, "gesdd": _gesdd,
    "syevd": _syevd, "heevd": _syevd, "trsm": _trsm,
}
