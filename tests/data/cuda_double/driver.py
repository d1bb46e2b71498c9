"""A test double of the CUDA driver for ``cuda_runtime.HostRuntime``: memory is real
(calloc), modules, functions and launches are recorded, kernels do not run."""

from __future__ import annotations

import ctypes
from typing import Any

from pytest_mlir_snippets.worker.targets.cuda_runtime import DriverError

_LIBC = ctypes.CDLL(None)
_LIBC.calloc.restype = ctypes.c_void_p
_LIBC.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
_LIBC.free.argtypes = [ctypes.c_void_p]


class RecordingDriver:
    def __init__(self, fail_launch: str = "") -> None:
        self.log: list[tuple[Any, ...]] = []
        self.opened = False
        self.modules: dict[int, str] = {}
        self.live: set[int] = set()
        self.fail_launch = fail_launch

    def open(self, device_id: int) -> str:
        self.opened = True
        self.log.append(("open", device_id))
        return "recording double"

    def close(self) -> None:
        self.opened = False

    def reset(self) -> None:
        self.log.append(("reset",))
        self.modules.clear()  # a reset context has no modules

    def load_module(self, image: int) -> int:
        if not self.opened:
            raise DriverError("cuModuleLoadData failed with CUDA_ERROR_INVALID_CONTEXT")
        handle = 1000 + sum(1 for e in self.log if e[0] == "load")
        self.modules[handle] = ctypes.string_at(image).decode()
        self.log.append(("load", handle))
        return handle

    def unload_module(self, module: int) -> None:
        if module not in self.modules:
            raise DriverError("cuModuleUnload failed with CUDA_ERROR_INVALID_HANDLE")
        self.log.append(("unload", module))

    def function(self, module: int, name: bytes) -> int:
        self.log.append(("function", module, name.decode()))
        return module * 10

    def launch(self, function: int, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int,
               stream: int, params: int, extra: int) -> None:
        if self.fail_launch:
            raise DriverError(f"cuLaunchKernel failed with {self.fail_launch}")
        self.log.append(("launch", function, grid, block, shared))

    def stream_create(self) -> int:
        return 7

    def stream_synchronize(self, stream: int) -> None:
        pass

    def stream_destroy(self, stream: int) -> None:
        pass

    def alloc_managed(self, size: int) -> int:
        pointer = _LIBC.calloc(1, max(size, 1))
        self.live.add(pointer)
        return int(pointer)

    def free(self, pointer: int) -> None:
        self.live.remove(pointer)
        _LIBC.free(pointer)

    def copy(self, dst: int, src: int, size: int) -> None:
        ctypes.memmove(dst, src, size)

    def synchronize(self) -> None:
        pass
