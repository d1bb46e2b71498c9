"""Calling a function compiled by MLIR's ExecutionEngine with numpy arrays.

The calling convention is the one ``llvm.emit_c_interface`` gives: memrefs are
passed as pointers to descriptors; a function with several results, or with a
memref result, writes them into a struct passed first; a single scalar result
comes back through the last pointer.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.worker import benchstats

_SCALAR_CTYPES: dict[str, Any] = {
    "f64": ctypes.c_double, "f32": ctypes.c_float, "f16": ctypes.c_uint16, "bf16": ctypes.c_uint16,
    "i64": ctypes.c_int64, "index": ctypes.c_int64, "i32": ctypes.c_int32, "i16": ctypes.c_int16,
    "i8": ctypes.c_int8, "i1": ctypes.c_bool, "ui64": ctypes.c_uint64, "ui32": ctypes.c_uint32,
    "ui16": ctypes.c_uint16, "ui8": ctypes.c_uint8,
}


def descriptor_type(spec: TypeSpec) -> Any:
    from mlir.runtime import np_to_memref  # not at import: it imports ml_dtypes (see golden/inputs.py)

    ctype = np_to_memref.as_ctype(spec.dtype)
    if not spec.shape:
        return np_to_memref.make_zero_d_memref_descriptor(ctype)
    return np_to_memref.make_nd_memref_descriptor(len(spec.shape), ctype)


def scalar_ctype(spec: TypeSpec) -> Any:
    return _SCALAR_CTYPES[spec.element]


def _slot_type(spec: TypeSpec) -> Any:
    return scalar_ctype(spec) if spec.kind == "scalar" else descriptor_type(spec)


def _scalar_arg(value: np.ndarray, spec: TypeSpec) -> Any:
    ctype = _SCALAR_CTYPES[spec.element]
    if spec.element in ("f16", "bf16"):
        return ctype(int(np.asarray(value).view(np.uint16)))
    return ctype(np.asarray(value).item())


def read_scalar(raw: Any, spec: TypeSpec) -> np.ndarray:
    value = raw.value if hasattr(raw, "value") else raw
    if spec.element in ("f16", "bf16"):
        return np.array(value, dtype=np.uint16).view(spec.dtype)
    return np.array(value, dtype=spec.dtype)


def strided_view(address: int, dtype: np.dtype, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """A writable numpy view of memory laid out as a memref (strides in elements)."""
    itemsize = dtype.itemsize
    if any(d == 0 for d in shape):
        return np.zeros(shape, dtype=dtype)
    lo = sum(min(0, (d - 1) * s) for d, s in zip(shape, strides))
    hi = sum(max(0, (d - 1) * s) for d, s in zip(shape, strides))
    raw = (ctypes.c_char * ((hi - lo + 1) * itemsize)).from_address(address + lo * itemsize)
    flat = np.frombuffer(memoryview(raw).cast("B"), dtype=dtype)
    return np.lib.stride_tricks.as_strided(flat[-lo:], shape, tuple(s * itemsize for s in strides))


def read_memref(desc: Any, spec: TypeSpec) -> np.ndarray:
    """Copy a (possibly strided) memref described by ``desc`` into a numpy array."""
    rank = len(spec.shape)
    shape = tuple(desc.shape[i] for i in range(rank)) if rank else ()
    strides = tuple(desc.strides[i] for i in range(rank)) if rank else ()
    base = ctypes.cast(desc.aligned, ctypes.c_void_p).value or 0
    address = base + desc.offset * spec.dtype.itemsize
    return np.array(strided_view(address, spec.dtype, shape, strides), copy=True)


GLOBAL_MARKER = 0xDEADBEEF
_LIBC = ctypes.CDLL(None)
_LIBC.free.argtypes = [ctypes.c_void_p]


def aligned_copy(value: np.ndarray, alignment: int = 64, offset: int = 0) -> np.ndarray:
    """A C-contiguous copy starting ``offset`` bytes past an ``alignment`` boundary:
    where numpy happens to put an array otherwise changes vector loads, and timings,
    from one process to the next."""
    value = np.asarray(value)
    raw = np.empty(value.nbytes + alignment + offset, dtype=np.uint8)
    start = -raw.ctypes.data % alignment + offset
    copy = raw[start:start + value.nbytes].view(value.dtype).reshape(value.shape)
    copy[...] = value
    return copy


class Call:
    """One call of ``name`` with ``inputs``, its arguments built once: ``run()`` may be
    repeated (for timing); ``outputs()`` reads what the last run produced."""

    def __init__(self, engine: Any, name: str, args: list[TypeSpec], results: list[TypeSpec],
                 inputs: list[np.ndarray], stack_shift: int | None = None) -> None:
        self.inputs, self.args, self.results = inputs, args, results
        self._keep: list[Any] = []  # descriptors must outlive the call
        call_args: list[Any] = []
        for value, spec in zip(inputs, args):
            if spec.kind == "scalar":
                slot = _scalar_arg(value, spec)
                self._keep.append(slot)
                call_args.append(ctypes.pointer(slot))
            else:
                from mlir.runtime import np_to_memref

                desc = np_to_memref.get_ranked_memref_descriptor(value)
                self._keep.append(desc)
                call_args.append(ctypes.pointer(ctypes.pointer(desc)))
        self._slots: list[Any] = []
        self._packed: Any = None  # several results: a struct, read field by field after the call
        if len(results) == 1 and results[0].kind == "scalar":
            out = _SCALAR_CTYPES[results[0].element]()
            self._slots = [out]
            call_args.append(ctypes.pointer(out))
        elif len(results) == 1:
            fields = [("r0", _slot_type(results[0]))]
            packed = type("Results", (ctypes.Structure,), {"_fields_": fields})()
            self._slots = [packed.r0]
            call_args.insert(0, ctypes.pointer(ctypes.pointer(packed.r0)))
            self._keep.append(packed)
        elif results:
            fields = [(f"r{i}", _slot_type(s)) for i, s in enumerate(results)]
            self._packed = type("Results", (ctypes.Structure,), {"_fields_": fields})()
            call_args.insert(0, ctypes.pointer(ctypes.pointer(self._packed)))
        self._engine = engine  # the code below is referred to by address only
        self._function = engine.lookup(name)  # the C interface wrapper, called without Python packing
        self._packed_args = (ctypes.c_void_p * len(call_args))(
            *[ctypes.cast(a, ctypes.c_void_p) for a in call_args])
        if stack_shift is not None:  # the same call, through ``shifted_call`` with the stack set by the shift
            entry = [ctypes.c_void_p(ctypes.cast(self._function, ctypes.c_void_p).value),
                     ctypes.c_void_p(ctypes.addressof(self._packed_args)), ctypes.c_int64(stack_shift)]
            self._keep.append((entry, self._packed_args))
            self._function = shifted_call()
            self._packed_args = (ctypes.c_void_p * 3)(*[ctypes.addressof(a) for a in entry])

    def run(self) -> None:
        self._function(self._packed_args)

    def _result_slots(self) -> list[Any]:
        if self._packed is not None:  # scalar fields read as Python values: read them now
            return [getattr(self._packed, f"r{i}") for i in range(len(self.results))]
        return self._slots

    def release(self, free: Callable[[int], None] | None = None) -> None:
        """Free the buffers the last run returned, which its caller owns. Not those
        that alias an input, and not globals: MLIR's lowering marks a global's
        descriptor with the ``allocated`` pointer 0xdeadbeef. ``free``: how (libc's)."""
        inputs = {ctypes.cast(d.allocated, ctypes.c_void_p).value for d in self._keep
                  if hasattr(d, "allocated")}
        freed: set[int] = set()
        for slot, spec in zip(self._result_slots(), self.results):
            if spec.kind == "scalar":
                continue
            pointer = ctypes.cast(slot.allocated, ctypes.c_void_p).value
            if pointer and pointer != GLOBAL_MARKER and pointer not in inputs and pointer not in freed:
                if free is None:
                    _LIBC.free(ctypes.c_void_p(pointer))
                else:
                    free(pointer)
                freed.add(pointer)

    def outputs(self) -> list[np.ndarray]:
        if not self.results:  # written in place
            return [np.array(v, copy=True) for v, s in zip(self.inputs, self.args) if s.kind == "memref"]
        return [read_scalar(slot, spec) if spec.kind == "scalar" else read_memref(slot, spec)
                for slot, spec in zip(self._result_slots(), self.results)]


class Placements:
    """Calls of one function in PLACES memory layouts, taking turns in blocks of BLOCK
    calls (caches stay warm within a block): copies of its inputs at an offset within a
    page (``OFFSETS``), and the call made with the stack at a place within a page
    (``SHIFTS``), whatever the caller's stack. Where buffers sit relative to each other
    (cache sets, 4K aliasing) and where the stack sits (the kernel's vector spills against
    64-byte lines and its data) change a kernel's time, by up to 1.3x for some, and a
    process keeps the stack position its environment's size gives it. The figure over
    several layouts is the code's, not one layout's. (The buffers the function itself
    allocates still land where malloc puts them.)"""

    PLACES, BLOCK = 8, benchstats.BLOCK  # the blocks whose probes benchstats judges together
    OFFSETS = tuple(k * 576 % 4096 for k in range(PLACES))  # input offsets within a page: every 64-byte line
    SHIFTS = tuple(k * 592 % 4096 for k in range(PLACES))  # stack: every 16-byte phase of 64, twice

    def __init__(self, engine: Any, name: str, args: list[TypeSpec], results: list[TypeSpec],
                 inputs: list[np.ndarray]) -> None:
        self.calls = [Call(engine, name, args, results, [aligned_copy(v, 4096, offset) for v in inputs], shift)
                      for offset, shift in zip(self.OFFSETS, self.SHIFTS)]
        self.count = 0

    def _current(self) -> Call:
        return self.calls[self.count // self.BLOCK % self.PLACES]

    def run(self) -> None:
        self._current().run()

    def release(self) -> None:
        self._current().release()
        self.count += 1

    def restart(self) -> None:
        """After the warm-up (in the first layout): one call in each other layout, and
        the first timed call is the first of layout 0's block, as benchstats counts."""
        for call in self.calls[1:]:
            call.run()
            call.release()
        self.count = 0


# ``@shifted_call(f, args, n)``: ``f(args)`` (a packed C interface wrapper) called with the
# stack at a place within a page set by ``n`` alone, not by the caller's stack: a frame
# aligned to 4096 bytes, then ``64 + n`` bytes below it in two steps (the multiple of 64,
# realigned to 64, then the rest, rounded to 16 by the stack: the phase within 64 bytes).
# Each gap is at least 64 bytes, so that the volatile accesses that keep them write
# their own memory; the load after the call keeps it out of tail position.
_SHIFTED_CALL = """
llvm.func @shifted_call(%f: !llvm.ptr, %args: !llvm.ptr, %n: i64) {
  %lines = llvm.mlir.constant(-64 : i64) : i64
  %rest = llvm.mlir.constant(63 : i64) : i64
  %line = llvm.mlir.constant(64 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %zero = llvm.mlir.constant(0 : i8) : i8
  %base = llvm.alloca %one x i8 {alignment = 4096 : i64} : (i64) -> !llvm.ptr
  %whole = llvm.and %n, %lines : i64
  %page = llvm.add %whole, %line : i64
  %part = llvm.and %n, %rest : i64
  %phase = llvm.add %part, %line : i64
  %aligned = llvm.alloca %page x i8 {alignment = 64 : i64} : (i64) -> !llvm.ptr
  %below = llvm.alloca %phase x i8 : (i64) -> !llvm.ptr
  llvm.store volatile %zero, %base : i8, !llvm.ptr
  llvm.store volatile %zero, %aligned : i8, !llvm.ptr
  llvm.store volatile %zero, %below : i8, !llvm.ptr
  llvm.call %f(%args) : !llvm.ptr, (!llvm.ptr) -> ()
  %kept = llvm.load volatile %below : !llvm.ptr -> i8
  llvm.return
}
"""
_shifter: list[Any] = []  # the engine, then its packed entry: compiled once per process


def shifted_call() -> Any:
    """``@shifted_call``'s packed entry: called with the addresses of its three arguments."""
    if not _shifter:
        from mlir import ir
        from mlir.execution_engine import ExecutionEngine

        with ir.Context(), ir.Location.unknown():
            engine = ExecutionEngine(ir.Module.parse(_SHIFTED_CALL), opt_level=3)
        _shifter.extend([engine, ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup("shifted_call"))])
    return _shifter[1]


def invoke(engine: Any, name: str, args: list[TypeSpec], results: list[TypeSpec],
           inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Call ``name`` with ``inputs``; return its results (or its memref arguments
    after the call, for a function that returns nothing)."""
    call = Call(engine, name, args, results, inputs)
    call.run()
    return call.outputs()
