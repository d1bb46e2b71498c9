"""A test double of ``cuda.bindings.driver``: the calls ``worker/targets/cuda_driver.py``
makes, with cuda-python's shapes (a ``CUresult`` first, then the values), over the
double of ``libcuda.so.1`` beside it (``libcuda.c``), which upstream's CUDA runtime
wrappers call too: one device, one log."""

from __future__ import annotations

import ctypes
import enum
from typing import Any

_LIB = ctypes.CDLL("libcuda.so.1")  # the double: LD_LIBRARY_PATH points at it


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_NO_DEVICE = 100
    CUDA_ERROR_ILLEGAL_ADDRESS = 700


class CUdevice_attribute(enum.IntEnum):
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


class CUmemAttach_flags(enum.IntEnum):
    CU_MEM_ATTACH_GLOBAL = 1


def _result(code: int) -> Any:
    try:
        return CUresult(code)
    except ValueError:
        return code


def _out(name: str, kind: Any, *args: Any) -> tuple[Any, Any]:
    value = kind()
    code = getattr(_LIB, name)(ctypes.byref(value), *args)
    return _result(code), value.value


def cuGetErrorName(error: Any) -> tuple[Any, bytes]:
    text = ctypes.c_char_p()
    code = _LIB.cuGetErrorName(int(error), ctypes.byref(text))
    return _result(code), text.value or b""


def cuInit(flags: int) -> tuple[Any]:
    return (_result(_LIB.cuInit(flags)),)


def cuDeviceGetCount() -> tuple[Any, int]:
    return _out("cuDeviceGetCount", ctypes.c_int)


def cuDeviceGet(ordinal: int) -> tuple[Any, int]:
    return _out("cuDeviceGet", ctypes.c_int, ordinal)


def cuDeviceGetName(length: int, device: int) -> tuple[Any, bytes]:
    name = ctypes.create_string_buffer(length)
    return _result(_LIB.cuDeviceGetName(name, length, device)), name.value


def cuDeviceGetAttribute(attribute: Any, device: int) -> tuple[Any, int]:
    return _out("cuDeviceGetAttribute", ctypes.c_int, int(attribute), device)


def cuDevicePrimaryCtxRetain(device: int) -> tuple[Any, int]:
    return _out("cuDevicePrimaryCtxRetain", ctypes.c_void_p, device)


def cuDevicePrimaryCtxRelease(device: int) -> tuple[Any]:
    return (_result(_LIB.cuDevicePrimaryCtxRelease_v2(device)),)


def cuDevicePrimaryCtxReset(device: int) -> tuple[Any]:
    return (_result(_LIB.cuDevicePrimaryCtxReset_v2(device)),)


def cuCtxSetCurrent(context: int) -> tuple[Any]:
    return (_result(_LIB.cuCtxSetCurrent(ctypes.c_void_p(context))),)


def cuCtxSynchronize() -> tuple[Any]:
    return (_result(_LIB.cuCtxSynchronize()),)


def cuMemAllocManaged(size: int, flags: Any) -> tuple[Any, int]:
    return _out("cuMemAllocManaged", ctypes.c_uint64, ctypes.c_size_t(size), int(flags))


def cuMemFree(pointer: int) -> tuple[Any]:
    return (_result(_LIB.cuMemFree_v2(ctypes.c_uint64(int(pointer)))),)


def cuMemsetD32(pointer: int, value: int, count: int) -> tuple[Any]:
    return (_result(_LIB.cuMemsetD32_v2(ctypes.c_uint64(int(pointer)), ctypes.c_uint(value),
                                        ctypes.c_size_t(count))),)
