"""Running cuda-target code: the host side's runtime, over the CUDA driver API.

MLIR lowers ``gpu.launch_func`` and friends to calls of ``mgpu*`` functions (MLIR's
CUDA runtime wrappers), and the kernels' modules are loaded by global constructors.
The ``mlir`` wheel ships no ``libmlir_cuda_runtime.so``, so ``HostRuntime`` provides
those functions itself (ctypes callbacks registered with the ExecutionEngine) over a
``Driver``: the CUDA driver library (``libcuda.so.1``) through ctypes. It also takes
the JIT's ``malloc`` and ``free``: every buffer the compiled host code allocates is CUDA
managed memory, which kernels and the host both reach (kernels dereference the same
pointers the host code passes them), and so are the inputs ``managed_copy`` makes.

Errors from the driver inside a callback cannot unwind through the JIT's frames: the
first one is kept and raised by ``check()`` once the call returns.
"""

from __future__ import annotations

import ctypes
from typing import Any, Protocol

import numpy as np

_P = ctypes.c_void_p
_I64 = ctypes.c_int64


class DriverError(RuntimeError):
    pass


class DriverAPI(Protocol):
    """What the runtime needs from a driver (``Driver``, or a test double)."""

    def open(self, device_id: int) -> str: ...
    def close(self) -> None: ...
    def load_module(self, image: int) -> int: ...
    def unload_module(self, module: int) -> None: ...
    def function(self, module: int, name: bytes) -> int: ...
    def launch(self, function: int, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int,
               stream: int, params: int, extra: int) -> None: ...
    def stream_create(self) -> int: ...
    def stream_synchronize(self, stream: int) -> None: ...
    def stream_destroy(self, stream: int) -> None: ...
    def alloc_managed(self, size: int) -> int: ...
    def free(self, pointer: int) -> None: ...
    def copy(self, dst: int, src: int, size: int) -> None: ...
    def synchronize(self) -> None: ...
    def reset(self) -> None: ...


class Driver:
    """The CUDA driver API, the calls this runtime makes, through ctypes."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.context = _P()
        self.device = ctypes.c_int(0)

    def _call(self, name: str, *args: Any) -> None:
        result = getattr(self.lib, name)(*args)
        if result != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorName(result, ctypes.byref(text))
            raise DriverError(f"{name} failed with {(text.value or b'error %d' % result).decode()}")

    def open(self, device_id: int) -> str:
        self._call("cuInit", 0)
        self._call("cuDeviceGet", ctypes.byref(self.device), device_id)
        self._call("cuDevicePrimaryCtxRetain", ctypes.byref(self.context), self.device)
        self._call("cuCtxSetCurrent", self.context)
        name = ctypes.create_string_buffer(256)
        self._call("cuDeviceGetName", name, 256, self.device)
        return f"{name.value.decode()} ({self.chip(device_id)})"

    def chip(self, device_id: int = 0) -> str:
        """The device's chip name (``sm_90`` for compute capability 9.0)."""
        self._call("cuInit", 0)
        device, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        self._call("cuDeviceGet", ctypes.byref(device), device_id)
        self._call("cuDeviceGetAttribute", ctypes.byref(major), 75, device)  # compute capability major
        self._call("cuDeviceGetAttribute", ctypes.byref(minor), 76, device)
        return f"sm_{major.value}{minor.value}"

    def close(self) -> None:
        if self.context.value:
            self._call("cuDevicePrimaryCtxRelease", self.device)
            self.context = _P()

    def reset(self) -> None:
        """After a kernel fault the context is unusable: start the device afresh."""
        self._call("cuDevicePrimaryCtxReset", self.device)
        self._call("cuDevicePrimaryCtxRetain", ctypes.byref(self.context), self.device)
        self._call("cuCtxSetCurrent", self.context)

    def load_module(self, image: int) -> int:
        module = _P()
        self._call("cuModuleLoadData", ctypes.byref(module), _P(image))
        return module.value or 0

    def unload_module(self, module: int) -> None:
        self._call("cuModuleUnload", _P(module))

    def function(self, module: int, name: bytes) -> int:
        function = _P()
        self._call("cuModuleGetFunction", ctypes.byref(function), _P(module), ctypes.c_char_p(name))
        return function.value or 0

    def launch(self, function: int, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int,
               stream: int, params: int, extra: int) -> None:
        self._call("cuLaunchKernel", _P(function), *map(ctypes.c_uint, grid), *map(ctypes.c_uint, block),
                   ctypes.c_uint(shared), _P(stream), _P(params), _P(extra))

    def stream_create(self) -> int:
        stream = _P()
        self._call("cuStreamCreate", ctypes.byref(stream), 1)  # CU_STREAM_NON_BLOCKING
        return stream.value or 0

    def stream_synchronize(self, stream: int) -> None:
        self._call("cuStreamSynchronize", _P(stream))

    def stream_destroy(self, stream: int) -> None:
        self._call("cuStreamDestroy_v2", _P(stream))

    def alloc_managed(self, size: int) -> int:
        pointer = ctypes.c_uint64()
        self._call("cuMemAllocManaged", ctypes.byref(pointer), ctypes.c_size_t(max(size, 1)), 1)  # ATTACH_GLOBAL
        return pointer.value

    def free(self, pointer: int) -> None:
        self._call("cuMemFree_v2", ctypes.c_uint64(pointer))

    def copy(self, dst: int, src: int, size: int) -> None:
        self._call("cuMemcpy", ctypes.c_uint64(dst), ctypes.c_uint64(src), ctypes.c_size_t(size))

    def synchronize(self) -> None:
        self._call("cuCtxSynchronize")


