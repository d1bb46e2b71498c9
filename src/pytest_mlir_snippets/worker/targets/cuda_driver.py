"""The CUDA driver through cuda-python (``cuda.bindings.driver``): device discovery, the
device's lifecycle (open, probe, reset after a fault, close), its chip, and the managed
memory inputs live in. Failures carry CUDA's own error names.

JIT-compiled host code does not come here: its ``mgpu*`` calls go to upstream MLIR's
``libmlir_cuda_runtime.so``, which works in the same primary context (``cuda_host``).
The module is imported lazily (``_driver``), so tests can put a double of
``cuda.bindings.driver`` first on the path.
"""

from __future__ import annotations

import ctypes
import importlib
from typing import Any

INSTALL_HINT = "cuda-python is not installed (pip install 'pytest-mlir-snippets[cuda]')"


class DriverError(RuntimeError):
    pass


def _driver() -> Any:
    return importlib.import_module("cuda.bindings.driver")


def error_name(status: Any) -> str:
    """CUDA's name for a ``CUresult`` (``CUDA_ERROR_ILLEGAL_ADDRESS``)."""
    try:
        found, name = _driver().cuGetErrorName(status)
        if int(found) == 0 and name:
            return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:
        pass
    return f"CUresult {int(status)}"


def call(name: str, *args: Any) -> Any:
    """``cuda.bindings.driver.<name>(*args)``: its value (None, one, or a tuple), or a
    DriverError "<name> failed with <CUDA's error name>"."""
    status, *values = getattr(_driver(), name)(*args)
    if int(status) != 0:
        raise DriverError(f"{name} failed with {error_name(status)}")
    return None if not values else values[0] if len(values) == 1 else tuple(values)


def devices() -> tuple[int, str]:
    """(number of CUDA devices, why none)."""
    try:
        _driver()
    except ImportError:
        return 0, INSTALL_HINT
    try:
        call("cuInit", 0)
        count = int(call("cuDeviceGetCount"))
    except DriverError as error:
        return 0, str(error)
    except Exception as error:  # no libcuda.so.1: cuda-python says so in its own words
        return 0, f"the CUDA driver (libcuda.so.1) cannot be loaded: {error}"
    return count, "" if count else "the driver reports no device"


def chip(device_id: int = 0) -> str:
    """The device's chip name: ``sm_90`` for compute capability 9.0."""
    attribute = _driver().CUdevice_attribute
    call("cuInit", 0)
    device = call("cuDeviceGet", device_id)
    major = call("cuDeviceGetAttribute", attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)
    minor = call("cuDeviceGetAttribute", attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)
    return f"sm_{int(major)}{int(minor)}"


class Device:
    """One device's primary context (the one upstream's runtime wrappers use too) and
    the managed buffers handed out for inputs."""

    def __init__(self) -> None:
        self.device: Any = None
        self.context: Any = None
        self.buffers: set[int] = set()

    def open(self, device_id: int) -> str:
        call("cuInit", 0)
        self.device = call("cuDeviceGet", device_id)
        self._start()
        name = call("cuDeviceGetName", 256, self.device)
        text = (name.split(b"\0")[0].decode() if isinstance(name, bytes) else str(name)).strip()
        return f"{text} ({chip(device_id)})"

    def _start(self) -> None:
        self.context = call("cuDevicePrimaryCtxRetain", self.device)
        call("cuCtxSetCurrent", self.context)

    def probe(self) -> None:
        """A round trip through the device: a managed word set by the driver and read back
        (after a reopen or a reset, a broken context fails here, not in the next item)."""
        self.synchronize()
        pointer = self.alloc_managed(4)
        try:
            call("cuMemsetD32", pointer, 0x5EED, 1)
            self.synchronize()
            value = ctypes.c_uint32.from_address(pointer).value
            if value != 0x5EED:
                raise DriverError(f"the device probe read {value:#x} back, not 0x5eed")
        finally:
            self.free(pointer)

    def synchronize(self) -> None:
        call("cuCtxSynchronize")

    def reset(self) -> None:
        """After a kernel fault the context is unusable: reset the primary context (its
        memory and modules go with it) and start it afresh."""
        self.buffers.clear()
        call("cuDevicePrimaryCtxReset", self.device)
        self._start()

    def close(self) -> None:
        if self.context is not None:
            for pointer in list(self.buffers):
                self.free(pointer)
            call("cuDevicePrimaryCtxRelease", self.device)
            self.context = None

    def alloc_managed(self, size: int) -> int:
        """Managed memory: the host writes inputs into it, kernels read the same pointers."""
        flags = _driver().CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL
        pointer = int(call("cuMemAllocManaged", max(size, 1), flags))
        self.buffers.add(pointer)
        return pointer

    def free(self, pointer: int) -> None:
        """Free managed memory: an input buffer, or a result the host code allocated
        (``mgpuMemAlloc`` with host-shared memory)."""
        self.buffers.discard(pointer)
        call("cuMemFree", pointer)