# the C signatures of the functions lowered host code calls (LLVM 22's GPU to LLVM lowering)
_SIGNATURES: dict[str, tuple[Any, ...]] = {
    "mgpuModuleLoadJIT": (_P, _P, ctypes.c_int32),  # PTX ("isa" format)
    "mgpuModuleLoad": (_P, _P, _I64),  # a cubin or fatbin
    "mgpuModuleUnload": (None, _P),
    "mgpuModuleGetFunction": (_P, _P, _P),
    "mgpuStreamCreate": (_P,),
    "mgpuStreamSynchronize": (None, _P),
    "mgpuStreamDestroy": (None, _P),
    "mgpuLaunchKernel": (None, _P, _I64, _I64, _I64, _I64, _I64, _I64, ctypes.c_int32, _P, _P, _P, _I64),
    "mgpuMemAlloc": (_P, ctypes.c_uint64, _P, ctypes.c_bool),
    "mgpuMemFree": (None, _P, _P),
    "mgpuMemcpy": (None, _P, _P, ctypes.c_uint64, _P),
    "mgpuSetDefaultDevice": (None, ctypes.c_int32),
    "malloc": (_P, ctypes.c_uint64),
    "free": (None, _P),
}


class HostRuntime:
    """The ``mgpu*`` functions, ``malloc`` and ``free`` for JIT-compiled host code."""

    def __init__(self, driver: DriverAPI) -> None:
        self.driver = driver
        self.allocations: set[int] = set()
        self.launches = 0
        self.error: Exception | None = None
        self._callbacks: dict[str, Any] = {}
        for name, (restype, *argtypes) in _SIGNATURES.items():
            method = getattr(self, "_" + name)
            self._callbacks[name] = ctypes.CFUNCTYPE(restype, *argtypes)(self._guarded(method))

    def register(self, engine: Any) -> None:
        for name, callback in self._callbacks.items():
            engine.raw_register_runtime(name, ctypes.cast(callback, _P))

    def check(self) -> None:
        """Raise the first driver error a callback met since the last check."""
        error, self.error = self.error, None
        if error is not None:
            raise error

    def managed_copy(self, value: np.ndarray) -> np.ndarray:
        """``value`` copied into managed memory (freed by ``release``)."""
        value = np.ascontiguousarray(value)
        pointer = self._malloc(value.nbytes)
        raw = np.ctypeslib.as_array((ctypes.c_uint8 * max(value.nbytes, 1)).from_address(pointer))
        copy: np.ndarray = raw[:value.nbytes].view(value.dtype).reshape(value.shape)
        copy[...] = value
        return copy

    def release(self, pointer: int) -> None:
        self._free(pointer)

    def release_all(self) -> None:
        for pointer in list(self.allocations):
            self._free(pointer)

    def _guarded(self, method: Any) -> Any:
        def call(*args: Any) -> Any:
            try:
                return method(*args)
            except Exception as error:  # never unwind through the JIT's frames
                if self.error is None:
                    self.error = error
                return None
        return call

    # -- the functions the host code calls
    def _mgpuModuleLoadJIT(self, data: int, opt_level: int) -> int:
        return self.driver.load_module(data)

    def _mgpuModuleLoad(self, data: int, size: int) -> int:
        return self.driver.load_module(data)

    def _mgpuModuleUnload(self, module: int) -> None:
        try:  # at an engine's end (global destructors): after a reset the module is gone already
            self.driver.unload_module(module)
        except DriverError:
            pass

    def _mgpuModuleGetFunction(self, module: int, name: int) -> int:
        return self.driver.function(module, ctypes.string_at(name))

    def _mgpuStreamCreate(self) -> int:
        return self.driver.stream_create()

    def _mgpuStreamSynchronize(self, stream: int) -> None:
        self.driver.stream_synchronize(stream)

    def _mgpuStreamDestroy(self, stream: int) -> None:
        self.driver.stream_destroy(stream)

    def _mgpuLaunchKernel(self, function: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int,
                          stream: int, params: int, extra: int, count: int) -> None:
        self.launches += 1
        self.driver.launch(function, (gx, gy, gz), (bx, by, bz), shared, stream or 0, params or 0, extra or 0)

    def _mgpuMemAlloc(self, size: int, stream: int, host_shared: bool) -> int:
        return self._malloc(size)

    def _mgpuMemFree(self, pointer: int, stream: int) -> None:
        self._free(pointer)

    def _mgpuMemcpy(self, dst: int, src: int, size: int, stream: int) -> None:
        self.driver.copy(dst, src, size)

    def _mgpuSetDefaultDevice(self, device: int) -> None:
        pass  # the worker's device is the one --mlir-devices gave it

    def _malloc(self, size: int) -> int:
        pointer = self.driver.alloc_managed(size)
        self.allocations.add(pointer)
        return pointer

    def _free(self, pointer: int) -> None:
        if pointer in self.allocations:  # anything else was not ours to free
            self.allocations.discard(pointer)
            self.driver.free(pointer)
